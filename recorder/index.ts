/**
 * `vncua/recorder`: recording and its post-processing. `recordingProxyRecorder` is what an Agent's
 * `recorder` option takes to record its runs (importing this module records nothing by itself).
 */
export { recordingProxyRecorder } from './recorder-factory.ts';
export type { RecorderFactory, RecorderStartOptions, RecordingHandle } from '../harness/agent/recording.ts';
export { startRecordingProxy } from './proxy/index.ts';
export type { RecordingProxy, RecordingProxyOptions } from './proxy/index.ts';
export { processRun, processRoot } from './process/index.ts';
export type { ProcessRunOptions, ProcessRunResult, ProcessRootOptions, ProcessRootResult } from './process/index.ts';
export { writeStepReport } from './report/index.ts';
export { writeVideo } from './video/index.ts';
export type { WriteVideoOptions, VideoResult } from './video/index.ts';
