/**
 * Success verdicts on real desktops (Xvnc and x11vnc, Chromium): task pages whose hidden marker follows
 * the page's own test on a 200 ms or 500 ms timer (no screen change when it flips), an agent that acts and
 * calls finish the instant its last action ends. Every run must succeed, attributed to the action that
 * caused it, with its evidence; a page whose marker never appears gives no success; a page whose input
 * handler writes the marker at once gives the type_text entry task_marked_complete true.
 * (The same race measured over hundreds of runs: bench/success-race.ts.)
 */
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, type Desktop } from '../desktop/index.ts';
import { serveDir } from '../test-helpers/serve-dir.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import type { RunResult, TraceEntry } from '../trace/schema.ts';
import { Agent } from './agent.ts';
import type { AgentOptions } from './options.ts';
import { tempOutputDir, type ServerKind } from './test-helpers/desktops.ts';

const PAGES = fileURLToPath(new URL('./test-pages/', import.meta.url));
/** Where the page's controls are (test-pages/success.html). */
const INPUT = { x: 200, y: 60 };
const BUTTON = { x: 140, y: 150 };

type Scenario = 'type' | 'click';

/** Click the input and type the wanted text, or click Submit; then finish at once. */
class InstantFinishAgent extends Agent {
  constructor(
    options: AgentOptions,
    private readonly scenario: Scenario,
  ) {
    super(options);
  }
  override async act(): Promise<boolean> {
    if (this.scenario === 'type') {
      await this.mouseClick({ position: INPUT });
      await this.typeText('abc');
    } else {
      await this.mouseClick({ position: BUTTON });
    }
    await this.finish();
    return true;
  }
}

interface Run {
  result: RunResult;
  entries: TraceEntry[];
}

for (const kind of ['xvnc', 'x11vnc'] as ServerKind[]) {
  describe(`success verdicts on ${kind}`, () => {
    let http: { url: string; close(): Promise<void> };
    let desktop: Desktop;
    let browser: Browser;
    let page: Page;
    const dirs: Array<{ remove(): Promise<void> }> = [];

    beforeAll(async () => {
      http = await serveDir(PAGES);
      desktop = await launchDesktop({ server: kind, url: `${http.url}success.html?mode=never`, timeoutMs: 45_000 });
      browser = await chromium.connectOverCDP(desktop.cdpUrl);
      for (let i = 0; i < 200 && !page; i++) {
        page = browser
          .contexts()
          .flatMap((c) => c.pages())
          .find((p) => p.url().startsWith(http.url))!;
        if (!page) await new Promise((r) => setTimeout(r, 50));
      }
      expect(page, 'the test page did not open').toBeDefined();
    }, 90_000);
    afterAll(async () => {
      await browser?.close().catch(() => {});
      await desktop?.close();
      await http?.close();
      for (const d of dirs) await d.remove();
    });

    /** Load the page in `query` mode, run the agent once, read what it left on disk. */
    async function run(query: string, scenario: Scenario): Promise<Run & { url: string }> {
      const url = `${http.url}success.html?${query}`;
      await page.goto(url);
      await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
      const out = await tempOutputDir('vncua-grace-');
      dirs.push(out);
      const agent = new InstantFinishAgent({ outputDir: out.dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, record: false }, scenario);
      const result = await agent.run({ maxSteps: 1 });
      expect(result.status, JSON.stringify(result.error)).toBe('finished');
      const trace = await readTrace(out.dir);
      expect(trace.partial).toBe(false);
      expect(await readResult(out.dir)).toEqual(result);
      return { result, entries: trace.entries, url };
    }

    /** The run succeeded, attributed to entry `cause` (never earlier), with matching evidence in result.json and the trace. */
    function expectSuccessAt(r: Run & { url: string }, cause: number): void {
      const first = r.entries.findIndex((e) => e.task_marked_complete === true);
      const label = JSON.stringify({ result: r.result, entries: r.entries.map((e) => [e.action, e.task_marked_complete, e.success_check?.phase]) });
      expect(first, label).toBe(cause);
      expect(r.result.success, label).toBe(true);
      const ev = r.result.evidence!;
      expect(ev).toEqual({
        rule: 'text',
        pattern: '>code#1</',
        snippet: expect.stringContaining('>code#1</div>'),
        url: r.url,
        at: r.result.success_at,
        entry_index: cause,
        phase: expect.stringMatching(/^(immediate|grace|final)$/),
      });
      const entry = r.entries[cause]!;
      expect(entry.success_check).toEqual({ phase: ev.phase, at: ev.at, rule: 'text', pattern: '>code#1</', snippet: ev.snippet, url: r.url });
      expect(ev.at).toBeGreaterThanOrEqual(entry.ended_at!);
      // The finish entry comes after the success: a proper stop.
      expect(r.entries.findIndex((e) => e.action === 'finish')).toBeGreaterThanOrEqual(cause);
    }

    for (const period of [200, 500]) {
      it(`timer page (${period} ms): type then finish at once, 6 runs: every one succeeds, attributed to type_text`, async () => {
        const phases: string[] = [];
        for (let i = 0; i < 6; i++) {
          const r = await run(`mode=timer&period=${period}`, 'type');
          expect(r.entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text', 'finish']);
          expectSuccessAt(r, 1);
          expect(r.entries[0]!.task_marked_complete).toBe(false);
          phases.push(r.result.evidence!.phase);
        }
        // With the marker 0-period ms after the input, most successes arrive after the immediate check.
        expect(
          phases.some((p) => p !== 'immediate'),
          phases.join(),
        ).toBe(true);
      }, 180_000);

      it(`timer page (${period} ms): click Submit then finish at once, 4 runs: every one succeeds, attributed to the click`, async () => {
        for (let i = 0; i < 4; i++) {
          const r = await run(`mode=timer&period=${period}`, 'click');
          expect(r.entries.map((e) => e.action)).toEqual(['mouse_click', 'finish']);
          expectSuccessAt(r, 0);
        }
      }, 180_000);
    }

    it('a page whose marker never appears: 4 runs, no success anywhere (success false, no entry complete)', async () => {
      for (let i = 0; i < 4; i++) {
        const r = await run('mode=never&period=200', i % 2 === 0 ? 'type' : 'click');
        expect(r.result).toMatchObject({ success: false, success_at: null, evidence: null });
        expect(r.entries.map((e) => e.task_marked_complete)).toEqual(r.entries.map(() => false));
        expect(r.entries.every((e) => e.success_check === undefined)).toBe(true);
      }
    }, 120_000);

    it('a page whose input handler writes the marker at once: the type_text entry says task_marked_complete true', async () => {
      for (let i = 0; i < 4; i++) {
        const r = await run('mode=sync', 'type');
        expectSuccessAt(r, 1);
        expect(r.entries[1]!.task_marked_complete).toBe(true);
      }
    }, 120_000);
  });
}
