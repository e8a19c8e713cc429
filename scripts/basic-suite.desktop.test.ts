/**
 * The basic suite on real desktops: the replay agent solves every task at 1280x800 and at 1920x1080
 * (one desktop per resolution, the suite served by eval's static server, each task's page opened over
 * CDP), and the random agent, seeded, performs only valid actions and solves none of a sample of tasks.
 *
 * It lives in scripts/ because it joins agents/ (the agents) and eval/ (the suite's server and task
 * file), which may not import each other (scripts/import-graph.ts).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import buildRandomAgent, { RandomActionGenerator, RandomAgent } from '../agents/random.ts';
import buildReplayAgent from '../agents/replay.ts';
import { startStaticServer, type StaticServer } from '../eval/static-server.ts';
import { loadTaskFile, type EvalTask } from '../eval/tasks.ts';
import type { AgentContext } from '../harness/agent/index.ts';
import { SuccessChecker } from '../harness/cdp/success.ts';
import { launchDesktop, type Desktop } from '../harness/desktop/index.ts';

const SUITE = fileURLToPath(new URL('../eval/suites/basic/', import.meta.url));
const TASK_FILE = join(SUITE, 'tasks.json');
const SIZES = ['1280x800', '1920x1080'] as const;
/** Tasks the random agent is tried on: none can be solved by a few random primitives. */
const RANDOM_SAMPLE = ['form-signup', 'type-unicode', 'slider-volume', 'date-picker', 'modal-dialog'];
const RANDOM_ACTIONS = 8;

interface Entry {
  action: string;
  params: Record<string, unknown>;
  task_marked_complete: boolean | null;
  error?: unknown;
}

const taskIds = (JSON.parse(await readFile(TASK_FILE, 'utf8')) as Array<{ id: string }>).map((t) => t.id);

for (const size of SIZES) {
  describe(`basic suite on a real ${size} desktop`, () => {
    let server: StaticServer;
    let desktop: Desktop;
    let browser: Browser;
    let page: Page;
    let checker: SuccessChecker;
    let out: string;
    let tasks: Map<string, EvalTask>;

    beforeAll(async () => {
      out = await mkdtemp(join(tmpdir(), 'vncua-suite-'));
      server = await startStaticServer({ root: SUITE });
      tasks = new Map((await loadTaskFile(TASK_FILE, { baseUrl: server.url })).tasks.map((t) => [t.id, t]));
      desktop = await launchDesktop({ size, url: 'about:blank', timeoutMs: 45_000 });
      browser = await chromium.connectOverCDP(desktop.cdpUrl);
      page = browser.contexts()[0]!.pages()[0]!;
      checker = new SuccessChecker(desktop.cdpUrl, { sentinel: 'code#1' });
    });

    afterAll(async () => {
      for (const step of [() => checker?.close(), () => browser?.close(), () => desktop?.close(), () => server?.close(), () => rm(out, { recursive: true, force: true })]) {
        try {
          await step();
        } catch {
          // keep closing the rest
        }
      }
    });

    /** Open the task's page in the desktop's browser, wait for it to load, and check it is not solved yet. */
    async function openTask(task: EvalTask): Promise<void> {
      await page.goto(task.url, { waitUntil: 'load' });
      expect(await checker.check(), `${task.id} is solved before any action`).toBe(false);
    }

    function context(task: EvalTask, outputDir: string): AgentContext {
      const agentOptions = { task: task.goal, outputDir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, successCheck: task.success };
      return {
        task: task.goal,
        outputDir,
        vncUrl: desktop.vncUrl,
        cdpUrl: desktop.cdpUrl,
        url: task.url,
        maxSteps: task.maxSteps ?? 50,
        script: undefined,
        args: [],
        agentOptions,
        taskId: task.id,
        taskFile: TASK_FILE,
        resolution: { width: desktop.width, height: desktop.height },
      };
    }

    async function trace(outputDir: string): Promise<Entry[]> {
      return JSON.parse(await readFile(join(outputDir, 'execution.json'), 'utf8')) as Entry[];
    }

    it('the desktop has the requested size', () => {
      expect(`${desktop.width}x${desktop.height}`).toBe(size);
    });

    for (const id of taskIds) {
      it(`the replay agent solves ${id}`, async () => {
        const task = tasks.get(id)!;
        await openTask(task);
        const outputDir = join(out, 'replay', id);
        const agent = buildReplayAgent(context(task, outputDir));
        const result = await agent.run({ maxSteps: task.maxSteps ?? 50 });
        expect(result.error, id).toBeUndefined();
        expect(result.status, id).toBe('finished');
        const entries = await trace(outputDir);
        expect(entries.map((e) => e.action)).toEqual(agent.steps.map((s) => s.action));
        expect(entries.filter((e) => e.error !== undefined)).toEqual([]);
        expect(
          entries.some((e) => e.task_marked_complete === true),
          `${id}: no action was marked complete`,
        ).toBe(true);
        expect(entries.at(-1)!.task_marked_complete, `${id}: not complete at finish`).toBe(true);
        expect(await checker.check(), `${id}: the success check at the end`).toBe(true);
      });
    }

    if (size === '1280x800') {
      it('the random agent performs its seeded actions, all valid, and solves none of a sample of tasks', async () => {
        for (const id of RANDOM_SAMPLE) {
          const task = tasks.get(id)!;
          await openTask(task);
          const outputDir = join(out, 'random', id);
          const agent = new RandomAgent({ ...context(task, outputDir).agentOptions, seed: `floor-${id}`, actions: RANDOM_ACTIONS });
          const result = await agent.run({ maxSteps: 20 });
          expect(result, id).toMatchObject({ status: 'finished', steps: RANDOM_ACTIONS + 1 });
          const entries = await trace(outputDir);
          expect(
            entries.filter((e) => e.error !== undefined),
            id,
          ).toEqual([]);
          const expected = new RandomActionGenerator(`floor-${id}`).take(RANDOM_ACTIONS, { width: desktop.width, height: desktop.height });
          expect(
            entries.slice(0, -1).map((e) => ({ action: e.action, params: e.params })),
            id,
          ).toEqual(expected);
          expect(entries.at(-1)!.action).toBe('finish');
          expect(
            entries.some((e) => e.task_marked_complete === true),
            `${id} solved by random actions`,
          ).toBe(false);
          expect(await checker.check(), id).toBe(false);
        }
      });

      it("the random agent's builder seeds with the task id", () => {
        const task = tasks.get(RANDOM_SAMPLE[0]!)!;
        const a = buildRandomAgent(context(task, join(out, 'x')));
        const b = new RandomAgent({ outputDir: join(out, 'y'), vncUrl: desktop.vncUrl, seed: task.id });
        expect(a.seed).toBe(b.seed);
      });
    }
  });
}
