import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentContext } from '../harness/agent/index.ts';
import { isVncuaError } from '../harness/errors.ts';
import buildReplayAgent, { REPLAY_END_PARAMS, ReplayAgent, loadReference, referencePath } from './replay.ts';

const SUITE_DIR = fileURLToPath(new URL('../eval/suites/basic/', import.meta.url));
/** A VNC URL that is never dialled: these runs only wait and finish, which need no connection. */
const VNC = 'ws://127.0.0.1:9';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-replay-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function ctx(over: Partial<AgentContext>): AgentContext {
  const outputDir = join(dir, 'out');
  return {
    task: 'x',
    outputDir,
    vncUrl: VNC,
    cdpUrl: 'http://127.0.0.1:9',
    url: undefined,
    maxSteps: 50,
    script: undefined,
    args: [],
    agentOptions: { outputDir, vncUrl: VNC, cdpUrl: 'http://127.0.0.1:9' },
    ...over,
  };
}

async function trace(outputDir: string): Promise<Array<{ action: string; params: Record<string, unknown> }>> {
  return JSON.parse(await readFile(join(outputDir, 'execution.json'), 'utf8')) as Array<{ action: string; params: Record<string, unknown> }>;
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return isVncuaError(e) ? e.code : `not a VncuaError: ${String(e)}`;
  }
  return undefined;
}

describe('ReplayAgent run', () => {
  it("plays one entry per step and ends on the trace's own finish (no extra finish)", async () => {
    const outputDir = join(dir, 'a');
    const steps = [
      { action: 'wait', params: { seconds: 0 } },
      { action: 'wait', params: { seconds: 0.01 } },
      { action: 'finish', params: { note: 'done' } },
    ];
    const r = await new ReplayAgent({ outputDir, vncUrl: VNC, record: false, steps }).run({ maxSteps: 10 });
    expect(r.status).toBe('finished');
    expect(r.steps).toBe(3);
    expect((await trace(outputDir)).map((e) => [e.action, e.params])).toEqual(steps.map((s) => [s.action, s.params]));
  });

  it('adds a finish after the last entry when the trace has none, within the same step', async () => {
    const outputDir = join(dir, 'b');
    const r = await new ReplayAgent({
      outputDir,
      vncUrl: VNC,
      record: false,
      steps: [
        { action: 'wait', params: { seconds: 0 } },
        { action: 'wait', params: { seconds: 0 } },
      ],
    }).run();
    expect(r.status).toBe('finished');
    expect(r.steps).toBe(2);
    const t = await trace(outputDir);
    expect(t.map((e) => e.action)).toEqual(['wait', 'wait', 'finish']);
    expect(t[2]!.params).toEqual(REPLAY_END_PARAMS);
  });

  it('stops at a finish in the middle of the trace', async () => {
    const outputDir = join(dir, 'c');
    const steps = [
      { action: 'finish', params: {} },
      { action: 'wait', params: { seconds: 0 } },
    ];
    const r = await new ReplayAgent({ outputDir, vncUrl: VNC, record: false, steps }).run();
    expect(r).toMatchObject({ status: 'finished', steps: 1 });
    expect((await trace(outputDir)).map((e) => e.action)).toEqual(['finish']);
  });

  it('finishes at once on an empty trace, and stops at maxSteps like any agent', async () => {
    const empty = join(dir, 'd');
    expect(await new ReplayAgent({ outputDir: empty, vncUrl: VNC, record: false, steps: [] }).run()).toMatchObject({ status: 'finished', steps: 1 });
    expect((await trace(empty)).map((e) => e.action)).toEqual(['finish']);
    const capped = join(dir, 'e');
    const waits = Array.from({ length: 5 }, () => ({ action: 'wait', params: { seconds: 0 } }));
    expect(await new ReplayAgent({ outputDir: capped, vncUrl: VNC, record: false, steps: waits }).run({ maxSteps: 2 })).toMatchObject({ status: 'max_steps', steps: 2 });
    expect((await trace(capped)).map((e) => e.action)).toEqual(['wait', 'wait']);
  });
});

describe('ReplayAgent options and references', () => {
  it('needs exactly one of trace and steps, and a non-empty trace path', async () => {
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC, steps: [], trace: 'x.json' }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC, trace: '' }))).toBe('AGENT_ERR_BAD_OPTIONS');
  });

  it('rejects a missing reference with AGENT_ERR_NO_REFERENCE naming the path', async () => {
    const path = join(dir, 'nope.json');
    let err: unknown;
    try {
      loadReference(path);
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'AGENT_ERR_NO_REFERENCE')).toBe(true);
    expect((err as { details: { path: string } }).details.path).toBe(path);
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC, trace: path }))).toBe('AGENT_ERR_NO_REFERENCE');
  });

  it('rejects unreadable JSON and bad entries with SCRIPT_ERR_INVALID (one issue per bad entry)', async () => {
    const notJson = join(dir, 'bad.json');
    await writeFile(notJson, '[{"action": "mouse_click",');
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC, trace: notJson }))).toBe('SCRIPT_ERR_INVALID');
    const badEntries = join(dir, 'entries.json');
    await writeFile(
      badEntries,
      JSON.stringify([
        { action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' } },
        { action: 'jump', params: {} },
        { action: 'mouse_scroll', params: { position: { x: 1, y: 2 }, direction: 'down', repeat: 1, speed: 3 } },
      ]),
    );
    let err: unknown;
    try {
      new ReplayAgent({ outputDir: dir, vncUrl: VNC, trace: badEntries });
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'SCRIPT_ERR_INVALID')).toBe(true);
    const issues = (err as { details: { issues: Array<{ index: number; field: string }> } }).details.issues;
    expect(issues.map((i) => [i.index, i.field])).toEqual([
      [1, 'action'],
      [2, 'params.speed'],
    ]);
    expect(await codeOf(() => new ReplayAgent({ outputDir: dir, vncUrl: VNC, steps: { not: 'an array' } }))).toBe('SCRIPT_ERR_INVALID');
  });

  it("finds a task's reference beside its tasks file, and refuses ids that are not file names", () => {
    expect(referencePath('/suites/x/tasks.json', 'click-button')).toBe('/suites/x/references/click-button.json');
    for (const id of ['../secret', 'a/b', '.hidden', '']) {
      let err: unknown;
      try {
        referencePath('/suites/x/tasks.json', id);
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'AGENT_ERR_NO_REFERENCE'), id).toBe(true);
    }
  });
});

describe('buildReplayAgent', () => {
  it('loads <dirname(taskFile)>/references/<taskId>.json', async () => {
    await mkdir(join(dir, 'suite', 'references'), { recursive: true });
    const steps = [
      { action: 'wait', params: { seconds: 1 } },
      { action: 'finish', params: {} },
    ];
    await writeFile(join(dir, 'suite', 'references', 't-1.json'), JSON.stringify(steps));
    const agent = buildReplayAgent(ctx({ taskId: 't-1', taskFile: join(dir, 'suite', 'tasks.json') }));
    expect(agent).toBeInstanceOf(ReplayAgent);
    expect(agent.steps).toEqual(steps);
  });

  it("prefers ctx.script over the task's reference", async () => {
    await mkdir(join(dir, 'suite', 'references'), { recursive: true });
    await writeFile(join(dir, 'suite', 'references', 't-1.json'), JSON.stringify([{ action: 'finish', params: {} }]));
    const script = join(dir, 'script.json');
    await writeFile(script, JSON.stringify([{ action: 'press_keys', params: { keys: 'ctrl+k' } }]));
    const agent = buildReplayAgent(ctx({ taskId: 't-1', taskFile: join(dir, 'suite', 'tasks.json'), script }));
    expect(agent.steps).toEqual([{ action: 'press_keys', params: { keys: 'ctrl+k' } }]);
  });

  it('throws AGENT_ERR_NO_REFERENCE without a task id / tasks file, or when the reference is missing', async () => {
    expect(await codeOf(() => buildReplayAgent(ctx({})))).toBe('AGENT_ERR_NO_REFERENCE');
    expect(await codeOf(() => buildReplayAgent(ctx({ taskId: 'x' })))).toBe('AGENT_ERR_NO_REFERENCE');
    expect(await codeOf(() => buildReplayAgent(ctx({ taskId: 'missing', taskFile: join(dir, 'tasks.json') })))).toBe('AGENT_ERR_NO_REFERENCE');
  });

  it('builds an agent for every task of the basic suite, each ending with finish', async () => {
    const taskFile = join(SUITE_DIR, 'tasks.json');
    const tasks = JSON.parse(await readFile(taskFile, 'utf8')) as Array<{ id: string }>;
    expect(tasks.length).toBeGreaterThanOrEqual(24);
    for (const t of tasks) {
      const agent = buildReplayAgent(ctx({ taskId: t.id, taskFile }));
      expect(agent.steps.length, t.id).toBeGreaterThan(1);
      expect(agent.steps.at(-1)!.action, t.id).toBe('finish');
    }
    // No stray reference without a task.
    const refs = (await readdir(join(SUITE_DIR, 'references'))).map((f) => f.replace(/\.json$/, '')).sort();
    expect(refs).toEqual(tasks.map((t) => t.id).sort());
  });
});
