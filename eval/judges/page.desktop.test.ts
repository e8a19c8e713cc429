/**
 * The final page over CDP, against a real headless Chromium: the snapshot (URL, title, visible text,
 * HTML), the screenshot, the expression and selector checks with their evidence; an expression that
 * throws, a selector the page rejects and a CDP endpoint that does not answer give unknown verdicts with
 * JUDGE_ERR_PAGE, never pass or fail.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, launchChromium, type TestChromium } from '../../harness/cdp/test-helpers.ts';
import { judgeRun } from './judge.ts';
import { FINAL_PAGE_PNG, captureFinalPage, readFinalPage } from './page.ts';
import type { JudgeSpec } from './spec.ts';

const PAGE = `data:text/html,${encodeURIComponent('<title>Done</title><p id="status">You are subscribed.</p><div id="success">ok</div><div id="hidden" style="display:none">x</div>')}`;
let chromium: TestChromium;
let dir: string;

beforeAll(async () => {
  chromium = await launchChromium({ url: PAGE });
  dir = await mkdtemp(join(tmpdir(), 'vncua-final-page-'));
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const specs: JudgeSpec[] = [
  { type: 'expression', expression: "document.getElementById('status').textContent === 'You are subscribed.'" },
  { type: 'dom', selector: '#success' },
  { type: 'dom', selector: '#hidden', visible: true, name: 'hidden-visible' },
  { type: 'expression', expression: 'document.title === "Other"', name: 'title' },
  { type: 'expression', expression: 'undefinedThing.x', name: 'throws' },
  { type: 'dom', selector: '##bad', name: 'bad-selector' },
  { type: 'dom', text: 'subscribed', name: 'text' },
  { type: 'url', regex: '^data:text/html', name: 'url' },
];

describe('final page judges on a real Chromium', () => {
  it('captures the page and decides every page judge; bad checks are unknown with JUDGE_ERR_PAGE', async () => {
    await expect.poll(async () => (await captureFinalPage(dir, chromium.cdpUrl, [], { timeoutMs: 5000 })).title, { timeout: 30_000 }).toBe('Done');
    const page = await captureFinalPage(dir, chromium.cdpUrl, specs, { timeoutMs: 5000 });
    expect(page.text).toContain('You are subscribed.');
    expect(page.html).toContain('<div id="success">ok</div>');
    expect((await readFile(join(dir, FINAL_PAGE_PNG))).subarray(1, 4).toString()).toBe('PNG');
    expect(await readFinalPage(dir)).toEqual(page);
    const f = await judgeRun(dir, specs, { source: 'run' });
    const by = Object.fromEntries(f.verdicts.map((v) => [v.judge, v]));
    expect(by.expression).toMatchObject({ verdict: 'pass', error: null });
    expect(by.dom).toMatchObject({ verdict: 'pass', evidence: { excerpt: '<div id="success">ok</div>' } });
    expect(by['hidden-visible']!.verdict).toBe('fail');
    expect(by.title!.verdict).toBe('fail');
    expect(by.throws).toMatchObject({ verdict: 'unknown', error: { code: 'JUDGE_ERR_PAGE' } });
    expect(by['bad-selector']).toMatchObject({ verdict: 'unknown', error: { code: 'JUDGE_ERR_PAGE' } });
    expect(by.text).toMatchObject({ verdict: 'pass', evidence: { excerpt: expect.stringContaining('You are subscribed.') } });
    expect(by.url!.verdict).toBe('pass');
    // No trace in this directory: the sentinel cannot tell.
    expect(by.sentinel!.verdict).toBe('unknown');
  }, 60_000);

  it('a CDP endpoint that does not answer: nothing captured, every page judge unknown', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const page = await captureFinalPage(dir, dead, specs.slice(0, 2), { timeoutMs: 1000 });
    expect(page).toMatchObject({ url: null, text: null });
    expect(Object.values(page.checks).map((c) => [c.verdict, c.error?.code])).toEqual([
      ['unknown', 'JUDGE_ERR_PAGE'],
      ['unknown', 'JUDGE_ERR_PAGE'],
    ]);
    const f = await judgeRun(
      dir,
      [
        { type: 'url', exact: 'x' },
        { type: 'dom', text: 'x' },
      ],
      { source: 'run' },
    );
    expect(f.verdicts.slice(1).map((v) => [v.verdict, v.error?.code])).toEqual([
      ['unknown', 'JUDGE_ERR_PAGE'],
      ['unknown', 'JUDGE_ERR_PAGE'],
    ]);
  }, 60_000);
});
