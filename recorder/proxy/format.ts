/**
 * The recording's on-disk names and time records (see recorder/FORMAT.md). Shared by the proxy
 * that writes them, the reader in recorder/replay (which decodes records with readTimeRecord and
 * handles damage) and tests that read them back.
 */

/** A stream's direction: `client` = bytes the viewer sent, `server` = bytes the VNC server sent. */
export type Direction = 'client' | 'server';

/** Size of one time record. */
export const TIME_RECORD_BYTES = 16;

/** Name of the manifest file. */
export const MANIFEST_FILE = 'recording.json';

/** Format name in recording.json. */
export const FORMAT_NAME = 'vncua-recording';

/** Format version in recording.json. */
export const FORMAT_VERSION = 2;

/** `client.rfb.bin` for connection 0, `client.<k>.rfb.bin` for connection k ≥ 1 (likewise `.time.bin`, `server.`). */
export function streamFileName(direction: Direction, index: number, kind: 'rfb' | 'time'): string {
  return index === 0 ? `${direction}.${kind}.bin` : `${direction}.${index}.${kind}.bin`;
}

/** True for any file name `streamFileName` can produce. */
export function isStreamFileName(name: string): boolean {
  return /^(client|server)(\.[1-9]\d*)?\.(rfb|time)\.bin$/.test(name);
}

/**
 * How a time record's timestamp is stored, by recording: `f64-ms` (vncua version 2: IEEE-754 double,
 * epoch ms), `u64-us` (vncua version 1: integer epoch µs), `u64-ns` (uitask: integer epoch ns).
 */
export type TimeEncoding = 'f64-ms' | 'u64-us' | 'u64-ns';

/** The encoding vncua writes now (FORMAT_VERSION). */
export const TIME_ENCODING: TimeEncoding = 'f64-ms';

/**
 * Time record (16 bytes, big-endian), as written now (version 2):
 *   +-------------------------------+-------------------------------------------------+
 *   | F64 timestamp, epoch ms: the  | U64 cumulative length of the .rfb.bin after the |
 *   | exact double `now()` returned | chunk this record stands for                    |
 *   +-------------------------------+-------------------------------------------------+
 * Writes one record at `offset` of `out`; `end` must be an integer in 0..2^53.
 */
export function writeTimeRecord(out: Uint8Array, offset: number, timestampMs: number, end: number): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setFloat64(offset, timestampMs);
  view.setUint32(offset + 8, Math.floor(end / 2 ** 32));
  view.setUint32(offset + 12, end >>> 0);
}

/** One decoded time record. */
export interface TimeRecord {
  /** Timestamp, epoch ms (whatever the encoding on disk; an f64 one may be NaN, infinite or negative in a damaged file). */
  t: number;
  /** Cumulative byte length of the stream after the chunk. */
  end: number;
}

/** Big-endian u64 at `offset` as a number (exact below 2^53; epoch ns lose < 1 µs). */
function readU64(view: DataView, offset: number): number {
  return view.getUint32(offset) * 2 ** 32 + view.getUint32(offset + 4);
}

/** Decodes the record at `offset` of `view`, its timestamp converted to epoch ms. */
export function readTimeRecord(view: DataView, offset: number, encoding: TimeEncoding): TimeRecord {
  const t = encoding === 'f64-ms' ? view.getFloat64(offset) : readU64(view, offset) / (encoding === 'u64-us' ? 1000 : 1_000_000);
  return { t, end: readU64(view, offset + 8) };
}

/** Decodes a whole `.time.bin` (timestamps to epoch ms); `trailing` counts bytes of an incomplete last record (0 in a sound file). */
export function parseTimeIndex(bytes: Uint8Array, encoding: TimeEncoding = TIME_ENCODING): { records: TimeRecord[]; trailing: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Math.floor(bytes.byteLength / TIME_RECORD_BYTES);
  const records: TimeRecord[] = new Array(n);
  for (let i = 0; i < n; i++) records[i] = readTimeRecord(view, i * TIME_RECORD_BYTES, encoding);
  return { records, trailing: bytes.byteLength - n * TIME_RECORD_BYTES };
}

/** One connection in recording.json. */
export interface ManifestConnection {
  index: number;
  /** Epoch ms (shared clock) when the client connected. */
  opened_at: number;
  /** Epoch ms when both sides were closed and the files finished; null while open (or after a crash). */
  closed_at: number | null;
  /** Why the connection ended: `client closed`, `upstream closed`, `proxy closed`, or an error's text. */
  close_reason?: string;
  /** The VncuaError code when the connection ended because of an error (e.g. RECORDER_ERR_UPSTREAM_CONNECT). */
  error_code?: string;
  /** Set when a recording file of this connection could not be written (relaying went on; the files stop there). */
  write_error?: string;
  /** How the viewer reached the proxy. */
  client_transport: 'tcp' | 'ws';
  /** Bytes relayed so far (written when the connection closes). */
  bytes: { client: number; server: number };
}

/** The whole recording.json. */
export interface Manifest {
  format: typeof FORMAT_NAME;
  version: typeof FORMAT_VERSION;
  /** Unit of the .time.bin timestamps. */
  time_unit: 'ms';
  /** How they are stored: IEEE-754 double, big-endian. */
  time_encoding: 'f64';
  /** Epoch time from `now()` of harness/trace/clock.ts, the trace's clock. */
  clock: 'epoch';
  upstream: string;
  connections: ManifestConnection[];
}
