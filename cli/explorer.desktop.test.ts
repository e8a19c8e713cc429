/**
 * `vncua run --agent explorer` in process (runAgentCommand) on real desktops: the model layer asked through the real
 * `openai` SDK (a scripted chat server on 127.0.0.1:0) only once the heuristics ran out of targets, its garbage
 * answer logged on one line and ignored; an unreachable start page an infra error (PAGE_ERR_UNREACHABLE), its QA report
 * still written; and
 * `vncua eval --agent explorer` over a one-task suite (the platformer), its flags after `--`.
 */
import { execFile } from 'node:child_process';
import { copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { images, startChatServer, texts, type ChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { startStaticServer, type StaticServer } from '../harness/static-server.ts';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import type { ExplorerSummary } from '../agents/explorer/types.ts';
import { TEST_PAGES } from '../agents/explorer/test-helpers.ts';
import { runAgentCommand } from './run.ts';

let pages: StaticServer;
let chat: ChatServer;
const dirs: Array<{ remove(): Promise<void> }> = [];

beforeAll(async () => {
  pages = await startStaticServer({ root: TEST_PAGES });
  // Call 1: prose without an action (garbage); call 2: a click on an empty spot.
  chat = await startChatServer((_body, n) => (n === 1 ? 'I think you should look around a bit more.' : '{"action": "click", "coordinate": [640, 600]}'));
});

afterAll(async () => {
  await chat?.close();
  await pages?.close();
  for (const d of dirs) await d.remove();
});

describe('vncua run --agent explorer', () => {
  it('asks the model only after the heuristics ran out of targets; a garbage answer is logged and ignored', async () => {
    const out = await tempOutputDir('vncua-explorer-cli-');
    dirs.push(out);
    const logged: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    let r: Awaited<ReturnType<typeof runAgentCommand>>;
    try {
      r = await runAgentCommand({
        agent: 'explorer',
        url: `${pages.url}dead-end.html`,
        maxSteps: 12,
        out: join(out.dir, 'run'),
        live: false,
        args: ['--seed', '5', '--stuck-after', '2', '--model-every', '1', '--max-model-calls', '2', '--model', 'test-vlm', '--base-url', chat.baseURL],
      });
    } finally {
      spy.mockRestore();
    }
    expect(r.result.status).toBe('finished');
    const summary = JSON.parse(await readFile(join(r.outputDir, 'explorer-summary.json'), 'utf8')) as ExplorerSummary;
    const why = JSON.stringify(summary.steps.map((s) => [s.step, s.layer, s.strategy, s.target?.label]));
    // The two buttons first, by the heuristics; the model only after that.
    expect(
      summary.steps
        .slice(0, 2)
        .map((s) => [s.layer, s.target?.label])
        .sort(),
      why,
    ).toEqual([
      ['heuristic', 'First'],
      ['heuristic', 'Second'],
    ]);
    expect(chat.bodies).toHaveLength(2);
    const firstAsk = texts(chat.bodies[0]!.messages[1]!.content).join('\n');
    expect(firstAsk.match(/"mouse_click"/g), firstAsk).toHaveLength(2);
    expect(images(chat.bodies[0]!)[0]).toMatch(/^data:image\/png;base64,/);
    expect(summary.model).toMatchObject({ calls: 2, ignored: 1 });
    const modelSteps = summary.steps.filter((s) => s.layer === 'model');
    expect(
      modelSteps.map((s) => s.action),
      why,
    ).toEqual([{ action: 'mouse_click', params: { position: { x: 640, y: 600 }, button: 'left', click_type: 'single' } }]);
    expect(modelSteps[0]!.step).toBeGreaterThan(2);
    const lines = logged
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('explorer: EXPLORER_ERR_MODEL_ANSWER: '));
    expect(lines, logged.join('')).toHaveLength(1);
    // The model's tokens count in result.json like any model call's.
    expect(summary.model.tokens.input).toBeGreaterThan(0);
    expect(r.result.model_calls).toBe(2);
  }, 180_000);

  it('an unreachable start page is an infra error: status error, PAGE_ERR_UNREACHABLE', async () => {
    const out = await tempOutputDir('vncua-explorer-cli-');
    dirs.push(out);
    const port = await closedPort();
    const r = await runAgentCommand({ agent: 'explorer', url: `http://127.0.0.1:${port}/app.html`, maxSteps: 5, out: join(out.dir, 'run'), live: false });
    expect(r.result).toMatchObject({ status: 'error', error: { code: 'PAGE_ERR_UNREACHABLE' } });
    // The QA report is still written, and says why the app was not explored.
    const report = JSON.parse(await readFile(join(out.dir, 'run', 'qa-report.json'), 'utf8'));
    expect(report).toMatchObject({ endReason: 'error', run: { status: 'error', error: { code: 'PAGE_ERR_UNREACHABLE' } }, findings: [] });
    expect(report.totals.coveragePct).toBe(0);
    expect(await readFile(join(out.dir, 'run', 'qa-report.md'), 'utf8')).toMatch(/PAGE\\?_ERR\\?_UNREACHABLE/);
  }, 180_000);

  it('vncua eval --agent explorer: a suite task (the platformer) explored to its success sentinel', async () => {
    const out = await tempOutputDir('vncua-explorer-eval-');
    dirs.push(out);
    await copyFile(join(TEST_PAGES, 'game.html'), join(out.dir, 'game.html'));
    const tasks = join(out.dir, 'tasks.json');
    await writeFile(tasks, JSON.stringify([{ id: 'game-1', goal: 'Reach the green goal', url: 'game.html', success: { sentinel: '>code#1<' } }]));
    const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, 'eval', '--tasks', tasks, '--agent', 'explorer', '--out', join(out.dir, 'results'), '--max-steps', '200', '--no-live', '--', '--seed', '3'],
      { timeout: 150_000 },
    );
    expect(stdout).toContain('1 succeeded');
    expect(JSON.parse(await findSummary(join(out.dir, 'results')))).toMatchObject({ seed: 3, endReason: 'goal' });
  }, 180_000);
});

/** The explorer-summary.json somewhere under `dir` (the runner's layout decides where). */
async function findSummary(dir: string): Promise<string> {
  for (const e of await readdir(dir, { recursive: true })) if (String(e).endsWith('explorer-summary.json')) return readFile(join(dir, String(e)), 'utf8');
  throw new Error(`no explorer-summary.json under ${dir}`);
}
