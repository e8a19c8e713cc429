import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { mulberry32 } from '../../harness/prng.ts';
import { parseActionScreenshots } from '../report/index.ts';
import type { ActionScreenshotsFile } from './output.ts';
import { processRun } from './run.ts';
import { C, PROBE, SUCCESS_EVIDENCE, T, W, H, damageServerStreamAt, openEndedManifest, spinnerAt, writeUitaskRun, writeVncuaRun } from './test-helpers/runs.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'vncua-process-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function pixel(file: string, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * info.channels;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}

const readJson = async (dir: string) => JSON.parse(await readFile(join(dir, 'action_screenshots.json'), 'utf8')) as ActionScreenshotsFile;

describe('processRun', () => {
  it('writes before/after screenshots matched by timestamp, the JSON and the step report', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    const r = await processRun(dir);
    expect(r.status).toBe('processed');
    expect(r.images).toBe(8);
    const j = await readJson(dir);
    expect(() => parseActionScreenshots(j)).not.toThrow();
    expect(j).toMatchObject({ version: 1, source: 'vncua', alignment: 'timestamps', task: 'Click, then type ab', width: W, height: H, settle_ms: 1000 });
    expect(j.outcome).toEqual({ status: 'finished', steps: 4, duration_ms: 5001, success: true });
    expect(j.warnings).toEqual([]);
    const [click, type, wait, finish] = j.actions;
    // #0: before = start (red); after = the click's effect at T+140, settled (nothing for 300 ms after it).
    expect(click).toMatchObject({ before: 'action_screenshots/0000_before.png', before_at: T + 100, after_at: T + 140, settled: true, width: W, height: H });
    expect(await pixel(join(dir, click!.before!), PROBE.x, PROBE.y)).toEqual(C.start);
    expect(await pixel(join(dir, click!.after!), PROBE.x, PROBE.y)).toEqual(C.clicked);
    // #1: two updates 80 ms apart count as one change: settled at the second.
    expect(type).toMatchObject({ after_at: T + 1100, settled: true });
    expect(await pixel(join(dir, type!.before!), PROBE.x, PROBE.y)).toEqual(C.clicked);
    expect(await pixel(join(dir, type!.after!), PROBE.x, PROBE.y)).toEqual(C.typedMore);
    // #2: the spinner never pauses: the frame at the cap (ended_at + 1000), not settled.
    expect(wait).toMatchObject({ after_at: T + 3500, settled: false });
    expect(await pixel(join(dir, wait!.after!), PROBE.x, PROBE.y)).toEqual(spinnerAt(3500));
    // #3: the last spinner frame; the connection stayed open past ended_at + 300 ms, so it settled at once.
    expect(finish).toMatchObject({ after_at: T + 5001, settled: true, task_marked_complete: true });
    expect(await pixel(join(dir, finish!.before!), PROBE.x, PROBE.y)).toEqual(spinnerAt(4000));
    // The cursor is drawn where the client's pointer was (10,10 after the click).
    expect(await pixel(join(dir, click!.after!), 10, 10)).not.toEqual(C.clicked);
    expect(r.report).toBe(join(dir, 'action_screenshots.html'));
    expect((await readFile(r.report!, 'utf8')).includes('0000_before.png')).toBe(true);
  });

  it('never takes the after frame past the next action, and honours settleMs', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    await processRun(dir, { settleMs: 20 });
    const j = await readJson(dir);
    expect(j.settle_ms).toBe(20);
    // #0 ended at T+105: cap T+125, before the click's effect at T+140.
    expect(j.actions[0]).toMatchObject({ after_at: T + 125, settled: false });
    expect(await pixel(join(dir, j.actions[0]!.after!), PROBE.x, PROBE.y)).toEqual(C.start);
  });

  it('is idempotent, and --overwrite regenerates', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    await processRun(dir);
    const before = (await stat(join(dir, 'action_screenshots.json'))).mtimeMs;
    const again = await processRun(dir);
    expect(again.status).toBe('skipped');
    expect((await stat(join(dir, 'action_screenshots.json'))).mtimeMs).toBe(before);
    await rm(join(dir, 'action_screenshots', '0002_after.png'));
    expect((await processRun(dir)).status).toBe('processed'); // incomplete output is redone
    const forced = await processRun(dir, { overwrite: true });
    expect(forced.status).toBe('processed');
    expect(await pixel(join(dir, 'action_screenshots', '0002_after.png'), PROBE.x, PROBE.y)).toEqual(spinnerAt(3500));
  });

  it('keeps every frame up to the damage of a truncated recording; images past it are the last frame, marked stale', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    const data = join(dir, 'recording', 'server.rfb.bin');
    const size = (await stat(data)).size;
    await truncate(data, size - 500); // cut into the last spinner updates
    await openEndedManifest(dir);
    const r = await processRun(dir);
    const j = await readJson(dir);
    expect(j.warnings.map((w) => w.code)).toContain('RECORDING_ERR_TRUNCATED');
    expect(j.warnings.map((w) => w.code)).toContain('RECORDING_ERR_STALE_FRAME');
    expect(j.warnings.map((w) => w.code)).not.toContain('RECORDING_ERR_NOT_REACHED');
    expect(await pixel(join(dir, j.actions[1]!.after!), PROBE.x, PROBE.y)).toEqual(C.typedMore);
    expect(j.actions[1]).toMatchObject({ before_stale: false, after_stale: false, before_stale_reason: null, after_shows_at: j.actions[1]!.after_at });
    // T+5000 is past the last recorded byte, which is where the stream is cut: the last frame, marked stale.
    const last = j.actions[3]!;
    expect(last).toMatchObject({ before_stale: true, before_stale_reason: 'damage', after_stale: true, after_stale_reason: 'damage', settled: false });
    // The cut falls into the update of T+3950: its record is the last one kept, and that update never completes.
    expect(last.before_shows_at).toBe(T + 3950);
    expect(await pixel(join(dir, last.before!), PROBE.x, PROBE.y)).toEqual(spinnerAt(3850));
    expect(r.warnings.length).toBe(j.warnings.length);
  });

  it('marks every image past a damage in the middle of the recording stale (damage), never settled', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    // The time index goes back at the chunk of T+1020: only what was recorded up to T+140 is known,
    // although the client stream and the connection (closed at T+6000) go on.
    const knownUntil = await damageServerStreamAt(dir, T + 1020);
    expect(knownUntil).toBe(T + 140);
    await processRun(dir);
    const j = await readJson(dir);
    expect(j.warnings.map((w) => w.code)).toEqual(expect.arrayContaining(['RECORDING_ERR_TIME_ORDER', 'RECORDING_ERR_STALE_FRAME']));
    const [click, type, wait, finish] = j.actions;
    // The click's images are known; its effect at T+140 is the last known update, so quiet after it cannot be confirmed.
    expect(click).toMatchObject({ before_stale: false, after_stale: false, after_at: T + 140, after_shows_at: T + 140, settled: false });
    expect(await pixel(join(dir, click!.after!), PROBE.x, PROBE.y)).toEqual(C.clicked);
    for (const a of [type!, wait!, finish!]) {
      expect(a, `action ${a.index}`).toMatchObject({
        before_stale: true,
        before_stale_reason: 'damage',
        before_shows_at: T + 140,
        after_stale: true,
        after_stale_reason: 'damage',
        after_shows_at: T + 140,
        settled: false,
      });
      expect(a.before_at!).toBeGreaterThan(T + 140);
      // The image is the last frame before the damage (the click's effect), not what the screen showed then.
      expect(await pixel(join(dir, a.before!), PROBE.x, PROBE.y)).toEqual(C.clicked);
    }
    // The step report shows it on each stale image.
    const html = await readFile(join(dir, 'action_screenshots.html'), 'utf8');
    expect(html.match(/class="stale-badge" data-reason="damage"/g)).toHaveLength(6);
  });

  it('marks the images of actions after the end of the recorded data stale (end_of_data)', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    await openEndedManifest(dir); // nothing says the screen stayed as it was after the last byte (T+3950)
    await processRun(dir);
    const j = await readJson(dir);
    expect(j.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_STALE_FRAME']);
    expect(j.actions.slice(0, 3).every((a) => a.before_stale === false && a.after_stale === false)).toBe(true);
    expect(j.actions[3]).toMatchObject({
      before_at: T + 5000,
      before_stale: true,
      before_stale_reason: 'end_of_data',
      before_shows_at: T + 3950,
      after_stale: true,
      after_stale_reason: 'end_of_data',
      after_shows_at: T + 3950,
      settled: false,
    });
    expect(await pixel(join(dir, j.actions[3]!.before!), PROBE.x, PROBE.y)).toEqual(spinnerAt(3950));
    const html = await readFile(join(dir, 'action_screenshots.html'), 'utf8');
    expect(html.match(/class="stale-badge" data-reason="end_of_data"/g)).toHaveLength(2);
  });

  it('never fails on corrupt server bytes: a valid JSON and real images every time', async () => {
    const rand = mulberry32(7);
    for (let i = 0; i < 6; i++) {
      const dir = await writeVncuaRun(join(root, `corrupt-${i}`));
      const file = join(dir, 'recording', 'server.rfb.bin');
      const data = await readFile(file);
      const at = 200 + Math.floor(rand() * (data.length - 400));
      for (let k = 0; k < 16; k++) data[at + k] = Math.floor(rand() * 256);
      await writeFile(file, data);
      const r = await processRun(dir);
      const j = await readJson(dir);
      expect(() => parseActionScreenshots(j)).not.toThrow();
      expect(r.warnings).toEqual(j.warnings);
      // Every image written is a real PNG of the screen size.
      for (const a of j.actions) for (const p of [a.before, a.after]) if (p) expect((await sharp(join(dir, p)).metadata()).width).toBe(W);
    }
  });

  it('processes a partial run (partial_execution.json, no result.json)', async () => {
    const dir = await writeVncuaRun(join(root, 'run'), { partial: true });
    await processRun(dir);
    const j = await readJson(dir);
    expect(j.outcome).toBeNull();
    expect(j.trace_file).toBe('partial_execution.json');
    expect(j.actions).toHaveLength(4);
  });

  it('the first successful step: its evidence in the JSON, success.png = the screen when the check answered, marked in the report', async () => {
    // type_text's success seen by a grace check at T+1060: after the first repaint (T+1020), before the second (T+1100).
    const dir = await writeVncuaRun(join(root, 'run'), { success: { index: 1, dt: 1060, phase: 'grace' } });
    const r = await processRun(dir);
    expect(r.images).toBe(9);
    const j = await readJson(dir);
    expect(j.success).toEqual({ index: 1, at: T + 1060, phase: 'grace', ...SUCCESS_EVIDENCE, image: 'action_screenshots/success.png' });
    expect(() => parseActionScreenshots(j)).not.toThrow();
    expect(await pixel(join(dir, 'action_screenshots/success.png'), PROBE.x, PROBE.y)).toEqual(C.typed);
    expect(await pixel(join(dir, j.actions[1]!.after!), PROBE.x, PROBE.y)).toEqual(C.typedMore);
    const html = await readFile(join(dir, 'action_screenshots.html'), 'utf8');
    const step = /<section class="step done first-success" id="step-1"[\s\S]*?<\/section>/.exec(html)?.[0];
    expect(step).toBeDefined();
    expect(step).toContain('id="first-success"');
    expect(step).toContain('src="action_screenshots/success.png"');
    expect(step).toContain('a re-check while the screen settled after this action +50 ms after the action ended');
    expect(html.match(/id="first-success"/g)).toHaveLength(1);
    expect(html.match(/<section class="[^"]*first-success/g)).toHaveLength(1);
    // Complete output: skipped; without the success image, processed again.
    expect((await processRun(dir)).status).toBe('skipped');
    await rm(join(dir, 'action_screenshots/success.png'));
    expect((await processRun(dir)).status).toBe('processed');
  });

  it('evidence only in result.json (naming the entry) is used; without a time there is no success image; no complete step: success null', async () => {
    const a = await writeVncuaRun(join(root, 'a'), { success: { index: 0, dt: 200, phase: 'immediate', inTrace: false } });
    await processRun(a);
    expect((await readJson(a)).success).toMatchObject({ index: 0, at: T + 200, phase: 'immediate', image: 'action_screenshots/success.png' });
    expect(await pixel(join(a, 'action_screenshots/success.png'), PROBE.x, PROBE.y)).toEqual(C.clicked);
    const b = await writeVncuaRun(join(root, 'b'));
    await processRun(b);
    expect((await readJson(b)).success).toEqual({ index: 3, at: null, phase: null, rule: null, pattern: null, snippet: null, url: null, image: null });
    expect(await readFile(join(b, 'action_screenshots.html'), 'utf8')).toContain('<section class="step done first-success" id="step-3"');
  });

  it('aligns a uitask run to the recorded input and says the alignment was inferred', async () => {
    const dir = await writeUitaskRun(join(root, 'uitask'));
    await processRun(dir);
    const j = await readJson(dir);
    expect(j).toMatchObject({ source: 'uitask', alignment: 'inferred' });
    expect(j.actions[0]!.started_at).toBeCloseTo(T + 101, 2);
    expect(await pixel(join(dir, j.actions[0]!.after!), PROBE.x, PROBE.y)).toEqual(C.clicked);
    expect(await pixel(join(dir, j.actions[1]!.after!), PROBE.x, PROBE.y)).toEqual(C.typedMore);
  });

  it('with video: writes recording.mp4 (or .webm) of the session and says so', async () => {
    const dir = await writeVncuaRun(join(root, 'run'));
    const r = await processRun(dir, { video: true });
    expect(r.video).toMatch(/^video: wrote .*recording\.(mp4|webm)/);
    const file = r.video!.match(/wrote (\S+)/)![1]!;
    expect((await stat(file)).size).toBeGreaterThan(0);
  });

  it('fails clearly without a trace or without a recording', async () => {
    await expect(processRun(join(root, 'nothing'))).rejects.toSatisfy((e) => isVncuaError(e, 'TRACE_ERR_NOT_FOUND'));
    const dir = await writeVncuaRun(join(root, 'run'));
    await rm(join(dir, 'recording'), { recursive: true });
    await expect(processRun(dir)).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
  });
});
