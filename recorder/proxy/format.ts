/**
 * The recording's on-disk names and time records (see recorder/FORMAT.md). Shared by the proxy
 * that writes them and by tests that read them back; the full reader lives in recorder/replay.
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
export const FORMAT_VERSION = 1;

/** `client.rfb.bin` for connection 0, `client.<k>.rfb.bin` for connection k ≥ 1 (likewise `.time.bin`, `server.`). */
export function streamFileName(direction: Direction, index: number, kind: 'rfb' | 'time'): string {
  return index === 0 ? `${direction}.${kind}.bin` : `${direction}.${index}.${kind}.bin`;
}

/** True for any file name `streamFileName` can produce. */
export function isStreamFileName(name: string): boolean {
  return /^(client|server)(\.[1-9]\d*)?\.(rfb|time)\.bin$/.test(name);
}

/** Epoch milliseconds (as `now()` gives them) to integer epoch microseconds. */
export function epochMsToUs(ms: number): number {
  return Math.round(ms * 1000);
}

/**
 * Time record (16 bytes, big-endian):
 *   +-----------------------------+---------------------------------------------+
 *   | U64 timestamp               | U64 cumulative length of the .rfb.bin after  |
 *   | (vncua: epoch µs; uitask: ns)| the chunk this record stands for             |
 *   +-----------------------------+---------------------------------------------+
 * Writes one record at `offset` of `out`; both values must be integers in 0..2^53.
 */
export function writeTimeRecord(out: Uint8Array, offset: number, timestamp: number, end: number): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(offset, Math.floor(timestamp / 2 ** 32));
  view.setUint32(offset + 4, timestamp >>> 0);
  view.setUint32(offset + 8, Math.floor(end / 2 ** 32));
  view.setUint32(offset + 12, end >>> 0);
}

/** One decoded time record. */
export interface TimeRecord {
  /** Timestamp in the recording's unit (vncua: epoch µs). */
  t: number;
  /** Cumulative byte length of the stream after the chunk. */
  end: number;
}

/** Decodes a whole `.time.bin`; `trailing` counts bytes of an incomplete last record (0 in a sound file). */
export function parseTimeIndex(bytes: Uint8Array): { records: TimeRecord[]; trailing: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Math.floor(bytes.byteLength / TIME_RECORD_BYTES);
  const records: TimeRecord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * TIME_RECORD_BYTES;
    records[i] = {
      t: view.getUint32(o) * 2 ** 32 + view.getUint32(o + 4),
      end: view.getUint32(o + 8) * 2 ** 32 + view.getUint32(o + 12),
    };
  }
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
  time_unit: 'us';
  clock: 'epoch';
  upstream: string;
  connections: ManifestConnection[];
}
