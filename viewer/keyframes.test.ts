import { mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Replayer } from '../recorder/replay/replayer.ts';
import { T, damageServerStreamAt, writeVncuaRun } from '../recorder/process/test-helpers/runs.ts';
import { CACHE_DIR, KeyframeIndex } from './keyframes.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'vncua-viewer-kf-'));
  dirs.push(d);
  return d;
}

/** Every 7 ms over the recording, plus the exact update instants and their neighbours. */
const INSTANTS = [...Array.from({ length: 1000 }, (_, k) => T - 20 + 7 * k), T + 10, T + 140, T + 1020, T + 1100, T + 139.999, T + 2550, T + 3950, T + 6000, T + 7000].sort(
  (a, b) => a - b,
);

async function expectSameAsReplayer(run: string, idx: KeyframeIndex, instants: number[]): Promise<number> {
  const replay = await Replayer.open(run);
  let compared = 0;
  for (const t of instants) {
    const want = await replay.frameAt(t, { cursor: true });
    const got = await idx.frameAt(t);
    if (want === null) {
      expect(got, `t=${t - T}`).toBeNull();
      continue;
    }
    expect(got, `t=${t - T}`).not.toBeNull();
    expect([got!.width, got!.height]).toEqual([want.width, want.height]);
    expect(Buffer.compare(Buffer.from(got!.rgb), Buffer.from(want.rgb)), `pixels at T+${t - T}`).toBe(0);
    expect(got!.stale?.reason ?? null, `stale at T+${t - T}`).toBe(want.stale?.reason ?? null);
    compared++;
  }
  return compared;
}

describe('KeyframeIndex', () => {
  it('gives the pixels Replayer.frameAt (vncua process) gives, at every instant, in and out of order', async () => {
    const run = await writeVncuaRun(join(await tmp(), 'run'));
    const idx = await KeyframeIndex.open(run, { keyframeMs: 500 });
    await idx.whenComplete();
    expect(await expectSameAsReplayer(run, idx, INSTANTS)).toBeGreaterThan(900);
    expect(idx.directFrames).toBe(0);
    // Backwards and jumping: each seek starts from a keyframe or the current frame, never from the recording's start.
    const shuffled = [...INSTANTS].sort((a, b) => ((a * 7919) % 1000) - ((b * 7919) % 1000));
    for (const t of shuffled.slice(0, 200)) {
      const want = await (await Replayer.open(run)).frameAt(t, { cursor: true });
      const got = await idx.frameAt(t);
      expect(got === null).toBe(want === null);
      if (want && got) expect(Buffer.compare(Buffer.from(got.rgb), Buffer.from(want.rgb))).toBe(0);
    }
    expect(idx.records.filter((r) => r.key).length).toBeGreaterThan(1);
    await idx.close();
  });

  it('an instant the build has not reached is decoded directly from the recording, with the same pixels; the build then completes', async () => {
    const run = await writeVncuaRun(join(await tmp(), 'run'));
    const idx = await KeyframeIndex.open(run, { cache: false, keyframeMs: 500 });
    // Asked at once, before the walk got there: answered by the direct Replayer (later asks may meet the walk anywhere).
    const late = [T + 5999, T + 3000, T + 7000, T + 1100];
    const first = await idx.frameAt(late[0]!);
    expect(idx.complete).toBe(false);
    expect(idx.directFrames).toBe(1);
    const want = await (await Replayer.open(run)).frameAt(late[0]!, { cursor: true });
    expect(Buffer.compare(Buffer.from(first!.rgb), Buffer.from(want!.rgb))).toBe(0);
    expect(await expectSameAsReplayer(run, idx, late)).toBe(late.length);
    await idx.whenComplete();
    expect(idx.complete).toBe(true);
    const directs = idx.directFrames;
    expect(await expectSameAsReplayer(run, idx, INSTANTS)).toBeGreaterThan(900);
    expect(idx.directFrames).toBe(directs);
    await idx.close();
  });

  it('is cached beside the recording and read back; a changed recording is indexed again; nothing else is written', async () => {
    const run = await writeVncuaRun(join(await tmp(), 'run'));
    const before = (await readdir(run)).sort();
    const a = await KeyframeIndex.open(run);
    await a.whenComplete();
    expect(a.source).toBe('built');
    expect(a.cachePath).toBe(join(run, CACHE_DIR));
    await a.close();
    expect((await readdir(run)).sort()).toEqual([...before, CACHE_DIR].sort());
    expect((await readdir(join(run, CACHE_DIR))).sort()).toEqual(['frames.bin', 'index.json']);
    // The format: version 2, one tuple per record, frames.bin's size; the cache smaller than the server stream it indexes.
    const stored = JSON.parse(await readFile(join(run, CACHE_DIR, 'index.json'), 'utf8')) as { version: number; framesBytes: number; records: unknown[][] };
    const framesBytes = (await stat(join(run, CACHE_DIR, 'frames.bin'))).size;
    expect(stored.version).toBe(2);
    expect(stored.framesBytes).toBe(framesBytes);
    expect(stored.records).toHaveLength(a.records.length);
    expect(stored.records[0]).toEqual([a.records[0]!.t, 1, 0, 64, 48, 0, a.records[0]!.len, a.records[0]!.cursor]);
    expect(framesBytes).toBeLessThan((await stat(join(run, 'recording', 'server.rfb.bin'))).size / 4);
    const b = await KeyframeIndex.open(run);
    expect(b.source).toBe('cache');
    expect(await expectSameAsReplayer(run, b, INSTANTS)).toBeGreaterThan(900);
    await b.close();
    // A frames.bin cut short (a copy interrupted, a full disk) is not used: the index is built again.
    await truncate(join(run, CACHE_DIR, 'frames.bin'), framesBytes - 1);
    const cut = await KeyframeIndex.open(run);
    expect(cut.source).toBe('built');
    await cut.whenComplete();
    await cut.close();
    expect((await stat(join(run, CACHE_DIR, 'frames.bin'))).size).toBe(framesBytes);
    // An index.json that is not JSON: built again too.
    await writeFile(join(run, CACHE_DIR, 'index.json'), '{"version":2,');
    const bad = await KeyframeIndex.open(run);
    expect(bad.source).toBe('built');
    await bad.close();
    await damageServerStreamAt(run, T + 1100);
    const c = await KeyframeIndex.open(run);
    expect(c.source).toBe('built');
    await c.close();
  });

  it('a damaged recording: the frames before the damage, stale after it, and where the damage starts', async () => {
    const run = await writeVncuaRun(join(await tmp(), 'run'));
    const lastGood = await damageServerStreamAt(run, T + 1100);
    const idx = await KeyframeIndex.open(run, { cache: false });
    await idx.whenComplete();
    expect(idx.summary.known).toEqual([{ conn: 0, until: lastGood, reason: 'damage' }]);
    expect(idx.summary.warnings.some((w) => w.code === 'RECORDING_ERR_TIME_ORDER')).toBe(true);
    expect(await expectSameAsReplayer(run, idx, INSTANTS)).toBeGreaterThan(900);
    const after = await idx.frameAt(T + 3000);
    expect(after?.stale).toEqual({ reason: 'damage', knownUntil: lastGood });
    await idx.close();
    // Asked before the build got there (decoded directly): the same answer, and the extent says where the damage starts.
    const early = await KeyframeIndex.open(run, { cache: false });
    const direct = await early.frameAt(T + 3000);
    expect(early.directFrames).toBe(1);
    expect(direct?.stale).toEqual({ reason: 'damage', knownUntil: lastGood });
    expect(Buffer.compare(Buffer.from(direct!.rgb), Buffer.from(after!.rgb))).toBe(0);
    expect((await early.extent()).damage).toEqual({ until: lastGood, reason: 'damage' });
    await early.close();
  });
});
