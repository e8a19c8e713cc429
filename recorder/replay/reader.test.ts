import { mkdtemp, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { readRecording } from './reader.ts';
import { timeIndex, writeRecording, type Chunk } from './test-helpers/recording.ts';

const T0 = 1_763_000_000_000.125; // epoch ms with a µs fraction
const bytes = (n: number, v: number) => new Uint8Array(n).fill(v);
const chunks = (spec: Array<[number, number]>): Chunk[] => spec.map(([dt, n], i) => ({ t: T0 + dt, bytes: bytes(n, i + 1) }));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-reader-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readRecording', () => {
  it('reads a sound vncua recording: µs timestamps to epoch ms, every connection, no warnings', async () => {
    await writeRecording(dir, [
      { client: chunks([[0, 12], [1.5, 1]]), server: chunks([[0.25, 12], [2, 100], [2, 7]]) },
      { client: chunks([[50, 12]]), server: chunks([[49, 12], [60, 3]]) },
    ]);
    const r = await readRecording(dir);
    expect(r.source).toBe('vncua');
    expect(r.timeUnit).toBe('us');
    expect(r.warnings).toEqual([]);
    expect(r.connections.map((c) => c.index)).toEqual([0, 1]);
    const s = r.connections[0]!.server!;
    expect(Array.from(s.times)).toEqual([T0 + 0.25, T0 + 2, T0 + 2]);
    expect(Array.from(s.ends)).toEqual([12, 112, 119]);
    expect(s.data.length).toBe(119);
    expect(s.data[12]).toBe(2);
    expect(r.connections[1]!.client!.times[0]).toBe(T0 + 50);
    expect(r.connections[0]!.openedAt).toBe(T0);
    expect(r.bytes).toBe(12 + 1 + 12 + 100 + 7 + 12 + 12 + 3 + 16 * 8);
  });

  it('reads a uitask recording: no manifest, ns timestamps', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[3.5, 40]]) }], { source: 'uitask' });
    const r = await readRecording(dir);
    expect(r.source).toBe('uitask');
    expect(r.timeUnit).toBe('ns');
    expect(r.warnings).toEqual([]);
    expect(r.connections[0]!.server!.times[0]).toBeCloseTo(T0 + 3.5, 3);
  });

  it('drops a partial last time record with RECORDING_ERR_TRUNCATED, keeping the rest', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10], [2, 10], [3, 10]]) }]);
    // The crash happened after the third chunk's data and 9 bytes of its record.
    await truncate(join(dir, 'server.time.bin'), 16 * 2 + 9);
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED', 'RECORDING_ERR_TRUNCATED']);
    const s = r.connections[0]!.server!;
    expect(Array.from(s.ends)).toEqual([10, 20]);
    expect(s.data.length).toBe(20); // the 10 bytes without a complete record are not used
  });

  it('clamps a record pointing past the data to the bytes that exist', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10], [2, 10], [3, 10]]) }]);
    await truncate(join(dir, 'server.rfb.bin'), 25);
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED']);
    expect(r.warnings[0]!.message).toContain('past the end');
    const s = r.connections[0]!.server!;
    expect(Array.from(s.ends)).toEqual([10, 20, 25]);
    expect(Array.from(s.times)).toEqual([T0 + 1, T0 + 2, T0 + 3]);
  });

  it('stops at a timestamp that goes backwards, and at an offset that goes backwards', async () => {
    const server: Chunk[] = chunks([[1, 10], [5, 10], [4, 10], [6, 10]]);
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server }]);
    let r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
    expect(Array.from(r.connections[0]!.server!.ends)).toEqual([10, 20]);
    expect(r.connections[0]!.server!.data.length).toBe(20);

    const index = timeIndex(chunks([[1, 10], [2, 10], [3, 10]]), 1000);
    new DataView(index.buffer).setBigUint64(2 * 16 + 8, 15n); // third record: cumulative 15 < 20
    await writeFile(join(dir, 'server.time.bin'), index);
    r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
    expect(Array.from(r.connections[0]!.server!.ends)).toEqual([10, 20]);
  });

  it('reports missing files and keeps the streams that are whole', async () => {
    await writeRecording(dir, [
      { client: chunks([[0, 12]]), server: chunks([[1, 10]]) },
      { client: chunks([[5, 12]]), server: chunks([[6, 10]]) },
    ]);
    await unlink(join(dir, 'server.1.time.bin'));
    await unlink(join(dir, 'client.rfb.bin'));
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code).sort()).toEqual(['RECORDING_ERR_MISSING_FILE', 'RECORDING_ERR_MISSING_FILE']);
    expect(r.connections[0]!.client).toBeNull();
    expect(r.connections[0]!.server!.data.length).toBe(10);
    expect(r.connections[1]!.server).toBeNull();
    expect(r.connections[1]!.client!.data.length).toBe(12);
  });

  it('ignores bytes that have no time record, with a warning', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }]);
    const data = await readFile(join(dir, 'server.rfb.bin'));
    await writeFile(join(dir, 'server.rfb.bin'), Buffer.concat([data, bytes(7, 9)]));
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED']);
    expect(r.connections[0]!.server!.data.length).toBe(10);
  });

  it('warns about a bad manifest and reads the streams anyway (unit from the timestamps)', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }]);
    await writeFile(join(dir, 'recording.json'), '{"format": "vncua-rec');
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_BAD_MANIFEST']);
    expect(r.timeUnit).toBe('us');
    expect(r.connections[0]!.server!.times[0]).toBe(T0 + 1);
  });

  it('throws RECORDING_ERR_NOT_FOUND for a missing directory or one without streams', async () => {
    await expect(readRecording(join(dir, 'nope'))).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
    await writeFile(join(dir, 'notes.txt'), 'x');
    await expect(readRecording(dir)).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
  });
});
