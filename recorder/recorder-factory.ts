/**
 * The recording proxy as the Agent's recorder (its `recorder` option, a RecorderFactory): each run
 * starts a proxy in front of the desktop's VNC endpoint and writes `<outputDir>/recording/`
 * (recorder/FORMAT.md). No side effects: the package root's Agent makes it its `defaultRecorder`,
 * `vncua run` and the eval runner pass it in `ctx.agentOptions`; `harness/` cannot import it, since
 * `recorder/` builds on it.
 */
import type { RecorderFactory } from '../harness/agent/recording.ts';
import { startRecordingProxy, type RecordingProxyOptions } from './proxy/index.ts';

/** Record a run through the recording proxy. */
export const recordingProxyRecorder: RecorderFactory = async (o) => {
  const options: RecordingProxyOptions = { upstream: o.upstreamUrl, dir: o.dir };
  if (o.signal) options.signal = o.signal;
  if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
  return startRecordingProxy(options);
};
