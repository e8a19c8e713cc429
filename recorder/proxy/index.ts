/** The recording proxy: startRecordingProxy() and the recording format's names and time records. */
export { startRecordingProxy, DEFAULT_START_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from './proxy.ts';
export type { RecordingProxy, RecordingProxyOptions } from './proxy.ts';
export type { WriteMode } from './stream-file.ts';
export {
  TIME_RECORD_BYTES,
  MANIFEST_FILE,
  FORMAT_NAME,
  FORMAT_VERSION,
  streamFileName,
  isStreamFileName,
  parseTimeIndex,
  writeTimeRecord,
  readTimeRecord,
  TIME_ENCODING,
} from './format.ts';
export type { Direction, Manifest, ManifestConnection, TimeEncoding, TimeRecord } from './format.ts';
