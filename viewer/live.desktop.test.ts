/**
 * vncua serve's live side in a real browser: a real `vncua run` (live/test-pages/help-agent.ts: a step every
 * half second until told to ask for help) on a real desktop showing a page with a text field, and a real
 * `vncua serve` over its results root. Playwright (Chromium) sees the run live in the list, opens its page: the
 * noVNC canvas holds the desktop's pixels exactly (compared with a screenshot the agent takes through its own
 * connection; the canvas is the framebuffer's size, CSS-scaled), steps appear as they are written; the agent asks for help (flagged on the
 * list and the page); a second browser's takeover is refused naming the holder; the first takes over,
 * clicks and types into the desktop's field (checked through CDP), hands back; the run finishes, the page turns
 * into the recorded trace viewer, and execution.json holds the person's actions (actor "human").
 * Then `vncua eval --serve` with two workers: both live at once as tiles of the list page.
 * Screenshots of each view are kept under the test's temp dir (artifacts/) and copied to docs/.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_BIN } from '../harness/cdp/test-helpers.ts';
import { launchDesktop, type Desktop } from '../harness/desktop/index.ts';
import { cdpEvaluate, servePage } from '../harness/desktop/test-helpers.ts';
import { HELP_REASON } from './live/test-pages/help-agent.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = await readFile(new URL('./live/test-pages/takeover.html', import.meta.url), 'utf8');
const TYPED = 'hello from a person';
/** The field's middle on the 1280x800 desktop (test-pages/takeover.html: left 100, top 120, 800x60). */
const FIELD = { x: 500, y: 150 };

/** A vncua child: its output so far, and a promise of its exit. */
interface Child {
  proc: ChildProcess;
  out: () => string;
  exit: Promise<number | null>;
}
/** Every child started, stopped in afterAll whatever happened (Ctrl-C first, so a suite tears its desktops down). */
const children: Child[] = [];
function vncua(args: string[]): Child {
  const proc = spawn(process.execPath, [join(REPO, 'bin', 'vncua.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d));
  proc.stderr!.on('data', (d: Buffer) => (out += d));
  const child = { proc, out: () => out, exit: new Promise<number | null>((r) => proc.on('exit', (c) => r(c))) };
  children.push(child);
  return child;
}
/** Ctrl-C, then kill -9 if it has not exited within `ms`. */
async function stop(c: Child, ms = 30_000): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill('SIGINT');
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), ms);
  await c.exit;
  clearTimeout(timer);
}
/** The first URL `child` prints after `prefix`. */
async function urlOf(child: Child, prefix: RegExp, ms = 120_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const m = new RegExp(`${prefix.source}(http://\\S+)`).exec(child.out());
    if (m) return m[1]!.replace(/[)(]+$/, '');
    if (Date.now() > end || child.proc.exitCode !== null) throw new Error(`no URL printed:\n${child.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let dir: string;
let artifacts: string;
let root: string;
let desktop: Desktop;
let page: { url: string; close(): Promise<void> };
let serve: Child;
let serveUrl: string;
let runChild: Child;
let browser: Browser;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let a: Page;
let b: Page;
const RUN = 'takeover-run';
const HELP_AGENT = 'viewer/live/test-pages/help-agent.ts';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-live-desktop-'));
  artifacts = join(dir, 'artifacts');
  root = join(dir, 'runs');
  await mkdir(artifacts);
  await mkdir(root);
  page = await servePage(PAGE);
  desktop = await launchDesktop({ url: page.url, size: '1280x800', timeoutMs: 60_000 });
  serve = vncua(['serve', root]);
  serveUrl = await urlOf(serve, /vncua serve: /);
  // The agent points about every half second until the test has it ask for help (then it waits for a person).
  runChild = vncua([
    'run',
    '--agent',
    HELP_AGENT,
    '--vnc',
    desktop.vncUrl,
    '--cdp',
    desktop.cdpUrl,
    '--out',
    join(root, RUN),
    '--max-steps',
    '1000',
    '--',
    '--help-when',
    join(dir, 'ask-for-help'),
    '--shot-when',
    join(dir, 'shoot'),
  ]);
  browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  ctxA = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  ctxB = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  a = await ctxA.newPage();
  b = await ctxB.newPage();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const c of children) await stop(c);
  await desktop?.close();
  await page?.close();
  if (dir && !process.env.VNCUA_KEEP_ARTIFACTS) await rm(dir, { recursive: true, force: true });
  else if (dir) process.stderr.write(`artifacts kept in ${artifacts}\n`);
});

/** The live page's noVNC canvas as RGB, and its size (its backing store: the framebuffer's size). */
async function canvasRgb(p: Page): Promise<{ rgb: Buffer; width: number; height: number }> {
  const r = await p.evaluate(() => {
    const c = document.querySelector('#live-screen .live-rfb:not([hidden]) canvas') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const rgb = new Uint8Array((d.length / 4) * 3);
    for (let i = 0, j = 0; i < d.length; i += 4, j += 3) {
      rgb[j] = d[i]!;
      rgb[j + 1] = d[i + 1]!;
      rgb[j + 2] = d[i + 2]!;
    }
    let s = '';
    for (let i = 0; i < rgb.length; i += 0x8000) s += String.fromCharCode(...rgb.subarray(i, i + 0x8000));
    return { b64: btoa(s), width: c.width, height: c.height };
  });
  return { rgb: Buffer.from(r.b64, 'base64'), width: r.width, height: r.height };
}

/** Until every live tile of the list page shows its desktop (the page's background, not black, at a canvas's middle). */
async function tilesPainted(p: Page, n: number): Promise<void> {
  await p.waitForFunction(
    (want) => {
      const canvases = Array.from(document.querySelectorAll('.live-tile[data-connected="1"] canvas')) as HTMLCanvasElement[];
      return (
        canvases.length === want &&
        canvases.every((c) => {
          const d = c.getContext('2d')!.getImageData(c.width >> 1, c.height >> 2, 1, 1).data;
          return d[0]! + d[1]! + d[2]! > 300;
        })
      );
    },
    n,
    { timeout: 120_000 },
  );
}

describe('vncua serve, live, in Chromium', () => {
  it('lists the running run as live, with a connected thumbnail, without reload', async () => {
    await a.goto(serveUrl);
    await a.waitForSelector('body[data-ready="list"]');
    const tile = a.locator(`.live-tile[data-dir="${RUN}"]`);
    await tile.waitFor({ timeout: 120_000 });
    await a.waitForSelector(`.live-tile[data-dir="${RUN}"][data-connected="1"]`, { timeout: 30_000 });
    await a.waitForSelector(`#runs tbody tr.live[data-dir="${RUN}"]`, { timeout: 30_000 });
    expect(await tile.locator('.live-state').textContent()).toMatch(/running|connecting/);
    // The row has the live badge in its task cell and the run's state in its status cell.
    expect(await a.locator(`#runs tbody tr.live[data-dir="${RUN}"] .live-badge`).count()).toBe(1);
    await tilesPainted(a, 1);
    await a.screenshot({ path: join(artifacts, 'live-list.png') });
  }, 300_000);

  it("the run's page: the noVNC canvas holds the desktop's pixels exactly; steps appear as they are written", async () => {
    await a.goto(`${serveUrl}?run=${encodeURIComponent(RUN)}`);
    await a.waitForSelector('body[data-ready="live"]');
    await a.waitForSelector('#live-screen[data-connected="1"][data-interactive="0"]', { timeout: 30_000 });
    // What the agent's own connection shows (a screenshot it takes when asked, no cursor drawn): the page is
    // still (only the agent's pointer moves, and the pointer is no pixel of the agent's framebuffer), so the canvas
    // must hold exactly those pixels. (A VNC client of the test's own would not do: TigerVNC draws the pointer that
    // another client moved into that client's framebuffer.)
    await writeFile(join(dir, 'shoot'), '');
    const shot = join(dir, 'shoot.png');
    await expect
      .poll(
        () =>
          stat(shot).then(
            () => true,
            () => false,
          ),
        { timeout: 30_000 },
      )
      .toBe(true);
    const want = await sharp(shot).removeAlpha().raw().toBuffer();
    let last = '';
    await expect
      .poll(
        async () => {
          const got = await canvasRgb(a);
          if (got.width !== 1280 || got.height !== 800) return (last = `canvas ${got.width}x${got.height}`);
          let diff = 0;
          for (let i = 0; i < want.length; i++) if (got.rgb[i] !== want[i]) diff++;
          return (last = diff === 0 ? 'equal' : `${diff} bytes differ`);
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe('equal');
    expect(last).toBe('equal');
    // Steps stream in: their count grows while the run goes on, and matches the trace the run writes.
    const n0 = Number((await a.getAttribute('#live-steps', 'data-count')) ?? 0);
    await a.waitForFunction((n) => Number(document.querySelector('#live-steps')?.getAttribute('data-count')) >= n + 2, n0, { timeout: 60_000 });
    const shown = Number(await a.getAttribute('#live-steps', 'data-count'));
    const written = JSON.parse(await readFile(join(root, RUN, 'partial_execution.json'), 'utf8')) as unknown[];
    expect(written.length).toBeGreaterThanOrEqual(shown);
    await a.screenshot({ path: join(artifacts, 'live-run.png') });
  }, 300_000);

  it('the agent asks for help: flagged on the list and on the run page with its reason and a take-over prompt', async () => {
    await writeFile(join(dir, 'ask-for-help'), '');
    await a.waitForSelector('#live-help:not([hidden])', { timeout: 60_000 });
    expect(await a.textContent('#live-help')).toContain(HELP_REASON);
    expect(await a.getAttribute('#live-state', 'data-state')).toBe('help');
    await b.goto(serveUrl);
    await b.waitForSelector('#live-banner:not([hidden])', { timeout: 30_000 });
    expect(await b.textContent('#live-banner')).toContain(`${RUN} asks for help: ${HELP_REASON}`);
    await b.waitForSelector(`.live-tile.help[data-dir="${RUN}"]`);
    await tilesPainted(b, 1);
    await b.screenshot({ path: join(artifacts, 'live-help-list.png') });
    await a.screenshot({ path: join(artifacts, 'live-help.png') });
  }, 300_000);

  it('takeover from the help prompt: one person at a time (the other is told who holds it); the holder types into the desktop; hand back; the run finishes', async () => {
    await a.click('#help-takeover');
    await a.waitForSelector('#handback:not([hidden])', { timeout: 30_000 });
    const me = (await a.textContent('#live-who b'))!;
    await a.waitForSelector('#live-screen[data-connected="1"][data-interactive="1"]', { timeout: 30_000 });
    expect(await a.textContent('#live-state')).toBe(`taken over by ${me}`);
    // Another browser: watching is fine, taking over is refused with the holder's name.
    await b.goto(`${serveUrl}?run=${encodeURIComponent(RUN)}`);
    await b.waitForSelector('#live-screen[data-connected="1"]', { timeout: 30_000 });
    await b.click('#takeover');
    await b.waitForSelector('#live-notice[data-code="LIVE_ERR_TAKEN"]');
    expect(await b.textContent('#live-notice')).toContain(`${me} has taken over this desktop`);
    await b.screenshot({ path: join(artifacts, 'live-taken.png') });
    // Click the field through the scaled canvas, type.
    const canvas = a.locator('#live-screen .live-rfb:not([hidden]) canvas');
    const box = (await canvas.boundingBox())!;
    await a.mouse.click(box.x + (FIELD.x * box.width) / 1280, box.y + (FIELD.y * box.height) / 800);
    await a.keyboard.type(TYPED, { delay: 30 });
    await expect.poll(() => cdpEvaluate(desktop.cdpUrl, 'document.querySelector("#field").value'), { timeout: 30_000 }).toBe(TYPED);
    await a.screenshot({ path: join(artifacts, 'live-takeover.png') });
    await a.click('#handback');
    await a.waitForSelector('#takeover:not([hidden])');
    await a.waitForSelector('#live-screen[data-connected="1"][data-interactive="0"]', { timeout: 30_000 });
    // The run goes on to its end; the page becomes the recorded trace viewer.
    expect(await runChild.exit).toBe(0);
    await a.waitForSelector('body[data-ready="run"]', { timeout: 60_000 });
    expect(new URL(a.url()).searchParams.get('run')).toBe(RUN);
    const entries = JSON.parse(await readFile(join(root, RUN, 'execution.json'), 'utf8')) as Array<{ action: string; params: Record<string, unknown>; actor?: string }>;
    const human = entries.filter((e) => e.actor === 'human');
    expect(human.map((e) => e.action)).toContain('mouse_click');
    expect(human.find((e) => e.action === 'type_text')?.params.text).toBe(TYPED);
    expect(await a.locator('#steps .step.human').count()).toBe(human.length);
    await a.screenshot({ path: join(artifacts, 'live-ended-trace.png') });
  }, 300_000);

  it('vncua eval --serve: every worker live at once as a tile of the list page', async () => {
    const suite = join(dir, 'suite');
    await mkdir(suite);
    await writeFile(join(suite, 'takeover.html'), PAGE);
    const tasks = ['w1', 'w2'].map((id) => ({ id, goal: 'watch me', url: 'takeover.html', success: { sentinel: 'never-there' }, maxSteps: 40 }));
    await writeFile(join(suite, 'tasks.json'), JSON.stringify(tasks));
    const ev = vncua(['eval', '--tasks', join(suite, 'tasks.json'), '--agent', HELP_AGENT, '--workers', '2', '--out', join(dir, 'eval'), '--no-score', '--serve']);
    try {
      const url = await urlOf(ev, /eval: live view and results at /);
      await a.goto(url);
      await a.waitForSelector('body[data-ready="list"]');
      await a.waitForFunction(() => document.querySelectorAll('.live-tile[data-connected="1"]').length === 2, null, { timeout: 180_000 });
      await tilesPainted(a, 2);
      // The table follows the runs that started (no reload): both rows, marked live.
      await a.waitForFunction(() => document.querySelectorAll('#runs tbody tr.live').length === 2, null, { timeout: 30_000 });
      expect((await a.locator('.live-tile').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.dir))).sort()).toEqual([
        'help-agent/1280_800/w1',
        'help-agent/1280_800/w2',
      ]);
      await a.screenshot({ path: join(artifacts, 'live-grid.png') });
    } finally {
      await stop(ev);
    }
    for (const f of ['live-list.png', 'live-run.png', 'live-help-list.png', 'live-takeover.png', 'live-taken.png', 'live-grid.png'])
      await copyFile(join(artifacts, f), join(REPO, 'docs', `viewer-${f}`));
  }, 300_000);
});
