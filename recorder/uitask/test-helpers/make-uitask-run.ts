/**
 * Test-only: build a uitask run directory from a real session, the way the Python uitask harness
 * leaves one: `execution.json` (`{ action, params, task_marked_complete }` per step, no index, no
 * timing, params as uitask's record_action writes them: build steps with the named helpers of
 * harness/trace/test-fixtures/uitask.ts; written as its json.dump writes it) and
 * `recording/{client,server}.{rfb,time}.bin` (ns time records, no recording.json).
 *
 * The session: a VNC client connected through a recording relay (uitask-relay.ts) to a desktop's
 * plain-TCP VNC port, asking for what uitask's client asks for (Tight with JPEG, CopyRect; the
 * client always adds the Cursor, LastRect and DesktopSize pseudo-encodings), drives each step with
 * the Agent's InputDriver (same pacing and key plans as vncua), with think time and a screenshot
 * before each step as an agent has. The times measured around each step are returned as ground
 * truth, NOT written (uitask does not write them).
 *
 * See synthetic-uitask-run.ts for a run whose server stream holds TightPNG rectangles.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUTTON_BITS, CLICK_COUNTS, SCROLL_WHEEL, type ClickType, type MouseButton, type ScrollDirection } from '../../../harness/agent/arguments.ts';
import { InputDriver } from '../../../harness/agent/input.ts';
import { sleep } from '../../../harness/agent/round-trip.ts';
import { parseKeys, planKeyPress, planTypeText } from '../../../harness/keys/index.ts';
import { connectVnc, type VncClient } from '../../../harness/rfb/index.ts';
import { now } from '../../../harness/trace/clock.ts';
import { uitaskExecutionJson, type UitaskJsonEntry } from '../../../harness/trace/test-fixtures/uitask.ts';
import { normalizeUitaskEntry } from '../../../harness/trace/uitask.ts';
import { startUitaskRelay } from './uitask-relay.ts';

export { makeSyntheticUitaskRun } from './synthetic-uitask-run.ts';
export type { SyntheticUitaskRun } from './synthetic-uitask-run.ts';

/** One step of a uitask trace, exactly as its execution.json holds it (uitaskClick(...), uitaskType(...)...). */
export type UitaskStep = UitaskJsonEntry;

/** Options of makeUitaskRun. */
export interface MakeUitaskRunOptions {
  /** The run directory to write (created). */
  dir: string;
  /** The desktop's plain-TCP VNC endpoint (Desktop.tcpUrl): uitask dials raw TCP. */
  vncTcpUrl: string;
  /** Steps to perform and record. */
  steps: UitaskStep[];
  /** Think time before each step (and after the last), ms (default 300). */
  thinkMs?: number;
  /** The task, written to task.json as `{ "task": ... }` when given. */
  task?: string;
  /** Tight JPEG quality 0..9 (default 6). */
  jpegQuality?: number;
  signal?: AbortSignal;
  /** Timeout of the connection and of each wait (default 15 000 ms). */
  timeoutMs?: number;
}

/** What makeUitaskRun made. */
export interface UitaskRun {
  dir: string;
  /** The content of execution.json. */
  execution: UitaskJsonEntry[];
  /** Per step, measured around its input (epoch ms, the recording's clock); not on disk. */
  truth: Array<{ started_at: number; ended_at: number }>;
  /** Rectangles the live client received, by encoding name (which encodings the server really used). */
  rects: Record<string, number>;
  /** Compressed rectangles (Tight JPEG / PNG) the live client decoded after the first update. */
  images: { jpeg: number; png: number };
  /** Bytes recorded per direction. */
  bytes: { client: number; server: number };
}

/** Record a real session of `steps` into a uitask-style run directory. */
export async function makeUitaskRun(o: MakeUitaskRunOptions): Promise<UitaskRun> {
  const thinkMs = o.thinkMs ?? 300;
  const timeoutMs = o.timeoutMs ?? 15_000;
  await mkdir(o.dir, { recursive: true });
  const relay = await startUitaskRelay(o.vncTcpUrl, join(o.dir, 'recording'));
  const execution: UitaskRun['execution'] = [];
  const truth: UitaskRun['truth'] = [];
  const images = { jpeg: 0, png: 0 };
  let client: VncClient | null = null;
  let rects: Record<string, number> = {};
  try {
    client = await connectVnc(relay.url, { encodings: ['tight', 'copyrect'], jpegQuality: o.jpegQuality ?? 6, signal: o.signal, timeoutMs });
    countImages(client, images);
    const { width, height } = client.resolution();
    const driver = new InputDriver(client, { x: Math.floor(width / 2), y: Math.floor(height / 2) });
    for (const step of o.steps) {
      await sleep(thinkMs, o.signal);
      await client.screenshot({ cursor: true, signal: o.signal, timeoutMs });
      const startedAt = now();
      await perform(driver, step, o.signal);
      truth.push({ started_at: startedAt, ended_at: now() });
      execution.push(step);
    }
    await sleep(thinkMs, o.signal);
    await client.screenshot({ cursor: true, signal: o.signal, timeoutMs });
    rects = client.rectStats();
  } finally {
    try {
      await client?.close();
    } catch {
      // closing anyway
    }
    await Promise.race([relay.done, new Promise((r) => setTimeout(r, 2000))]);
    await relay.close();
  }
  await writeFile(join(o.dir, 'execution.json'), uitaskExecutionJson(execution));
  if (o.task !== undefined) await writeFile(join(o.dir, 'task.json'), JSON.stringify({ task: o.task }));
  return { dir: o.dir, execution, truth, rects, images, bytes: relay.bytes };
}

/** Perform one step (read as vncua reads uitask's entries) with vncua's input sequences. */
async function perform(d: InputDriver, step: UitaskStep, signal: AbortSignal | undefined): Promise<void> {
  const read = normalizeUitaskEntry(step, 0);
  if ('issue' in read) throw new Error(`not a uitask entry: ${read.issue.field}: ${read.issue.problem}`);
  const { action, params } = read.entry;
  const p = params as Record<string, unknown>;
  const at = (v: unknown) => {
    const q = v as { x: number; y: number };
    return { x: Math.round(q.x), y: Math.round(q.y) };
  };
  const o = { signal };
  switch (action) {
    case 'mouse_move':
      return d.move(at(p.position), o);
    case 'mouse_click':
      return void (await d.click(
        p.position === undefined ? d.pointer : at(p.position),
        BUTTON_BITS[(p.button ?? 'left') as MouseButton],
        CLICK_COUNTS[(p.click_type ?? 'single') as ClickType],
        o,
      ));
    case 'mouse_drag':
      return d.drag(at(p.start), at(p.end), BUTTON_BITS[(p.button ?? 'left') as MouseButton], o);
    case 'mouse_scroll':
      return d.scroll(at(p.position), SCROLL_WHEEL[p.direction as ScrollDirection], (p.repeat as number | undefined) ?? 1, o);
    case 'press_keys':
      return d.keys(planKeyPress(parseKeys(p.keys as string), { alreadyMapped: d.mapped }), o);
    case 'type_text':
      return d.keys(planTypeText(p.text as string, { alreadyMapped: d.mapped }), o);
    case 'page_navigation':
      return d.keys(planKeyPress(parseKeys(p.direction === 'forward' ? 'alt+Right' : 'alt+Left')), o);
    case 'wait':
      return sleep(((p.seconds as number | undefined) ?? 0) * 1000, signal);
    case 'finish':
      return;
  }
}

/** Count the compressed images the client's framebuffer decodes from now on. */
function countImages(client: VncClient, images: { jpeg: number; png: number }): void {
  const fb = client.framebuffer;
  const image = fb.image.bind(fb);
  fb.image = (x, y, w, h, format, data) => {
    images[format]++;
    image(x, y, w, h, format, data);
  };
}
