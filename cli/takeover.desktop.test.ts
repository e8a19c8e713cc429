/**
 * A person's takeover end to end on a real desktop (Xvnc, Chromium showing harness/agent/test-pages/
 * takeover.html), recorded through the recording proxy: the agent clicks its button and asks for help; the
 * test takes over through the Agent's LiveControl and, with raw HumanInput events as a viewer sends them,
 * clicks the page's "Person" button and types into its field (CDP confirms the page got each event); it
 * hands back, the agent clicks "Done" and finishes, and the page's success rule passes. Then, as a user
 * would: `vncua process` gives the person's steps before/after screenshots (marked in the step report),
 * `vncua export-trace --format uitask` leaves them out, `vncua export` marks them with actor "human".
 * The second test does the same through the run's own live endpoint (harness/live, started by run()):
 * live.json, POST /control, and the person's input from an RFB viewer on /rfb, as vncua serve relays noVNC.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../harness/agent/agent.ts';
import { startPageDesktop, tempOutputDir, type PageDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { keyEvent, pointer, statusWhere, until } from '../harness/agent/test-helpers/live.ts';
import { KEYSYM } from '../harness/keys/keysyms.ts';
import type { HumanInput } from '../harness/live/control.ts';
import type { StaticServer } from '../harness/static-server.ts';
import { serveDir } from '../harness/test-helpers/serve-dir.ts';
import type { ExportLine } from '../harness/trace/export-line.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import type { LiveAnnouncement, LiveStatus } from '../harness/live/control.ts';
import { connectVnc } from '../harness/rfb/index.ts';
import type { ActionScreenshotsFile } from '../recorder/process/output.ts';
import { recordingProxyRecorder } from '../recorder/recorder-factory.ts';
import { runVncua } from './test-helpers/child.ts';

/** Centres of the page's controls (takeover.html: fixed positions in the kiosk window). */
const AGENT = { x: 160, y: 70 };
const PERSON = { x: 160, y: 170 };
const FIELD = { x: 290, y: 260 };
const DONE = { x: 160, y: 370 };
/** Inside the Person button, away from where the cursor is drawn. */
const PERSON_PROBE = { x: 60, y: 150 };

interface PageState {
  clicks: { agent: number; person: number; done: number };
  downs: { agent: number; person: number; done: number; field: number };
  keys: number;
  field: string;
  focused: string | null;
}

/** Clicks its button, asks for help; after the handback clicks Done and finishes. */
class HelpAgent extends Agent {
  private step = 0;
  override async act(): Promise<boolean> {
    if (this.step++ === 0) {
      await this.mouseClick({ position: AGENT });
      this.askForHelp('click Person and type "Hi there" into the field, please');
      return false;
    }
    await this.mouseClick({ position: DONE });
    await this.finish();
    return true;
  }
}

let pages: StaticServer;
let d: PageDesktop;
let out: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  pages = await serveDir(fileURLToPath(new URL('../harness/agent/test-pages/', import.meta.url)));
  d = await startPageDesktop(`${pages.url}takeover.html`, {
    ready: (p) => p.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true),
  });
  out = await tempOutputDir('vncua-takeover-');
}, 90_000);

afterAll(async () => {
  await d?.close();
  await pages?.close();
  await out?.remove();
});

/** The RGB of one pixel of a PNG. */
async function pixel(file: string, p: { x: number; y: number }): Promise<number[]> {
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  const o = (p.y * info.width + p.x) * info.channels;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}

describe('a person takes over a real run', () => {
  it('the agent asks for help, a person clicks and types through the LiveControl, hands back, the agent finishes; the trace, the step report and the exports show whose steps are whose', async () => {
    const runDir = join(out.dir, 'runs', 'takeover');
    const state = () => d.page.evaluate(() => (window as unknown as { __state(): PageState }).__state());
    const agent = new HelpAgent({ outputDir: runDir, vncUrl: d.desktop.vncUrl, cdpUrl: d.desktop.cdpUrl, recorder: recordingProxyRecorder, task: 'takeover test' });
    const run = agent.run({ maxSteps: 5 });

    // The agent asked for help; once its loop is paused, take over.
    await statusWhere(agent, (s) => s.state === 'help', 'the agent asking for help', 30_000);
    await agent.pause();
    expect(agent.status()).toMatchObject({ state: 'help', help: 'click Person and type "Hi there" into the field, please', steps: 1 });
    expect((await state()).clicks.agent).toBe(1);
    expect(await agent.takeover('tester')).toEqual({ state: 'paused', holder: 'tester', help: null, steps: 1 });

    // A person's input, event by event as a viewer sends it, each one seen by the page before the next.
    const send = (e: HumanInput) => agent.input('tester', e);
    const pageSees = (what: string, cond: (s: PageState) => boolean) => until(async () => cond(await state()), `the page to see ${what}`, 15_000);
    send(pointer(PERSON.x - 30, PERSON.y + 5));
    send(pointer(PERSON.x, PERSON.y));
    send(pointer(PERSON.x, PERSON.y, 1));
    await pageSees('the press on Person', (s) => s.downs.person === 1);
    send(pointer(PERSON.x, PERSON.y, 0));
    await pageSees('the click on Person', (s) => s.clicks.person === 1);
    // As a person would, act again once the screen shows it: the agent's framebuffer (what a watcher sees) has the button dark.
    const fbPixel = (p: { x: number; y: number }) => [...agent.framebuffer()!.pixel(p.x, p.y).slice(0, 3)];
    await until(() => fbPixel(PERSON_PROBE).join() === '51,51,51', 'the Person button dark on the screen');
    send(pointer(FIELD.x, FIELD.y));
    send(pointer(FIELD.x, FIELD.y, 1));
    await pageSees('the press on the field', (s) => s.downs.field === 1);
    send(pointer(FIELD.x, FIELD.y, 0));
    await pageSees('the field focused', (s) => s.focused === 'field');
    let keys = 0;
    const typeKey = async (k: number | string) => {
      send(keyEvent(k, true));
      keys++;
      await pageSees(`key ${String(k)} down`, (s) => s.keys === keys);
      send(keyEvent(k, false));
    };
    send(keyEvent(KEYSYM.Shift_L, true));
    await typeKey('H');
    send(keyEvent(KEYSYM.Shift_L, false));
    for (const ch of 'i there') await typeKey(ch);
    await pageSees('the text typed', (s) => s.field === 'Hi there');
    // The last letter painted: the field's pixels just right of "Hi ther" are no longer all white.
    await until(() => {
      const fb = agent.framebuffer()!;
      for (let x = 44; x < 240; x++) for (let y = 250; y < 272; y++) if (fb.pixel(x, y)[0]! < 128) return true;
      return false;
    }, 'the typed text on the screen');
    expect(await state()).toMatchObject({ clicks: { agent: 1, person: 1, done: 0 }, field: 'Hi there' });

    const back = await agent.handback('tester');
    expect(back.holder).toBeNull();
    const result = await run;
    expect(result).toMatchObject({ status: 'finished', steps: 2, success: true, help_requests: 1, human_steps: 3 });
    expect(result.paused_ms).toBeGreaterThan(0);
    expect(await readResult(runDir)).toEqual(result);
    expect((await state()).clicks.done).toBe(1);

    // The trace: the person's steps between the agent's, in order, with actor "human".
    const { entries } = await readTrace(runDir);
    expect(entries.map((e) => [e.index, e.action, e.actor ?? 'agent', e.params])).toEqual([
      [0, 'mouse_click', 'agent', { position: AGENT, button: 'left', click_type: 'single' }],
      [1, 'mouse_click', 'human', { position: PERSON, button: 'left', click_type: 'single' }],
      [2, 'mouse_click', 'human', { position: FIELD, button: 'left', click_type: 'single' }],
      [3, 'type_text', 'human', { text: 'Hi there' }],
      [4, 'mouse_click', 'agent', { position: DONE, button: 'left', click_type: 'single' }],
      [5, 'finish', 'agent', {}],
    ]);
    for (const [i, e] of entries.entries()) {
      expect(e.ended_at!, `entry ${i}`).toBeGreaterThanOrEqual(e.started_at!);
      if (i > 0) expect(e.started_at!, `entry ${i} starts after the one before ended`).toBeGreaterThanOrEqual(entries[i - 1]!.ended_at!);
    }
    // The success check ran after the person's steps too (the page was not done yet), and saw the agent's Done click.
    expect(entries.slice(1, 4).map((e) => e.task_marked_complete)).toEqual([false, false, false]);
    expect(result.evidence?.entry_index).toBe(4);

    // vncua process: every step, the person's included, has before/after frames from the recording.
    const processed = await runVncua('process', [runDir], { deadlineMs: 120_000 });
    expect(processed.code, processed.stderr).toBe(0);
    const shots = JSON.parse(await readFile(join(runDir, 'action_screenshots.json'), 'utf8')) as ActionScreenshotsFile;
    expect(shots.warnings).toEqual([]);
    expect(shots.actions.map((a) => [a.index, a.actor ?? 'agent'])).toEqual(entries.map((e) => [e.index, e.actor ?? 'agent']));
    for (const a of shots.actions) {
      for (const f of [a.before, a.after]) expect((await stat(join(runDir, f!))).size, `${a.index} ${f}`).toBeGreaterThan(0);
    }
    // The person's click turned the Person button dark; their typing filled the field (probes away from the cursor).
    expect(await pixel(join(runDir, shots.actions[1]!.before!), PERSON_PROBE)).toEqual([0xff, 0xcc, 0x99]);
    expect(await pixel(join(runDir, shots.actions[1]!.after!), PERSON_PROBE)).toEqual([0x33, 0x33, 0x33]);
    const typed = shots.actions[3]!;
    const [before, after] = await Promise.all([
      sharp(join(runDir, typed.before!)).extract({ left: 40, top: 240, width: 500, height: 44 }).raw().toBuffer(),
      sharp(join(runDir, typed.after!)).extract({ left: 40, top: 240, width: 500, height: 44 }).raw().toBuffer(),
    ]);
    expect(before.equals(after)).toBe(false);
    const report = await readFile(join(runDir, 'action_screenshots.html'), 'utf8');
    expect(report.match(/<section class="step human[^"]*" id="step-[123]"/g)).toHaveLength(3);
    expect(report.match(/by a person<\/span>/g)).toHaveLength(3);

    // vncua export-trace --format uitask: the person's steps left out (uitask has no actor).
    const ex = await runVncua('export-trace', ['--format', 'uitask', runDir]);
    expect(ex.code, ex.stderr).toBe(0);
    expect(ex.stdout).toContain('3 entries of a person (a takeover) left out; --include-human keeps them');
    const uitask = JSON.parse(await readFile(join(runDir, 'uitask_execution.json'), 'utf8')) as Array<{ action: string }>;
    expect(uitask.map((e) => e.action)).toEqual(['mouse_click', 'mouse_click', 'finish']);

    // vncua export --format jsonl: every step, marked with its actor.
    const exportDir = join(out.dir, 'export');
    const jsonl = await runVncua('export', [join(out.dir, 'runs'), '--format', 'jsonl', '--out', exportDir], { deadlineMs: 120_000 });
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const lines = (await readFile(join(exportDir, 'steps.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportLine);
    expect(lines.map((l) => [l.step_index, l.actor])).toEqual([
      [0, 'agent'],
      [1, 'human'],
      [2, 'human'],
      [3, 'human'],
      [4, 'agent'],
      [5, 'agent'],
    ]);
    expect(lines.every((l) => l.screenshot_before !== null && l.screenshot_after !== null)).toBe(true);
  }, 240_000);

  it("the same through the run's own live endpoint: live.json, POST /control takeover (409 for a second person), input as an RFB watcher on /rfb, handback; the person's steps in the trace", async () => {
    await d.page.reload();
    await d.page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
    const runDir = join(out.dir, 'live', 'run');
    const state = () => d.page.evaluate(() => (window as unknown as { __state(): PageState }).__state());
    const agent = new HelpAgent({ outputDir: runDir, vncUrl: d.desktop.vncUrl, cdpUrl: d.desktop.cdpUrl, record: false, task: 'takeover over the endpoint' });
    const run = agent.run({ maxSteps: 5 });
    await statusWhere(agent, (s) => s.state === 'help', 'the agent asking for help', 30_000);
    const live = JSON.parse(await readFile(join(runDir, 'live.json'), 'utf8')) as LiveAnnouncement;
    expect((await stat(join(runDir, 'live.json'))).mode & 0o777).toBe(0o600);
    const control = async (op: string, who: string) => {
      const r = await fetch(`${live.url}/control?token=${live.token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op, who }) });
      return { status: r.status, body: (await r.json()) as LiveStatus & { code?: string; holder?: string | null } };
    };
    const taken = await control('takeover', 'tester');
    expect([taken.status, taken.body]).toEqual([200, { state: 'paused', holder: 'tester', help: null, steps: 1 }]);
    expect(await control('takeover', 'intruder')).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_TAKEN', holder: 'tester' } });

    // The person's viewer: an RFB client on /rfb (what noVNC does through vncua serve), fed from the agent's framebuffer.
    const viewer = await connectVnc(`${live.url.replace('http:', 'ws:')}/rfb?token=${live.token}&who=tester`, { timeoutMs: 20_000 });
    try {
      expect(viewer.resolution()).toEqual({ width: d.desktop.width, height: d.desktop.height });
      const pageSees = (what: string, cond: (s: PageState) => boolean) => until(async () => cond(await state()), `the page to see ${what}`, 15_000);
      viewer.pointerEvent(PERSON.x, PERSON.y, 0);
      viewer.pointerEvent(PERSON.x, PERSON.y, 1);
      await pageSees('the press on Person', (s) => s.downs.person === 1);
      viewer.pointerEvent(PERSON.x, PERSON.y, 0);
      await pageSees('the click on Person', (s) => s.clicks.person === 1);
      // The viewer sees the result, through the endpoint.
      await until(async () => {
        await viewer.waitForUpdate({ timeoutMs: 1000 }).catch(() => {});
        return [...viewer.framebuffer.pixel(PERSON_PROBE.x, PERSON_PROBE.y).slice(0, 3)].join() === '51,51,51';
      }, 'the Person button dark in the viewer');
      viewer.pointerEvent(FIELD.x, FIELD.y, 1);
      await pageSees('the press on the field', (s) => s.downs.field === 1);
      viewer.pointerEvent(FIELD.x, FIELD.y, 0);
      await pageSees('the field focused', (s) => s.focused === 'field');
      let keys = 0;
      for (const ch of 'ok') {
        viewer.keyEvent(ch.codePointAt(0)!, true);
        keys++;
        await pageSees(`key ${ch}`, (s) => s.keys === keys);
        viewer.keyEvent(ch.codePointAt(0)!, false);
      }
      await pageSees('the text typed', (s) => s.field === 'ok');
    } finally {
      await viewer.close();
    }
    expect(await control('handback', 'intruder')).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_NOT_HOLDER' } });
    expect(await control('handback', 'tester')).toMatchObject({ status: 200, body: { holder: null } });
    const result = await run;
    expect(result).toMatchObject({ status: 'finished', steps: 2, help_requests: 1, human_steps: 3 });
    expect(result.live_error).toBeUndefined();
    await expect(stat(join(runDir, 'live.json'))).rejects.toThrow();
    const { entries } = await readTrace(runDir);
    expect(entries.map((e) => [e.action, e.actor ?? 'agent', e.params])).toEqual([
      ['mouse_click', 'agent', { position: AGENT, button: 'left', click_type: 'single' }],
      ['mouse_click', 'human', { position: PERSON, button: 'left', click_type: 'single' }],
      ['mouse_click', 'human', { position: FIELD, button: 'left', click_type: 'single' }],
      ['type_text', 'human', { text: 'ok' }],
      ['mouse_click', 'agent', { position: DONE, button: 'left', click_type: 'single' }],
      ['finish', 'agent', {}],
    ]);
  }, 180_000);
});
