/** Desktop providers: local (launchDesktop), docker (the docker/ image), remote (given endpoints). */
export type { DesktopProblem, DesktopProvider, DesktopRequest, LeasedDesktop } from './types.ts';
export { localProvider, leaseLocal, type LocalProviderOptions } from './local.ts';
export { dockerProvider, dockerRunArgs, parseInspect, containerUrl, type DockerProviderOptions } from './docker.ts';
export { remoteProvider, loadEndpoints, parseEndpoints, type RemoteEndpoint } from './remote.ts';
