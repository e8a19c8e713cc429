/**
 * Importing this module makes every Agent run record through the recording proxy (the Agent's
 * `record` option, on by default): `run()` starts a proxy in front of the desktop's VNC endpoint
 * and writes `<outputDir>/recording/` (recorder/FORMAT.md). The package root, the CLI and the eval
 * runner import it; `harness/` cannot, since `recorder/` builds on it.
 */
import { registerRecorder } from '../harness/agent/recording.ts';
import { startRecordingProxy, type RecordingProxyOptions } from './proxy/index.ts';

registerRecorder(async (o) => {
  const options: RecordingProxyOptions = { upstream: o.upstreamUrl, dir: o.dir };
  if (o.signal) options.signal = o.signal;
  if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
  return startRecordingProxy(options);
});
