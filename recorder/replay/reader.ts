/**
 * Reading a `recording/` directory back: vncua's own (recording.json, connections 0..k; version 2:
 * f64 epoch-ms timestamps, version 1: u64 epoch µs) and the Python uitask recorder's (no
 * recording.json, u64 epoch ns, connection 0 only). Timestamps come out as epoch ms.
 * See recorder/FORMAT.md for the layout.
 *
 * Damage never throws: a partial last time record, a record pointing past the data, timestamps or
 * offsets going backwards, a timestamp that is no time (an f64 NaN, infinite or negative), data
 * with no time record, a missing file: everything up to the damage
 * is kept and a warning `{ code, message }` says what was dropped. Only a directory with no stream
 * file at all is an error (RECORDING_ERR_NOT_FOUND).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VncuaError, type ErrorCode } from '../../harness/errors.ts';
import { TIME_RECORD_BYTES, readTimeRecord, type TimeEncoding } from '../proxy/format.ts';

/** A problem found in a recording (or while replaying it); the parts before it are still used. */
export interface RecordingWarning {
  code: ErrorCode;
  message: string;
}

/** One direction of one connection, up to any damage. */
export interface RecordedStream {
  /** File the bytes came from (for messages). */
  file: string;
  /** The relayed bytes, exactly as on the wire (only the part covered by the time index). */
  data: Uint8Array;
  /** Time of each relayed chunk, epoch ms (fractional), non-decreasing. */
  times: Float64Array;
  /** Cumulative byte length of `data` after each chunk, non-decreasing; the last equals data.length. */
  ends: Float64Array;
  /**
   * Set when the stream is damaged: the time of the last record kept (-Infinity when none was). What the
   * stream carried after that instant is unknown; absent when the stream is whole.
   */
  damagedAfter?: number;
}

/** One client connection through the recorder. */
export interface RecordedConnection {
  index: number;
  /** Client → server bytes, or null when its files are missing or unusable. */
  client: RecordedStream | null;
  /** Server → client bytes, or null when its files are missing or unusable. */
  server: RecordedStream | null;
  /** From recording.json (epoch ms), when known. */
  openedAt: number | null;
  closedAt: number | null;
  closeReason: string | null;
}

/** A recording read from disk. */
export interface Recording {
  dir: string;
  /** 'vncua' when recording.json exists, else 'uitask'. */
  source: 'vncua' | 'uitask';
  /** Unit of the timestamps on disk (they are converted to epoch ms here): ms (f64, vncua v2), us (u64, vncua v1), ns (u64, uitask). */
  timeUnit: TimeUnit;
  /** The upstream VNC URL from recording.json, if known. */
  upstream: string | null;
  /** Connections in index order. */
  connections: RecordedConnection[];
  /** What was damaged or missing. */
  warnings: RecordingWarning[];
  /** Total bytes of the stream files read. */
  bytes: number;
}

/** Name of vncua's manifest. */
export const MANIFEST = 'recording.json';

const STREAM_FILE = /^(client|server)(?:\.([1-9]\d*))?\.(rfb|time)\.bin$/;

/** Unit of a recording's timestamps on disk; each has one encoding (see ENCODING). */
export type TimeUnit = 'ms' | 'us' | 'ns';

/** How each unit is stored in a time record. */
const ENCODING: Record<TimeUnit, TimeEncoding> = { ms: 'f64-ms', us: 'u64-us', ns: 'u64-ns' };

const manifestFields = {
  format: z.literal('vncua-recording'),
  clock: z.string().optional(),
  upstream: z.string().optional(),
  connections: z.array(
    z.looseObject({
      index: z.number().int().min(0),
      opened_at: z.number().nullable().optional(),
      closed_at: z.number().nullable().optional(),
      close_reason: z.string().nullable().optional(),
    }),
  ),
};

/** Version 2 (f64 epoch ms) and version 1 (u64 epoch µs; ns was allowed too) of recording.json. */
const manifestSchema = z.discriminatedUnion('version', [
  z.looseObject({ ...manifestFields, version: z.literal(2), time_unit: z.literal('ms'), time_encoding: z.literal('f64') }),
  z.looseObject({ ...manifestFields, version: z.literal(1), time_unit: z.enum(['us', 'ns']) }),
]);

type Manifest = z.infer<typeof manifestSchema>;

/** `client.rfb.bin` for connection 0, `client.<k>.rfb.bin` for k ≥ 1 (likewise `.time.bin` and `server.`). */
export function streamFile(direction: 'client' | 'server', index: number, kind: 'rfb' | 'time'): string {
  return index === 0 ? `${direction}.${kind}.bin` : `${direction}.${index}.${kind}.bin`;
}

/** Read and validate a recording directory (one read per file). Throws only RECORDING_ERR_NOT_FOUND. */
export async function readRecording(dir: string): Promise<Recording> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (cause) {
    throw new VncuaError(
      'RECORDING_ERR_NOT_FOUND',
      `No recording directory at ${dir} (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}); a run records into <run>/recording/.`,
      {
        cause,
        details: { dir },
      },
    );
  }
  const warnings: RecordingWarning[] = [];
  const indices = new Set<number>();
  for (const n of names) {
    const m = STREAM_FILE.exec(n);
    if (m) indices.add(m[2] ? Number(m[2]) : 0);
  }
  if (indices.size === 0) {
    throw new VncuaError('RECORDING_ERR_NOT_FOUND', `${dir} holds no recorded stream (client.rfb.bin, server.rfb.bin, *.time.bin); is it a recording/ directory?`, {
      details: { dir },
    });
  }
  let manifest: Manifest | null = null;
  const hasManifest = names.includes(MANIFEST);
  if (hasManifest) manifest = await readManifest(join(dir, MANIFEST), warnings);
  const source = hasManifest ? 'vncua' : 'uitask';
  const present = new Set(names);
  const files = new Map<string, Uint8Array>();
  await Promise.all(
    [...indices].flatMap((i) =>
      (['client', 'server'] as const).flatMap((d) =>
        (['rfb', 'time'] as const).map(async (k) => {
          const name = streamFile(d, i, k);
          if (!present.has(name)) return;
          try {
            files.set(name, await readFile(join(dir, name)));
          } catch (cause) {
            warnings.push({ code: 'RECORDING_ERR_MISSING_FILE', message: `${name} could not be read (${(cause as Error).message}).` });
          }
        }),
      ),
    ),
  );
  const timeUnit: TimeUnit = manifest?.time_unit ?? (hasManifest ? guessUnit(files) : 'ns');
  const byIndex = new Map(manifest?.connections.map((c) => [c.index, c]) ?? []);
  const connections: RecordedConnection[] = [];
  let bytes = 0;
  for (const f of files.values()) bytes += f.length;
  for (const index of [...indices].sort((a, b) => a - b)) {
    const m = byIndex.get(index);
    const stream = (d: 'client' | 'server') => {
      const rfbName = streamFile(d, index, 'rfb');
      const timeName = streamFile(d, index, 'time');
      const data = files.get(rfbName);
      const time = files.get(timeName);
      if (!data || !time) {
        if (data || time) {
          const missing = data ? timeName : rfbName;
          warnings.push({
            code: 'RECORDING_ERR_MISSING_FILE',
            message: `${missing} is missing beside ${data ? rfbName : timeName}: the ${d} stream of connection ${index} cannot be used.`,
          });
        } else {
          warnings.push({ code: 'RECORDING_ERR_MISSING_FILE', message: `${rfbName} and ${timeName} are missing: connection ${index} has no ${d} stream.` });
        }
        return null;
      }
      return validateStream(rfbName, timeName, data, time, ENCODING[timeUnit], warnings);
    };
    connections.push({
      index,
      client: stream('client'),
      server: stream('server'),
      openedAt: m?.opened_at ?? null,
      closedAt: m?.closed_at ?? null,
      closeReason: m?.close_reason ?? null,
    });
  }
  return { dir, source, timeUnit, upstream: manifest?.upstream ?? null, connections, warnings, bytes };
}

async function readManifest(file: string, warnings: RecordingWarning[]): Promise<Manifest | null> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (cause) {
    warnings.push({ code: 'RECORDING_ERR_BAD_MANIFEST', message: `${file} is not valid JSON (${(cause as Error).message}); the streams are read without it.` });
    return null;
  }
  const r = manifestSchema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    warnings.push({
      code: 'RECORDING_ERR_BAD_MANIFEST',
      message: `${file} is not a vncua recording manifest (field "${issue.path.join('.')}": ${issue.message}); the streams are read without it.`,
    });
    return null;
  }
  return r.data;
}

/**
 * Without a usable manifest, from the first record's first 8 bytes: a v2 f64 epoch ms reads as a
 * double between 1e11 and 1e14 (years 1973..5138; epoch µs or ns read as doubles are tiny); else
 * a u64: epoch ns are ~1.7e18, epoch µs ~1.7e15.
 */
function guessUnit(files: Map<string, Uint8Array>): TimeUnit {
  for (const [name, b] of files) {
    if (!name.endsWith('.time.bin') || b.length < TIME_RECORD_BYTES) continue;
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const ms = view.getFloat64(0);
    if (ms >= 1e11 && ms <= 1e14) return 'ms';
    return view.getUint32(0) * 2 ** 32 + view.getUint32(4) >= 1e17 ? 'ns' : 'us';
  }
  return 'ms';
}

/**
 * Time index (`*.time.bin`), 16-byte records, one per relayed chunk (see recorder/FORMAT.md):
 *   +------------------------------------+---------------------------------------------------+
 *   | timestamp: F64 epoch ms (v2),      | U64 cumulative length of the .rfb.bin after chunk |
 *   | U64 epoch µs (v1), U64 ns (uitask) |                                                   |
 *   +------------------------------------+---------------------------------------------------+
 * Keeps the records up to the first damaged one (warning for each kind of damage).
 */
export function validateStream(rfbName: string, timeName: string, data: Uint8Array, time: Uint8Array, encoding: TimeEncoding, warnings: RecordingWarning[]): RecordedStream {
  const n = Math.floor(time.length / TIME_RECORD_BYTES);
  const partialRecord = time.length % TIME_RECORD_BYTES !== 0;
  let damaged = false;
  if (partialRecord) {
    warnings.push({
      code: 'RECORDING_ERR_TRUNCATED',
      message: `${timeName} ends with a partial record (${time.length % TIME_RECORD_BYTES} of ${TIME_RECORD_BYTES} bytes, the recorder stopped mid-write); it is ignored.`,
    });
  }
  const view = new DataView(time.buffer, time.byteOffset, time.byteLength);
  const times: number[] = [];
  const ends: number[] = [];
  let prevT = -Infinity;
  let prevEnd = 0;
  for (let i = 0; i < n; i++) {
    const { t, end } = readTimeRecord(view, i * TIME_RECORD_BYTES, encoding);
    const badTime = !Number.isFinite(t) || t < 0;
    if (badTime || t < prevT || end < prevEnd) {
      const what = badTime
        ? `its timestamp is not a valid time (${t})`
        : t < prevT
          ? `its timestamp goes back ${(prevT - t).toFixed(3)} ms`
          : `its cumulative length goes back from ${prevEnd} to ${end}`;
      warnings.push({
        code: 'RECORDING_ERR_TIME_ORDER',
        message: `${timeName} record ${i} of ${n}: ${what}; the stream is used up to byte ${prevEnd} (record ${i - 1}).`,
      });
      damaged = true;
      break;
    }
    if (end > data.length) {
      warnings.push({
        code: 'RECORDING_ERR_TRUNCATED',
        message: `${timeName} record ${i} of ${n} points to byte ${end}, past the end of ${rfbName} (${data.length} bytes); the stream is used up to byte ${data.length}.`,
      });
      if (data.length > prevEnd) {
        times.push(t);
        ends.push(data.length);
        prevEnd = data.length;
      }
      damaged = true;
      break;
    }
    times.push(t);
    ends.push(end);
    prevT = t;
    prevEnd = end;
  }
  if (data.length > prevEnd && !damaged) {
    warnings.push({
      code: 'RECORDING_ERR_TRUNCATED',
      message: `${rfbName} has ${data.length - prevEnd} bytes after the last time record (byte ${prevEnd}): they have no timestamp (the recorder stopped between writing them and their record) and are ignored.`,
    });
    damaged = true;
  }
  const out: RecordedStream = { file: rfbName, data: data.subarray(0, prevEnd), times: Float64Array.from(times), ends: Float64Array.from(ends) };
  if (damaged || partialRecord) out.damagedAfter = times.length > 0 ? times[times.length - 1]! : -Infinity;
  return out;
}
