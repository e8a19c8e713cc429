/**
 * Test-only: a results tree for `vncua export` built from the fixture runs of
 * recorder/process/test-helpers/runs.ts (synthetic recordings, W x H): under ROOT/<agent>/<W>_<H>/,
 * replay/click-1 (succeeded, processed beforehand), replay/type-1 (only recorded), replay/norec-1
 * (partial, no recording), replay/bad-1 (a truncated trace), replay/infra-1 (an infra error),
 * chat/click-2 (a middle click, model meta with token usage) and uitask/web-1 (uitask's own run).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processRun } from '../../recorder/process/run.ts';
import { H, W, writeUitaskRun, writeVncuaRun } from '../../recorder/process/test-helpers/runs.ts';

export { H, W };
/** The resolution directory of the tree's runs. */
export const RES = `${W}_${H}`;

const task = (id: string, group: string, agent: string) => ({ id, goal: `Do ${id}`, url: `pages/${id}.html`, group, agent, resolution: `${W}x${H}`, repeat: 1 });

/** Write the tree into `root`. */
export async function writeExportTree(root: string): Promise<void> {
  const runDir = (agent: string, id: string) => join(root, agent, RES, id);
  // click-1: succeeded at entry 0, processed beforehand: its images are copied.
  await writeVncuaRun(runDir('replay', 'click-1'), { success: { index: 0, dt: 150, phase: 'immediate' } });
  await writeFile(join(runDir('replay', 'click-1'), 'task.json'), JSON.stringify(task('click-1', 'click', 'replay')));
  await processRun(runDir('replay', 'click-1'));
  // type-1: succeeded at its finish, only recorded: its images are rendered.
  await writeVncuaRun(runDir('replay', 'type-1'));
  await writeFile(join(runDir('replay', 'type-1'), 'task.json'), JSON.stringify(task('type-1', 'type', 'replay')));
  // norec-1: no recording, no process output: screenshots null with a reason.
  await writeVncuaRun(runDir('replay', 'norec-1'), { partial: true });
  await rm(join(runDir('replay', 'norec-1'), 'recording'), { recursive: true });
  await writeFile(join(runDir('replay', 'norec-1'), 'task.json'), JSON.stringify(task('norec-1', 'norec', 'replay')));
  // bad-1: a truncated trace: skipped with its reason.
  await mkdir(runDir('replay', 'bad-1'), { recursive: true });
  await writeFile(join(runDir('replay', 'bad-1'), 'execution.json'), '[{"action": "mouse_cli');
  // infra-1: the desktop's fault: skipped.
  await mkdir(runDir('replay', 'infra-1'), { recursive: true });
  await writeFile(join(runDir('replay', 'infra-1'), 'execution.json'), '[]');
  await writeFile(
    join(runDir('replay', 'infra-1'), 'result.json'),
    JSON.stringify({ status: 'infra_error', steps: 0, durationMs: 5, error: { code: 'DESKTOP_ERR_START_FAILED', message: 'no X' } }),
  );
  // model agent: a middle click (no uitask shape) and what the model said, with token usage.
  const m = runDir('chat', 'click-2');
  await writeVncuaRun(m, { success: { index: 1, dt: 1030, phase: 'immediate' } });
  await writeFile(join(m, 'task.json'), JSON.stringify(task('click-2', 'click', 'chat')));
  const entries = JSON.parse(await readFile(join(m, 'execution.json'), 'utf8')) as Array<Record<string, any>>;
  entries[0]!.params.button = 'middle';
  entries[0]!.meta = {
    model_text: ['I click the button.'],
    reasoning: ['The button is top left.'],
    model_calls: [{ latency_ms: 812.5, usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 }, model: 'qwen' }],
  };
  entries[1]!.meta = { thought: 'Now type.', model_calls: [{ latency_ms: 100, usage: { input_tokens: 7, output_tokens: 3 } }] };
  await writeFile(join(m, 'execution.json'), JSON.stringify(entries));
  // uitask's own run (no timing, no task.json).
  await writeUitaskRun(join(root, 'uitask', RES, 'web-1'));
}
