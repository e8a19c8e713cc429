/**
 * Test-only: a task of the built-in basic suite (eval/suites/basic) for the adapters' end-to-end
 * tests: the task entry, its reference trace (what a scripted model replays, in the adapter's own
 * wire format), a static server over the suite directory (read from disk; byom/ may not
 * import eval/), and useSuiteTaskDesktop(), the setup the end-to-end tests share.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { ActionStep, AgentContext } from '../../../harness/agent/index.ts';
import { launchDesktop, type Desktop } from '../../../harness/desktop/index.ts';
import { serveDir } from '../../../harness/test-helpers/serve-dir.ts';

/** The basic suite's directory. */
export const SUITE_DIR = fileURLToPath(new URL('../../../eval/suites/basic/', import.meta.url));

/** A suite task (our task format; the fields these tests use). */
export interface SuiteTask {
  id: string;
  goal: string;
  url: string;
  success: { sentinel: string };
  maxSteps?: number;
}

/** The task `id` and its reference trace. */
export async function loadSuiteTask(id: string): Promise<{ task: SuiteTask; reference: ActionStep[] }> {
  const tasks = JSON.parse(await readFile(join(SUITE_DIR, 'tasks.json'), 'utf8')) as SuiteTask[];
  const task = tasks.find((t) => t.id === id);
  if (!task) throw new Error(`no task ${id} in ${SUITE_DIR}tasks.json`);
  const reference = JSON.parse(await readFile(join(SUITE_DIR, 'references', `${id}.json`), 'utf8')) as ActionStep[];
  return { task, reference };
}

/** Serve the suite directory on 127.0.0.1:0; `url` ends with a slash. */
export function serveSuite(): Promise<{ url: string; close(): Promise<void> }> {
  return serveDir(SUITE_DIR);
}

/** Wait until the desktop's browser shows `url` loaded and focused, then a little for it to paint (input sent earlier can be lost). */
export async function waitForPage(cdpUrl: string, url: string, timeoutMs = 20_000): Promise<void> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.connectOverCDP(cdpUrl);
  try {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const page = browser
        .contexts()
        .flatMap((c) => c.pages())
        .find((p) => p.url() === url);
      if (page) {
        await page.waitForFunction(() => document.readyState === 'complete' && document.hasFocus(), undefined, { timeout: Math.max(1, end - Date.now()) });
        break;
      }
      if (Date.now() > end) throw new Error(`the browser did not open ${url}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await browser.close();
  }
}

/** What useSuiteTaskDesktop() gives a describe block (once its beforeAll ran). */
export interface SuiteTaskDesktop {
  readonly task: SuiteTask;
  readonly reference: ActionStep[];
  readonly desktop: Desktop;
  /** The AgentContext `vncua eval` gives the task's run into `outputDir` (success check included). */
  context(outputDir: string): AgentContext;
}

/** For a describe block: suite task `id` on a desktop showing its page, loaded (beforeAll, up to 90 s); all closed after. */
export function useSuiteTaskDesktop(id: string): SuiteTaskDesktop {
  let loaded: { task: SuiteTask; reference: ActionStep[] } | undefined;
  let suite: { url: string; close(): Promise<void> } | undefined;
  let desktop: Desktop | undefined;
  beforeAll(async () => {
    loaded = await loadSuiteTask(id);
    suite = await serveSuite();
    const url = new URL(loaded.task.url, suite.url).href;
    desktop = await launchDesktop({ url, timeoutMs: 45_000 });
    await waitForPage(desktop.cdpUrl, url);
  }, 90_000);
  afterAll(async () => {
    await desktop?.close();
    await suite?.close();
  });
  const ready = () => {
    if (!loaded || !desktop) throw new Error('the suite task desktop is not started: use it inside the tests of the block that called useSuiteTaskDesktop()');
    return { ...loaded, desktop };
  };
  return {
    get task() {
      return ready().task;
    },
    get reference() {
      return ready().reference;
    },
    get desktop() {
      return ready().desktop;
    },
    context(outputDir) {
      const { task, desktop: d } = ready();
      return {
        task: task.goal,
        outputDir,
        vncUrl: d.vncUrl,
        cdpUrl: d.cdpUrl,
        url: undefined,
        maxSteps: task.maxSteps ?? 10,
        script: undefined,
        args: [],
        agentOptions: { task: task.goal, outputDir, vncUrl: d.vncUrl, cdpUrl: d.cdpUrl, successCheck: task.success },
        taskId: task.id,
      };
    },
  };
}

/** The params of any trace step (each action uses some of them). */
export interface StepParams {
  position: { x: number; y: number };
  start: { x: number; y: number };
  end: { x: number; y: number };
  button: 'left' | 'right' | 'middle';
  click_type: 'single' | 'double' | 'triple';
  direction: 'up' | 'down' | 'left' | 'right' | 'back' | 'forward';
  repeat: number;
  text: string;
  keys: string;
  seconds: number;
}
