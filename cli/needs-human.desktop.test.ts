/**
 * needsHuman 'ask' on a real desktop (Xvnc, Chromium showing harness/agent/test-pages/takeover.html): the agent clicks its button and
 * ends its step with finish({ status: 'needs_human', reason }); served live, the run does not end but asks for help
 * with that reason; a person takes over through the LiveControl, clicks "Person" and types into the field, hands back;
 * the agent goes on, clicks "Done" and finishes, and the page's success rule passes. The trace keeps the needs_human
 * finish (meta help_requested), and scoring counts the success as assisted (a person's steps came first).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scoreRunDir } from '../eval/score.ts';
import { KEYSYM } from '../harness/keys/keysyms.ts';
import type { HumanInput } from '../harness/live/control.ts';
import type { StaticServer } from '../harness/static-server.ts';
import { serveDir } from '../harness/test-helpers/serve-dir.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import { Agent } from '../harness/agent/agent.ts';
import { startPageDesktop, tempOutputDir, type PageDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { keyEvent, pointer, statusWhere, until } from '../harness/agent/test-helpers/live.ts';

/** Centres of the page's controls (takeover.html: fixed positions in the kiosk window). */
const AGENT = { x: 160, y: 70 };
const PERSON = { x: 160, y: 170 };
const FIELD = { x: 290, y: 260 };
const DONE = { x: 160, y: 370 };
const REASON = 'A person must press Person and type "Hi there" into the field.';

interface PageState {
  clicks: { agent: number; person: number; done: number };
  downs: { agent: number; person: number; done: number; field: number };
  keys: number;
  field: string;
  focused: string | null;
}

/** Clicks its button and says it needs a person; once given back the run, clicks Done and finishes. */
class NeedsHumanAgent extends Agent {
  private step = 0;
  override async act(): Promise<boolean> {
    if (this.step++ === 0) {
      await this.mouseClick({ position: AGENT });
      await this.finish({ status: 'needs_human', reason: REASON });
      return true;
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
  out = await tempOutputDir('vncua-needs-human-');
}, 90_000);

afterAll(async () => {
  await d?.close();
  await pages?.close();
  await out?.remove();
});

describe("needsHuman: 'ask' on a real run", () => {
  it('a needs_human finish asks for help; after a person acts and hands back the agent goes on and the task passes, as an assisted success', async () => {
    const runDir = join(out.dir, 'runs', 'needs-human', '1280_800', 'takeover');
    const state = () => d.page.evaluate(() => (window as unknown as { __state(): PageState }).__state());
    const agent = new NeedsHumanAgent({ outputDir: runDir, vncUrl: d.desktop.vncUrl, cdpUrl: d.desktop.cdpUrl, record: false, needsHuman: 'ask', task: 'needs a person' });
    const run = agent.run({ maxSteps: 5 });

    await statusWhere(agent, (s) => s.state === 'help', 'the needs_human help request', 30_000);
    expect(agent.status()).toMatchObject({ state: 'help', help: REASON, steps: 1 });
    expect(await agent.takeover('tester')).toMatchObject({ state: 'paused', holder: 'tester' });
    expect((await state()).clicks).toEqual({ agent: 1, person: 0, done: 0 });

    const send = (e: HumanInput) => agent.input('tester', e);
    const pageSees = (what: string, cond: (s: PageState) => boolean) => until(async () => cond(await state()), `the page to see ${what}`, 15_000);
    const click = async (p: { x: number; y: number }, what: string, seen: (s: PageState) => boolean) => {
      send(pointer(p.x, p.y));
      send(pointer(p.x, p.y, 1));
      await pageSees(`the press on ${what}`, seen);
      send(pointer(p.x, p.y, 0));
    };
    await click(PERSON, 'Person', (s) => s.downs.person === 1);
    await pageSees('the click on Person', (s) => s.clicks.person === 1);
    await click(FIELD, 'the field', (s) => s.downs.field === 1);
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
    // The agent has not acted while the person held the run.
    expect(agent.status().steps).toBe(1);

    await agent.handback('tester');
    const result = await run;
    expect(result).toMatchObject({ status: 'finished', steps: 2, success: true, help_requests: 1, human_steps: 3 });
    expect(result.reason).toBeUndefined();
    expect(await readResult(runDir)).toEqual(result);
    expect((await state()).clicks.done).toBe(1);

    const { entries } = await readTrace(runDir);
    expect(entries.map((e) => [e.action, e.actor ?? 'agent'])).toEqual([
      ['mouse_click', 'agent'],
      ['finish', 'agent'],
      ['mouse_click', 'human'],
      ['mouse_click', 'human'],
      ['type_text', 'human'],
      ['mouse_click', 'agent'],
      ['finish', 'agent'],
    ]);
    expect(entries[1]).toMatchObject({ params: { status: 'needs_human', reason: REASON }, meta: { help_requested: true } });
    // Scored: the task passed after a person's steps, so the success is assisted, not the agent's.
    const score = await scoreRunDir(join(out.dir, 'runs'), runDir);
    expect(score).toMatchObject({ status: 'finished', success: false, assisted_success: true, human_steps: 3, stopped: null });
  }, 120_000);
});
