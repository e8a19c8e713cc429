/**
 * Test-only: write a `recording/` directory in the plan's format (vncua: recording.json + µs time
 * records; uitask: no manifest, ns time records) from chunks given as `{ t (epoch ms), bytes }`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

/** The bytes of a `*.time.bin` for these chunks (`scale`: 1000 for µs, 1e6 for ns). */
export function timeIndex(chunks: Chunk[], scale: number): Uint8Array {
  const out = new Uint8Array(chunks.length * 16);
  const view = new DataView(out.buffer);
  let end = 0;
  chunks.forEach((c, i) => {
    end += c.bytes.length;
    const ts = BigInt(Math.round(c.t * 1000)) * BigInt(scale / 1000);
    view.setBigUint64(i * 16, ts);
    view.setBigUint64(i * 16 + 8, BigInt(end));
  });
  return out;
}

/** Concatenation of the chunks' bytes. */
export function streamBytes(chunks: Chunk[]): Uint8Array {
  return Buffer.concat(chunks.map((c) => c.bytes));
}

/** Write a recording directory; returns its path. */
export async function writeRecording(dir: string, connections: ConnectionChunks[], opts: { source?: 'vncua' | 'uitask' } = {}): Promise<string> {
  const source = opts.source ?? 'vncua';
  const scale = source === 'vncua' ? 1000 : 1_000_000;
  await mkdir(dir, { recursive: true });
  for (const [index, c] of connections.entries()) {
    for (const d of ['client', 'server'] as const) {
      await writeFile(join(dir, streamFile(d, index, 'rfb')), streamBytes(c[d]));
      await writeFile(join(dir, streamFile(d, index, 'time')), timeIndex(c[d], scale));
    }
  }
  if (source === 'vncua') {
    const manifest = {
      format: 'vncua-recording',
      version: 1,
      time_unit: 'us',
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
