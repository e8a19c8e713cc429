import { mkdtemp, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { readRecording } from './reader.ts';
import type { TimeEncoding } from '../proxy/format.ts';
import { timeIndex, writeRecording, type Chunk, type RecordingSource } from './test-helpers/recording.ts';

const T0 = 1_763_000_000_000.125; // epoch ms with a µs fraction
const ENCODING: Record<'ms' | 'us' | 'ns', TimeEncoding> = { ms: 'f64-ms', us: 'u64-us', ns: 'u64-ns' };
const bytes = (n: number, v: number) => new Uint8Array(n).fill(v);
const chunks = (spec: Array<[number, number]>): Chunk[] => spec.map(([dt, n], i) => ({ t: T0 + dt, bytes: bytes(n, i + 1) }));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-reader-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The recorders and the unit their timestamps are stored in. */
const SOURCES: Array<{ source: RecordingSource; unit: 'ms' | 'us' | 'ns' }> = [
  { source: 'vncua', unit: 'ms' },
  { source: 'vncua-v1', unit: 'us' },
  { source: 'uitask', unit: 'ns' },
];

/** `times` equal `want` exactly; for ns (u64 above 2^53, so rounded to 256 ns) to well under a µs. */
function expectTimes(times: Float64Array, want: number[], unit: 'ms' | 'us' | 'ns'): void {
  if (unit !== 'ns') return void expect(Array.from(times)).toEqual(want);
  expect(times.length).toBe(want.length);
  for (const [i, w] of want.entries()) expect(Math.abs(times[i]! - w)).toBeLessThan(0.001);
}

describe('readRecording', () => {
  it('reads a sound vncua recording: f64 epoch-ms timestamps exactly as written, every connection, no warnings', async () => {
    await writeRecording(dir, [
      {
        client: chunks([
          [0, 12],
          [1.5, 1],
        ]),
        server: chunks([
          [0.25, 12],
          [2, 100],
          [2, 7],
        ]),
      },
      {
        client: chunks([[50, 12]]),
        server: chunks([
          [49, 12],
          [60, 3],
        ]),
      },
    ]);
    const r = await readRecording(dir);
    expect(r.source).toBe('vncua');
    expect(r.timeUnit).toBe('ms');
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

  it("gives back the very double now() returned, fractional ms included (directly comparable with a trace's started_at)", async () => {
    const t = 1795574049502.512;
    await writeRecording(dir, [{ client: [{ t, bytes: bytes(12, 1) }], server: [{ t: t + 0.001, bytes: bytes(12, 2) }] }]);
    const r = await readRecording(dir);
    expect(r.warnings).toEqual([]);
    expect(Object.is(r.connections[0]!.client!.times[0], t)).toBe(true);
    expect(Object.is(r.connections[0]!.server!.times[0], t + 0.001)).toBe(true);
  });

  it('reads a version-1 vncua recording: u64 µs timestamps to epoch ms', async () => {
    await writeRecording(
      dir,
      [
        {
          client: chunks([
            [0, 12],
            [1.5, 1],
          ]),
          server: chunks([
            [0.25, 12],
            [2, 100],
            [2, 7],
          ]),
        },
        {
          client: chunks([[50, 12]]),
          server: chunks([
            [49, 12],
            [60, 3],
          ]),
        },
      ],
      { source: 'vncua-v1' },
    );
    expect(JSON.parse(await readFile(join(dir, 'recording.json'), 'utf8'))).toMatchObject({ version: 1, time_unit: 'us' });
    const r = await readRecording(dir);
    expect(r.source).toBe('vncua');
    expect(r.timeUnit).toBe('us');
    expect(r.warnings).toEqual([]);
    expect(r.connections.map((c) => c.index)).toEqual([0, 1]);
    const s = r.connections[0]!.server!;
    expect(Array.from(s.times)).toEqual([T0 + 0.25, T0 + 2, T0 + 2]);
    expect(Array.from(s.ends)).toEqual([12, 112, 119]);
    expect(r.connections[1]!.client!.times[0]).toBe(T0 + 50);
    expect(r.connections[0]!.openedAt).toBe(T0);
  });

  it('reads a uitask recording: no manifest, ns timestamps', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[3.5, 40]]) }], { source: 'uitask' });
    const r = await readRecording(dir);
    expect(r.source).toBe('uitask');
    expect(r.timeUnit).toBe('ns');
    expect(r.warnings).toEqual([]);
    expect(r.connections[0]!.server!.times[0]).toBeCloseTo(T0 + 3.5, 3);
  });

  for (const { source, unit } of SOURCES) {
    describe(`damage, ${source} (${unit})`, () => {
      it('drops a partial last time record with RECORDING_ERR_TRUNCATED, keeping the rest', async () => {
        await writeRecording(
          dir,
          [
            {
              client: chunks([[0, 12]]),
              server: chunks([
                [1, 10],
                [2, 10],
                [3, 10],
              ]),
            },
          ],
          { source },
        );
        // The crash happened after the third chunk's data and 9 bytes of its record.
        await truncate(join(dir, 'server.time.bin'), 16 * 2 + 9);
        const r = await readRecording(dir);
        expect(r.timeUnit).toBe(unit);
        expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED', 'RECORDING_ERR_TRUNCATED']);
        const s = r.connections[0]!.server!;
        expect(Array.from(s.ends)).toEqual([10, 20]);
        expectTimes(s.times, [T0 + 1, T0 + 2], unit);
        expect(s.data.length).toBe(20); // the 10 bytes without a complete record are not used
      });

      it('clamps a record pointing past the data to the bytes that exist', async () => {
        await writeRecording(
          dir,
          [
            {
              client: chunks([[0, 12]]),
              server: chunks([
                [1, 10],
                [2, 10],
                [3, 10],
              ]),
            },
          ],
          { source },
        );
        await truncate(join(dir, 'server.rfb.bin'), 25);
        const r = await readRecording(dir);
        expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED']);
        expect(r.warnings[0]!.message).toContain('past the end');
        const s = r.connections[0]!.server!;
        expect(Array.from(s.ends)).toEqual([10, 20, 25]);
        expectTimes(s.times, [T0 + 1, T0 + 2, T0 + 3], unit);
      });

      it('stops at a timestamp that goes backwards, and at an offset that goes backwards', async () => {
        const server: Chunk[] = chunks([
          [1, 10],
          [5, 10],
          [4, 10],
          [6, 10],
        ]);
        await writeRecording(dir, [{ client: chunks([[0, 12]]), server }], { source });
        let r = await readRecording(dir);
        expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
        expect(r.warnings[0]!.message).toContain('goes back 1.000 ms');
        expect(Array.from(r.connections[0]!.server!.ends)).toEqual([10, 20]);
        expect(r.connections[0]!.server!.data.length).toBe(20);

        const index = timeIndex(
          chunks([
            [1, 10],
            [2, 10],
            [3, 10],
          ]),
          ENCODING[unit],
        );
        new DataView(index.buffer).setBigUint64(2 * 16 + 8, 15n); // third record: cumulative 15 < 20
        await writeFile(join(dir, 'server.time.bin'), index);
        r = await readRecording(dir);
        expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
        expect(Array.from(r.connections[0]!.server!.ends)).toEqual([10, 20]);
      });

      it('ignores bytes that have no time record, with a warning', async () => {
        await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }], { source });
        const data = await readFile(join(dir, 'server.rfb.bin'));
        await writeFile(join(dir, 'server.rfb.bin'), Buffer.concat([data, bytes(7, 9)]));
        const r = await readRecording(dir);
        expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TRUNCATED']);
        expect(r.connections[0]!.server!.data.length).toBe(10);
      });
    });
  }

  it('treats a NaN, infinite or negative f64 timestamp as damage: stops there with RECORDING_ERR_TIME_ORDER, keeps what came before', async () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1]) {
      await writeRecording(dir, [
        {
          client: chunks([[0, 12]]),
          server: chunks([
            [1, 10],
            [2, 10],
            [3, 10],
          ]),
        },
      ]);
      const index = await readFile(join(dir, 'server.time.bin'));
      new DataView(index.buffer, index.byteOffset, index.byteLength).setFloat64(2 * 16, bad); // third record
      await writeFile(join(dir, 'server.time.bin'), index);
      const r = await readRecording(dir);
      expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
      expect(r.warnings[0]!.message).toContain(`is not a valid time (${bad})`);
      const s = r.connections[0]!.server!;
      expect(Array.from(s.ends)).toEqual([10, 20]);
      expect(Array.from(s.times)).toEqual([T0 + 1, T0 + 2]);
      expect(s.data.length).toBe(20);
    }
    // In the first record: nothing of the stream is usable.
    const index = await readFile(join(dir, 'server.time.bin'));
    new DataView(index.buffer, index.byteOffset, index.byteLength).setFloat64(0, Number.NaN);
    await writeFile(join(dir, 'server.time.bin'), index);
    const r = await readRecording(dir);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_TIME_ORDER']);
    expect(r.connections[0]!.server!.data.length).toBe(0);
    expect(r.connections[0]!.server!.times.length).toBe(0);
  });

  it('decides the encoding from the manifest: v2 f64 ms, v1 u64 µs, the same records read differently', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }], { source: 'vncua-v1' });
    const manifest = JSON.parse(await readFile(join(dir, 'recording.json'), 'utf8')) as Record<string, unknown>;
    // A v1 manifest over v1 records: exact.
    expect((await readRecording(dir)).connections[0]!.server!.times[0]).toBe(T0 + 1);
    // Claiming v2 over u64 µs records: read as doubles they are tiny numbers, not epoch ms (the manifest is trusted).
    await writeFile(join(dir, 'recording.json'), JSON.stringify({ ...manifest, version: 2, time_unit: 'ms', time_encoding: 'f64' }));
    const r = await readRecording(dir);
    expect(r.timeUnit).toBe('ms');
    expect(r.warnings).toEqual([]);
    expect(r.connections[0]!.server!.times[0]).toBeLessThan(1);
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

  for (const { source, unit } of SOURCES) {
    it(`warns about a bad manifest and reads the streams anyway (unit from the timestamps): ${source} -> ${unit}`, async () => {
      await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }], { source });
      await writeFile(join(dir, 'recording.json'), '{"format": "vncua-rec');
      const r = await readRecording(dir);
      expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_BAD_MANIFEST']);
      expect(r.timeUnit).toBe(unit);
      expectTimes(r.connections[0]!.server!.times, [T0 + 1], unit);
    });
  }

  it('warns about a manifest of an unknown version or with a unit its version does not have, and guesses the unit', async () => {
    await writeRecording(dir, [{ client: chunks([[0, 12]]), server: chunks([[1, 10]]) }]);
    const manifest = JSON.parse(await readFile(join(dir, 'recording.json'), 'utf8')) as Record<string, unknown>;
    for (const bad of [{ version: 3 }, { version: 2, time_unit: 'us' }, { version: 2, time_encoding: 'u64' }, { version: 1, time_unit: 'ms' }]) {
      await writeFile(join(dir, 'recording.json'), JSON.stringify({ ...manifest, ...bad }));
      const r = await readRecording(dir);
      expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_BAD_MANIFEST']);
      expect(r.timeUnit).toBe('ms');
      expect(r.connections[0]!.server!.times[0]).toBe(T0 + 1);
    }
  });

  it('throws RECORDING_ERR_NOT_FOUND for a missing directory or one without streams', async () => {
    await expect(readRecording(join(dir, 'nope'))).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
    await writeFile(join(dir, 'notes.txt'), 'x');
    await expect(readRecording(dir)).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
  });
});
