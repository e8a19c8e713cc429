/**
 * Cost end to end: a real `vncua eval` of the basic suite's click-button task with `--agent openai-cua`
 * talking through the official `openai` SDK to the local fake Responses API, priced from a `--prices FILE`
 * given after `--`. Checked on disk (each call's tokens and cost_usd in execution.json, the totals in
 * result.json), in `vncua score`'s line and scores.json, in `vncua export`'s lines, and in `vncua serve`'s
 * run list and step list rendered by Chromium. A bad prices file stops the run before any desktop.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computerCall, message, startFakeResponses, type FakeResponsesServer } from '../byom/openai-cua/test-helpers/fake-responses.ts';
import { CHROMIUM_BIN } from '../harness/cdp/test-helpers.ts';
import { roundUsd } from '../harness/trace/model-calls.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import type { ExportLine } from '../harness/trace/export-line.ts';
import { startViewerServer, type ViewerServer } from '../viewer/server.ts';
import { runVncua, type Ran } from './test-helpers/run-vncua.ts';

/** The user's rates for the default model (the table's are $3 / $12): these must win. */
const PRICES = { 'computer-use-preview': { input: 100, output: 400 } };

/** `vncua ARGS` in a child (cli/test-helpers/run-vncua.ts), its output and exit code. */
function vncua(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 240_000): Promise<Ran> {
  return runVncua(args[0]!, args.slice(1), { env, deadlineMs: timeoutMs });
}

describe('cost per step and per run through vncua eval, score, export and serve', () => {
  let dir: string;
  let out: string;
  let fake: FakeResponsesServer;
  let evalRun: Awaited<ReturnType<typeof vncua>>;
  const runDir = () => join(out, 'openai-cua', '1280_800', 'click-button');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-cost-'));
    out = join(dir, 'out');
    await writeFile(join(dir, 'prices.json'), JSON.stringify(PRICES));
    // Subscribe is the button at 200..340 x 160..204 on the 1280x800 screen.
    fake = await startFakeResponses([{ reply: [computerCall({ action: { type: 'click', button: 'left', x: 270, y: 182 } })] }, { reply: [message('I clicked Subscribe.')] }]);
    evalRun = await vncua(
      [
        'eval',
        '--tasks',
        'eval/suites/basic/tasks.json',
        '--agent',
        'openai-cua',
        '--only',
        'click-button',
        '--out',
        out,
        '--',
        '--base-url',
        fake.baseURL,
        '--prices',
        join(dir, 'prices.json'),
      ],
      { OPENAI_API_KEY: 'sk-test' },
    );
  }, 300_000);
  afterAll(async () => {
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Each call's usage as the fake API sent it, in order, and its cost at PRICES. */
  const sent = () =>
    [...fake.responses.values()].map((r) => {
      const u = r.usage!;
      return { input: u.input_tokens, output: u.output_tokens, cost: roundUsd((u.input_tokens * 100 + u.output_tokens * 400) / 1e6) };
    });

  it("execution.json: each step's model call has its tokens and cost_usd at the --prices rates; result.json the totals", async () => {
    expect(evalRun.code, `${evalRun.stdout}\n${evalRun.stderr}`).toBe(0);
    const calls = sent();
    expect(calls).toHaveLength(2);
    const { entries } = await readTrace(runDir());
    expect(entries.map((e) => [e.action, e.task_marked_complete])).toEqual([
      ['mouse_click', true],
      ['finish', true],
    ]);
    entries.forEach((e, i) => {
      expect((e.meta!.model_calls as Array<Record<string, unknown>>)[0]).toMatchObject({
        model: 'computer-use-preview-2025-03-11',
        tokens: { input: calls[i]!.input, output: calls[i]!.output },
        cost_usd: calls[i]!.cost,
      });
    });
    const result = await readResult(runDir());
    expect(result).toMatchObject({
      status: 'finished',
      success: true,
      model_calls: 2,
      input_tokens: calls[0]!.input + calls[1]!.input,
      output_tokens: calls[0]!.output + calls[1]!.output,
    });
    expect(result!.cost_usd).toBeCloseTo(calls[0]!.cost + calls[1]!.cost, 12);
    // At the table's $3 / $12 it would be far less: the file's rates were used.
    expect(result!.cost_usd! > ((calls[0]!.input * 3 + calls[0]!.output * 12) / 1e6) * 10).toBe(true);
  });

  it("vncua score: the agent's line and scores.json carry the cost per run and per success", async () => {
    const total = sent().reduce((s, c) => s + c.cost, 0);
    const r = await vncua(['score', out]);
    expect(r.code, r.stderr).toBe(0);
    const usd = `$${roundUsd(total)
      .toPrecision(3)
      .replace(/\.?0+$/, '')}`;
    expect(r.stdout).toContain(`openai-cua: 100.0% success (1/1); cost ${usd} (${usd} a run, ${usd} a success)\n`);
    const scores = JSON.parse(await readFile(join(out, 'scores.json'), 'utf8')) as { by_agent: Array<Record<string, number>>; runs: Array<Record<string, number>> };
    expect(scores.runs[0]!.cost_usd).toBeCloseTo(total, 12);
    expect(scores.by_agent[0]!.cost_per_success).toBeCloseTo(total, 12);
    expect(await readFile(join(out, 'scores.md'), 'utf8')).toContain('| cost | cost / run | cost / success |');
  });

  it("vncua export: each line carries its step's model.cost_usd", async () => {
    const file = join(dir, 'steps.jsonl');
    const r = await vncua(['export', out, '--format', 'jsonl', '--out', file]);
    expect(r.code, r.stderr).toBe(0);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportLine);
    expect(lines.map((l) => l.model?.cost_usd)).toEqual(sent().map((c) => c.cost));
    expect(lines.map((l) => l.model?.tokens)).toEqual(sent().map((c) => ({ input: c.input, output: c.output, total: c.input + c.output })));
  });

  describe('vncua serve in Chromium', () => {
    let server: ViewerServer;
    let browser: Browser;
    beforeAll(async () => {
      server = await startViewerServer({ root: out });
      browser = await chromium.launch({
        executablePath: CHROMIUM_BIN,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
      });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it("the run list shows the run's cost and tokens; the step list each call's cost", async () => {
      const calls = sent();
      const total = roundUsd(calls[0]!.cost + calls[1]!.cost);
      const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      await page.goto(server.url);
      await page.waitForFunction(() => document.body.dataset.ready === 'list', undefined, { timeout: 30_000 });
      const cell = page.locator('#runs tbody tr td.cost');
      const tokens = `${calls[0]!.input + calls[1]!.input} in / ${calls[0]!.output + calls[1]!.output} out tokens`;
      expect(await cell.textContent()).toBe(`$${total.toPrecision(3).replace(/\.?0+$/, '')} ${tokens}`);
      expect(await cell.getAttribute('title')).toBe(`2 model calls, ${tokens}`);
      // The run's page: each step's model call line ends with its cost.
      await page.click('#runs tbody tr a');
      await expect.poll(() => page.locator('#steps').textContent(), { timeout: 30_000 }).toContain('model call:');
      const text = (await page.locator('#steps').textContent()) ?? '';
      for (const c of calls) expect(text).toContain(`in ${c.input}, out ${c.output}, $${c.cost.toPrecision(3).replace(/\.?0+$/, '')}`);
    });
  });

  it('a bad --prices file: CLI_ERR_BAD_ARGS naming --prices and the model at fault, exit 2, no run written', async () => {
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ 'computer-use-preview': { input: 3 } }));
    const badOut = join(dir, 'bad-out');
    const r = await vncua(
      ['eval', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'openai-cua', '--only', 'click-button', '--out', badOut, '--', '--prices', join(dir, 'bad.json')],
      {
        OPENAI_API_KEY: 'sk-test',
      },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/CLI_ERR_BAD_ARGS: openai-cua agent: --prices holds bad prices: \["computer-use-preview"\] needs output/);
    await expect(readFile(join(badOut, 'openai-cua', '1280_800', 'click-button', 'result.json'))).rejects.toThrow();
  });
});
