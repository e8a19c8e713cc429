/**
 * ExplorerAgent on a real desktop (Xvnc + Chromium, the test pages served over HTTP): the canvas platformer's goal
 * reached by the heuristics alone; the static app explored the same way twice with one seed; a page that sends the
 * browser to another host held back by the navigation guard; a frozen page left by an unstick reload.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdpEvaluate } from '../../harness/desktop/test-helpers.ts';
import { tempOutputDir } from '../../harness/test-helpers/files.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import { ExplorerAgent, type ExplorerAgentOptions } from './agent.ts';
import type { ExplorerObserver, ExplorerStep, ExplorerSummary, Finding } from './types.ts';
import { resetPage, startExplorerDesktop, type ExplorerDesktop } from './test-helpers.ts';

let d: ExplorerDesktop;
const dirs: Array<{ remove(): Promise<void> }> = [];

beforeAll(async () => {
  d = await startExplorerDesktop('static/index.html');
}, 120_000);

afterAll(async () => {
  await d?.close();
  for (const x of dirs) await x.remove();
});

/** Open `page` with a fresh history, then explore it with `options`. */
async function explore(page: string, options: Partial<ExplorerAgentOptions>) {
  const url = new URL(page, d.server.url).href;
  await resetPage(d, url);
  const out = await tempOutputDir('vncua-explorer-');
  dirs.push(out);
  const lines: string[] = [];
  const agent = new ExplorerAgent({ outputDir: out.dir, vncUrl: d.desktop.vncUrl, cdpUrl: d.desktop.cdpUrl, url, live: false, log: (l) => lines.push(l), ...options });
  const result = await agent.run({ maxSteps: 1000 });
  return { agent, result, summary: agent.summary(), dir: out.dir, lines };
}

describe('ExplorerAgent on Xvnc', () => {
  // Retried: a real-time game read through VNC; on a starved machine frames arrive late and a run can give up (seen
  // once in a fresh-clone CI run).
  it('reaches the platformer goal with heuristics alone (no model)', { retry: 2, timeout: 150_000 }, async () => {
    const { result, summary, dir } = await explore('game.html', { seed: 3, maxSteps: 200, budgetMs: 90_000 });
    expect(summary.endReason, JSON.stringify(summary.steps.map((s) => s.action.params))).toBe('goal');
    expect(result).toMatchObject({ status: 'finished', success: true });
    expect(await cdpEvaluate(d.desktop.cdpUrl, 'document.title')).toBe('goal reached');
    expect(summary.steps.every((s) => s.layer !== 'model')).toBe(true);
    expect(new Set(summary.steps.map((s) => s.strategy))).toContain('game.platformer');
    // Each new state's screenshot, first the start screen's.
    expect(summary.states[0]).toMatchObject({ firstStep: 0, screenshot: join('screens', 'state-001.png') });
    expect((await readFile(join(dir, summary.states[0]!.screenshot!))).subarray(1, 4).toString()).toBe('PNG');
  });

  it('clicks elements only script makes clickable (a listener on a div), found by their pointer cursor', async () => {
    await resetPage(d, new URL('pointer.html', d.server.url).href);
    await cdpEvaluate(d.desktop.cdpUrl, 'sessionStorage.clear()');
    const { summary } = await explore('pointer.html', { seed: 5, maxSteps: 8, budgetMs: 60_000 });
    expect(await cdpEvaluate(d.desktop.cdpUrl, 'document.title'), JSON.stringify(summary.steps.map((s) => s.target))).toBe('both opened');
    // Each card once, as one target (its text inside is not another one).
    const cards = summary.coverage.targets.filter((t) => t.label.includes('card'));
    expect(cards.map((t) => [t.kind, t.label, t.tried])).toEqual([
      ['other', 'First card Open it', true],
      ['other', 'Second card Open it', true],
    ]);
  }, 120_000);

  // Retried: the two runs compare every action, and on a heavily loaded machine a scan can see a page mid-update (a
  // panel still being shown) and the runs part ways; on a machine that is not starved they match (seen failing once
  // in a fresh-clone CI run beside other work).
  it('explores the static app: same seed, same actions; pages, tabs, the menu, the dialog and the form reached', { retry: 2, timeout: 240_000 }, async () => {
    const options = { seed: 11, maxSteps: 45, budgetMs: 90_000, stateScreenshots: false };
    const a = await explore('static/index.html', options);
    const b = await explore('static/index.html', options);
    const actions = async (dir: string) => (await readTrace(dir)).entries.map((e) => ({ action: e.action, params: e.params }));
    const ta = await actions(a.dir);
    expect(ta.length).toBeGreaterThan(30);
    expect(await actions(b.dir)).toEqual(ta);
    expect(a.summary.steps.map((s) => s.action)).toEqual(ta.slice(0, a.summary.steps.length));
    expect(a.summary.seed).toBe(11);
    expect(a.result.status).toBe('finished');
    const strategies = new Set(a.summary.steps.map((s) => s.strategy));
    for (const s of ['tabs.open', 'form.fill', 'page.link']) expect(strategies).toContain(s);
    const urls = new Set(a.summary.steps.map((s) => new URL(s.url!).pathname));
    expect(urls.size).toBeGreaterThanOrEqual(3);
    expect(a.summary.coverage.tried).toBeGreaterThan(15);
    // Never off the app's host: the external link on the products page is never clicked.
    expect(a.summary.steps.every((s) => new URL(s.url!).host === new URL(d.server.url).host)).toBe(true);
    expect(a.summary.steps.some((s) => s.target?.label.startsWith('An external link'))).toBe(false);
    // The summary is written beside the trace.
    const written = JSON.parse(await readFile(join(a.dir, 'explorer-summary.json'), 'utf8'));
    expect(written).toMatchObject({ seed: 11, endReason: a.summary.endReason, findings: [] });
  });

  it('stays on the start host: a page that navigates elsewhere is blocked by the guard, the explorer goes back, and the run ends exhausted', async () => {
    const { result, summary } = await explore('leave.html', { seed: 1, maxSteps: 40, budgetMs: 60_000, stuckAfter: 2 });
    const why = JSON.stringify(summary.steps.map((s) => [s.strategy, s.target?.label, s.url]));
    expect(result.domain_blocked, why).toBeGreaterThanOrEqual(1);
    expect(
      summary.steps.some((s) => s.target?.label === 'Go elsewhere'),
      why,
    ).toBe(true);
    expect(
      summary.steps.some((s) => s.url !== null && new URL(s.url).hostname === 'localhost'),
      why,
    ).toBe(false);
    expect(
      summary.unstick.some((u) => u.strategy === 'go_back' && /left the app/.test(u.reason)),
      why,
    ).toBe(true);
    expect(summary.steps.at(-1)?.url, why).toMatch(/leave\.html$/);
    expect(summary.endReason, why).toBe('exhausted');
  }, 150_000);

  it('gets out of a frozen page: logged on one line with EXPLORER_ERR_PAGE_FROZEN, then stopped and reloaded', async () => {
    const { summary, lines } = await explore('frozen.html', { seed: 1, maxSteps: 12, budgetMs: 60_000 });
    expect(summary.steps[0]?.target?.label).toBe('Freeze');
    expect(lines.some((l) => /^explorer: EXPLORER_ERR_PAGE_FROZEN: /.test(l))).toBe(true);
    expect(summary.unstick.some((u) => u.strategy === 'reload' && /frozen/.test(u.reason))).toBe(true);
    // After the reload the page answers again (its title back from "freezing").
    expect(summary.steps.at(-1)?.url).toMatch(/frozen\.html$/);
    expect(await cdpEvaluate(d.desktop.cdpUrl, 'document.title')).toBe('frozen');
  }, 150_000);

  it('calls the observers per the contract: start once, afterStep with each step, takeFindings, finish once with the summary', async () => {
    const calls: string[] = [];
    const stepsSeen: ExplorerStep[] = [];
    let finished: ExplorerSummary | undefined;
    let shot = '';
    const observer: ExplorerObserver = {
      async start(ctx) {
        calls.push('start');
        shot = await ctx.screenshot('at-start');
        expect(ctx.cdpUrl).toBe(d.desktop.cdpUrl);
      },
      async afterStep(step) {
        calls.push(`afterStep ${step.step}`);
        stepsSeen.push(step);
      },
      takeFindings(): Finding[] {
        calls.push('takeFindings');
        return calls.filter((c) => c === 'takeFindings').length === 2 ? [{ kind: 'console_error', step: 1, url: null, message: 'boom' }] : [];
      },
      async finish(summary) {
        calls.push('finish');
        finished = summary;
      },
    };
    const { agent, summary, dir } = await explore('dead-end.html', { seed: 2, maxSteps: 4, observers: [observer] });
    expect(calls[0]).toBe('start');
    expect(calls.filter((c) => c === 'start')).toHaveLength(1);
    expect(calls.filter((c) => c === 'finish')).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith('afterStep'))).toEqual(summary.steps.map((s) => `afterStep ${s.step}`));
    expect(stepsSeen).toEqual(summary.steps);
    expect(finished).toMatchObject({ endReason: summary.endReason, seed: summary.seed, steps: summary.steps });
    expect(summary.endReason).toBe('step_budget');
    expect(agent.findings()).toEqual([{ kind: 'console_error', step: 1, url: null, message: 'boom' }]);
    expect(shot).toBe(join('screens', 'at-start.png'));
    expect((await readFile(join(dir, shot))).subarray(1, 4).toString()).toBe('PNG');
    expect(JSON.parse(await readFile(join(dir, 'explorer-summary.json'), 'utf8')).findings).toHaveLength(1);
  }, 150_000);

  it('without CDP explores from the screen alone: contrasted regions clicked, progress read from the frame', async () => {
    const { summary, result } = await explore('static/index.html', { seed: 4, maxSteps: 25, cdpUrl: undefined, stateScreenshots: false });
    expect(result.status).toBe('finished');
    expect(summary.steps.length).toBeGreaterThan(5);
    expect(summary.steps.every((s) => s.url === null)).toBe(true);
    const heuristic = summary.steps.filter((s) => s.layer === 'heuristic');
    expect(heuristic.length).toBeGreaterThan(0);
    expect(heuristic.every((s) => s.strategy === 'screen.region' && s.target?.kind === 'screen_region')).toBe(true);
    expect(summary.states.length).toBeGreaterThan(1);
    expect(summary.steps.some((s) => s.progress)).toBe(true);
  }, 150_000);
});
