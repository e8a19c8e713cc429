/**
 * Test fixtures for the step report: a run directory with real PNGs (one distinct colour per
 * step, made by sharp) and an action_screenshots.json covering every action kind.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { ActionScreenshotsInput } from '../schema.ts';

/** Untrusted text with every HTML-special character and two injection attempts. */
export const NASTY_TEXT = `<img src=x id="injected" onerror="window.__pwned=1"><script>window.__pwned=2</script> & "dq" 'sq' </pre></section>`;

/** An expected marker centre in screen pixels of the step's images. */
export interface ExpectedMarker {
  role: 'point' | 'start' | 'end';
  x: number;
  y: number;
}

/** One fixture step: the JSON entry plus what the test expects to see. */
export interface FixtureStep {
  entry: Record<string, unknown>;
  markers: ExpectedMarker[];
  /** Colour of the before / after image (null when the entry has no image). */
  colors: { before: [number, number, number] | null; after: [number, number, number] | null };
}

/** A distinct, saturated colour for step `i` (before) or a darker shade (after). */
export function stepColor(i: number, after: boolean): [number, number, number] {
  const hue = (i * 47) % 360;
  const c = after ? 0.55 : 0.9;
  const f = (n: number) => {
    const k = (n + hue / 60) % 6;
    return Math.round(255 * c * (1 - Math.max(0, Math.min(k, 4 - k, 1))) + (after ? 20 : 10));
  };
  return [f(5), f(3), f(1)];
}

/** Writes a solid-colour PNG. */
export async function writePng(path: string, width: number, height: number, rgb: [number, number, number]): Promise<void> {
  const buf = await sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  await writeFile(path, buf);
}

const W = 320;
const H = 200;

/** The steps of the every-action-kind fixture (positions in a 320×200 screen; one step uses 400×250 images). */
export function allKindsSteps(): Array<{ action: string; params: Record<string, unknown>; markers: ExpectedMarker[]; extra?: Record<string, unknown>; images?: boolean }> {
  return [
    { action: 'mouse_move', params: { position: { x: 40, y: 30 } }, markers: [{ role: 'point', x: 40, y: 30 }] },
    { action: 'mouse_click', params: { position: { x: 100, y: 50 }, button: 'left', click_type: 'single' }, markers: [{ role: 'point', x: 100, y: 50 }] },
    // No position: the click happened where the pointer was (the previous click's position).
    { action: 'mouse_click', params: { button: 'left', click_type: 'double' }, markers: [{ role: 'point', x: 100, y: 50 }] },
    { action: 'mouse_click', params: { position: { x: 300.5, y: 190.25 }, button: 'right', click_type: 'single' }, markers: [{ role: 'point', x: 300.5, y: 190.25 }] },
    {
      action: 'mouse_drag',
      params: { start: { x: 20, y: 20 }, end: { x: 250, y: 150 }, button: 'left' },
      markers: [
        { role: 'start', x: 20, y: 20 },
        { role: 'end', x: 250, y: 150 },
      ],
    },
    { action: 'mouse_scroll', params: { position: { x: 160, y: 100 }, direction: 'down', repeat: 3 }, markers: [{ role: 'point', x: 160, y: 100 }] },
    { action: 'type_text', params: { text: NASTY_TEXT }, markers: [] },
    { action: 'press_keys', params: { keys: 'ctrl+<' }, markers: [] },
    { action: 'page_navigation', params: { direction: 'back' }, markers: [] },
    { action: 'wait', params: { seconds: 0.5 }, markers: [] },
    // The screen was resized: this step's images are 400×250.
    {
      action: 'mouse_click',
      params: { position: { x: 380, y: 240 }, button: 'left', click_type: 'triple' },
      markers: [{ role: 'point', x: 380, y: 240 }],
      extra: { width: 400, height: 250 },
    },
    // A failed action whose frames the recording does not reach.
    {
      action: 'mouse_click',
      params: { position: { x: 5000, y: 10 }, button: 'left', click_type: 'single', [NASTY_TEXT]: NASTY_TEXT },
      markers: [],
      images: false,
      extra: { error: { code: 'ACTION_ERR_OFF_SCREEN', message: NASTY_TEXT } },
    },
    { action: 'finish', params: {}, markers: [], extra: { task_marked_complete: true } },
  ];
}

/** Creates a run directory with PNGs and action_screenshots.json; returns the dir and per-step expectations. */
export async function makeRunDir(
  opts: { steps?: ReturnType<typeof allKindsSteps>; task?: string | null; dir?: string } = {},
): Promise<{ dir: string; steps: FixtureStep[]; data: ActionScreenshotsInput }> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'vncua-report-')));
  await mkdir(join(dir, 'action_screenshots'), { recursive: true });
  const specs = opts.steps ?? allKindsSteps();
  const t0 = 1_760_000_000_000;
  const steps: FixtureStep[] = [];
  const writes: Promise<void>[] = [];
  for (const [i, s] of specs.entries()) {
    const w = (s.extra?.width as number | undefined) ?? W;
    const h = (s.extra?.height as number | undefined) ?? H;
    const nn = String(i).padStart(4, '0');
    const withImages = s.images !== false;
    const colors = { before: withImages ? stepColor(i, false) : null, after: withImages ? stepColor(i, true) : null };
    if (withImages) {
      writes.push(writePng(join(dir, 'action_screenshots', `${nn}_before.png`), w, h, colors.before!));
      writes.push(writePng(join(dir, 'action_screenshots', `${nn}_after.png`), w, h, colors.after!));
    }
    const started = t0 + i * 1500;
    const entry: Record<string, unknown> = {
      index: i,
      action: s.action,
      params: s.params,
      started_at: started,
      ended_at: started + 120.5,
      duration_ms: 120.5,
      task_marked_complete: false,
      error: null,
      before: withImages ? `action_screenshots/${nn}_before.png` : null,
      after: withImages ? `action_screenshots/${nn}_after.png` : null,
      before_at: withImages ? started - 12 : null,
      after_at: withImages ? started + 480 : null,
      settled: withImages ? i % 2 === 0 : null,
      width: w,
      height: h,
      ...s.extra,
    };
    steps.push({ entry, markers: s.markers, colors });
    if (writes.length >= 32) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  const data: ActionScreenshotsInput = {
    version: 1,
    source: 'vncua',
    alignment: 'timestamps',
    task: opts.task === undefined ? `Find the <b>cheapest</b> flight & book it; "quotes" 'apos' ${NASTY_TEXT}` : opts.task,
    outcome: { status: 'finished', steps: specs.length, duration_ms: specs.length * 1500, success: true },
    width: W,
    height: H,
    settle_ms: 1000,
    warnings: [{ code: 'RECORDING_ERR_TRUNCATED', message: `the server stream ends early ${NASTY_TEXT}` }],
    actions: steps.map((s) => s.entry) as ActionScreenshotsInput['actions'],
  };
  await writeFile(join(dir, 'action_screenshots.json'), JSON.stringify(data, null, 2));
  return { dir, steps, data };
}

/** `n` click steps at varying positions (for the 300-step report). */
export function manySteps(n: number): ReturnType<typeof allKindsSteps> {
  return Array.from({ length: n }, (_, i) => {
    const x = (i * 37) % W;
    const y = (i * 23) % H;
    return { action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' }, markers: [{ role: 'point' as const, x, y }] };
  });
}
