/**
 * Test-only: run directories with a synthetic recording (known colours at known instants) and a trace
 * whose actions fall between them, in vncua's format or uitask's.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeKeyEvent, writePointerEvent } from '../../../harness/rfb/client-messages.ts';
import { cursorRect, framebufferUpdate, rawRect, type Rgb } from '../../../harness/rfb/test-helpers/server-stream.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskType, uitaskWait } from '../../../harness/trace/test-fixtures/uitask.ts';
import { parseTimeIndex, writeTimeRecord } from '../../proxy/format.ts';
import { manifestTimeFields, writeRecording, type Chunk } from '../../replay/test-helpers/recording.ts';
import { syntheticConnection } from '../../replay/test-helpers/synthetic.ts';

export const W = 64;
export const H = 48;
export const T = 1_763_000_000_000;

/** Colours of the scenario's screens. */
export const C = {
  start: [200, 0, 0] as Rgb,
  clicked: [0, 200, 0] as Rgb,
  typed: [0, 0, 200] as Rgb,
  typedMore: [0, 100, 200] as Rgb,
  spinner: (k: number): Rgb => [10 * k, 255 - 10 * k, 7],
};

/** Pixel used to tell the screens apart (away from the cursor). */
export const PROBE = { x: 40, y: 30 };

const full = (c: Rgb) => framebufferUpdate([rawRect(0, 0, W, H, () => c)]);
/** The spinner repaints the probe's corner every 100 ms from T+2550 to T+3950. */
const spinnerTimes = Array.from({ length: 15 }, (_, k) => 2550 + 100 * k);

/**
 * Scenario:
 *   T+10    screen red (start), a white 4x4 cursor (hotspot 0,0)
 *   #0 mouse_click (10,10) at T+100..T+105 (pointer events at T+101..T+103); T+140 screen green
 *   #1 type_text "ab" at T+1000..T+1010 (key events); T+1020 blue, T+1100 blue-ish (within the quiet window)
 *   #2 wait at T+2000..T+2500; a spinner repaints every 100 ms from T+2550 to T+3950 (never quiet for 300 ms)
 *   #3 finish at T+5000..T+5001; the connection closes at T+6000
 */
export function scenarioChunks(): { server: Chunk[]; client: Chunk[] } {
  const server: Chunk[] = [
    {
      t: T + 10,
      bytes: framebufferUpdate([
        rawRect(0, 0, W, H, () => C.start),
        cursorRect(
          0,
          0,
          4,
          4,
          () => [255, 255, 255],
          () => true,
        ),
      ]),
    },
    { t: T + 140, bytes: full(C.clicked) },
    { t: T + 1020, bytes: full(C.typed) },
    { t: T + 1100, bytes: full(C.typedMore) },
    ...spinnerTimes.map((dt, k) => ({ t: T + dt, bytes: framebufferUpdate([rawRect(32, 24, 32, 24, () => C.spinner(k))]) })),
  ];
  const client: Chunk[] = [
    { t: T + 101, bytes: writePointerEvent(10, 10, 0) },
    { t: T + 102, bytes: writePointerEvent(10, 10, 1) },
    { t: T + 103, bytes: writePointerEvent(10, 10, 0) },
    ...[0x61, 0x62].flatMap((k, i) => [
      { t: T + 1001 + i * 4, bytes: writeKeyEvent(k, true) },
      { t: T + 1003 + i * 4, bytes: writeKeyEvent(k, false) },
    ]),
  ];
  return { server, client };
}

/** The spinner colour shown as of `dt` ms after T (null before the first). */
export function spinnerAt(dt: number): Rgb | null {
  let k = -1;
  spinnerTimes.forEach((s, i) => {
    if (s <= dt) k = i;
  });
  return k < 0 ? null : C.spinner(k);
}

const ACTIONS = [
  { action: 'mouse_click', params: { position: { x: 10, y: 10 }, button: 'left', click_type: 'single' }, at: [100, 105] },
  { action: 'type_text', params: { text: 'ab' }, at: [1000, 1010] },
  { action: 'wait', params: { seconds: 0.5 }, at: [2000, 2500] },
  { action: 'finish', params: {}, at: [5000, 5001] },
] as const;

/** What the success check saw, for `writeVncuaRun`'s `success` option. */
export const SUCCESS_EVIDENCE = { rule: 'text', pattern: '>code#1</', snippet: '<div id="r">code#1</div>', url: 'http://127.0.0.1:1/t.html' } as const;

/**
 * Write a vncua run (execution.json with timing, result.json, task.json, recording/) into `dir`. Without `success`
 * the finish entry is the complete one (no evidence); with it, entry `index` is, seen at T+`dt` in `phase`, its
 * evidence in the entry's success_check (`inTrace`, default) or only in result.json.
 */
export async function writeVncuaRun(
  dir: string,
  opts: { partial?: boolean; success?: { index: number; dt: number; phase: 'immediate' | 'grace' | 'final'; inTrace?: boolean } } = {},
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const { server, client } = scenarioChunks();
  await writeRecording(join(dir, 'recording'), [syntheticConnection({ t0: T, width: W, height: H, server, client })]);
  // The connection stays open (a static screen sends nothing) until T+6000.
  await writeFile(
    join(dir, 'recording', 'recording.json'),
    JSON.stringify({
      format: 'vncua-recording',
      ...manifestTimeFields('vncua'),
      clock: 'epoch',
      upstream: 'tcp://x',
      connections: [{ index: 0, opened_at: T, closed_at: T + 6000 }],
    }),
  );
  const ok = opts.success;
  const check = ok ? { phase: ok.phase, at: T + ok.dt, ...SUCCESS_EVIDENCE } : undefined;
  const entries = ACTIONS.map((a, index) => ({
    index,
    action: a.action,
    params: a.params,
    task_marked_complete: ok ? index === ok.index : a.action === 'finish',
    started_at: T + a.at[0],
    ended_at: T + a.at[1],
    duration_ms: a.at[1] - a.at[0],
    ...(ok && index === ok.index && ok.inTrace !== false ? { success_check: check } : {}),
  }));
  await writeFile(join(dir, opts.partial ? 'partial_execution.json' : 'execution.json'), JSON.stringify(entries, null, 2));
  const verdict = ok ? { success: true, success_at: T + ok.dt, evidence: { ...SUCCESS_EVIDENCE, at: T + ok.dt, entry_index: ok.index, phase: ok.phase } } : {};
  if (!opts.partial) await writeFile(join(dir, 'result.json'), JSON.stringify({ status: 'finished', steps: 4, durationMs: 5001, ...verdict }));
  await writeFile(join(dir, 'task.json'), JSON.stringify({ id: 't1', goal: 'Click, then type ab' }));
  return dir;
}

/** Write a uitask run (execution.json without timing, recording/ without manifest, ns time records) into `dir`. */
export async function writeUitaskRun(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const { server, client } = scenarioChunks();
  await writeRecording(join(dir, 'recording'), [syntheticConnection({ t0: T, width: W, height: H, server, client })], { source: 'uitask' });
  // ACTIONS as uitask's record_action writes them.
  const entries = [uitaskClick({ x: 10, y: 10 }), uitaskType('ab'), uitaskWait(0.5), uitaskFinish(null, { done: true })];
  await writeFile(join(dir, 'execution.json'), uitaskExecutionJson(entries));
  return dir;
}

/**
 * Damage a run's recording in the middle: the server time record of the chunk sent at `at` gets a timestamp
 * going back before the recording (as a recorder's crash mid-write would leave), so the stream is usable only
 * up to the record before it, while the client stream and the manifest go on. Returns that record's time.
 */
export async function damageServerStreamAt(runDir: string, at: number): Promise<number> {
  const file = join(runDir, 'recording', 'server.time.bin');
  const bytes = new Uint8Array(await readFile(file));
  const { records } = parseTimeIndex(bytes);
  const i = records.findIndex((r) => r.t === at);
  if (i < 1) throw new Error(`no server chunk at ${at} after the first one`);
  writeTimeRecord(bytes, i * 16, T - 1000, records[i]!.end);
  await writeFile(file, bytes);
  return records[i - 1]!.t;
}

/** Rewrite a run's manifest with the connection never closed: the data ends with the last recorded byte. */
export async function openEndedManifest(runDir: string): Promise<void> {
  await writeFile(
    join(runDir, 'recording', 'recording.json'),
    JSON.stringify({ format: 'vncua-recording', ...manifestTimeFields('vncua'), connections: [{ index: 0, opened_at: T, closed_at: null }] }),
  );
}
