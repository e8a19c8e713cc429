/**
 * Test-only: write a `recording/` directory in the plan's format from chunks given as
 * `{ t (epoch ms), bytes }`: vncua version 2 (recording.json + f64 epoch-ms time records, the
 * default), vncua version 1 (recording.json + u64 µs) or uitask (no manifest, u64 ns). The time
 * records are encoded here with DataView, independently of recorder/proxy/format.ts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TimeEncoding } from '../../proxy/format.ts';
import { streamFile } from '../reader.ts';

/** One relayed chunk. */
export interface Chunk {
  /** Epoch ms (fractional). */
  t: number;
  bytes: Uint8Array;
}

/** One connection's two directions. */
export interface ConnectionChunks {
  client: Chunk[];
  server: Chunk[];
}

/** The bytes of a `*.time.bin` for these chunks: f64 epoch ms as given, or u64 epoch µs / ns (rounded to the µs). */
export function timeIndex(chunks: Chunk[], encoding: TimeEncoding = 'f64-ms'): Uint8Array {
  const out = new Uint8Array(chunks.length * 16);
  const view = new DataView(out.buffer);
  let end = 0;
  chunks.forEach((c, i) => {
    end += c.bytes.length;
    if (encoding === 'f64-ms') view.setFloat64(i * 16, c.t);
    else view.setBigUint64(i * 16, BigInt(Math.round(c.t * 1000)) * (encoding === 'u64-us' ? 1n : 1000n));
    view.setBigUint64(i * 16 + 8, BigInt(end));
  });
  return out;
}

/** Which recorder wrote it: vncua (version 2, the default; or `vncua-v1`) or uitask. */
export type RecordingSource = 'vncua' | 'vncua-v1' | 'uitask';

/** The manifest's version and time fields of a vncua recording. */
export function manifestTimeFields(source: 'vncua' | 'vncua-v1'): Record<string, unknown> {
  return source === 'vncua' ? { version: 2, time_unit: 'ms', time_encoding: 'f64' } : { version: 1, time_unit: 'us' };
}

/** Concatenation of the chunks' bytes. */
export function streamBytes(chunks: Chunk[]): Uint8Array {
  return Buffer.concat(chunks.map((c) => c.bytes));
}

/** Write a recording directory; returns its path. */
export async function writeRecording(dir: string, connections: ConnectionChunks[], opts: { source?: RecordingSource } = {}): Promise<string> {
  const source = opts.source ?? 'vncua';
  const encoding: TimeEncoding = source === 'vncua' ? 'f64-ms' : source === 'vncua-v1' ? 'u64-us' : 'u64-ns';
  await mkdir(dir, { recursive: true });
  for (const [index, c] of connections.entries()) {
    for (const d of ['client', 'server'] as const) {
      await writeFile(join(dir, streamFile(d, index, 'rfb')), streamBytes(c[d]));
      await writeFile(join(dir, streamFile(d, index, 'time')), timeIndex(c[d], encoding));
    }
  }
  if (source !== 'uitask') {
    const manifest = {
      format: 'vncua-recording',
      ...manifestTimeFields(source),
      clock: 'epoch',
      upstream: 'tcp://127.0.0.1:5900',
      connections: connections.map((c, index) => {
        const all = [...c.client, ...c.server].map((x) => x.t);
        return { index, opened_at: Math.min(...all), closed_at: Math.max(...all), close_reason: 'client closed', client_transport: 'tcp' };
      }),
    };
    await writeFile(join(dir, 'recording.json'), JSON.stringify(manifest));
  }
  return dir;
}
