/** The desktop: launchDesktop() and the helpers around it. */
export { launchDesktop, startScriptPath } from './launch.ts';
export type { Desktop, DesktopExit, LaunchDesktopOptions, VncServerKind } from './launch.ts';
export { parseScreenSize, DEFAULT_SCREEN_SIZE, MIN_SCREEN_SIDE, MAX_SCREEN_SIDE } from './size.ts';
export type { ScreenSize } from './size.ts';
export { groupMembers, isAlive, procStat, stopGroup, taggedProcesses, waitGroupGone } from './procs.ts';
export type { ProcStat } from './procs.ts';
