/**
 * `vncua demo` (`npm run demo`): the main job on the local default, with no API key, no Docker and
 * nothing installed by hand. It runs the built-in basic suite (eval/suites/basic) with the replay
 * agent on fresh local desktops at 1280x800 and 1920x1080, post-processes every recording into
 * per-action screenshots and step reports, scores the runs and prints where scores.html is.
 * It is `vncua eval` with these arguments; --resolution, --workers, --tasks and --out override them.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseScreenSize, type ScreenSize } from '../harness/desktop/size.ts';
import { badInputExit, cancelOnSignals, parseCommandArgs, parseCommandLine, parsedValue, wholeNumber, type CommandSpec } from './command.ts';
import { EVAL_INPUT_ERROR_CODES, runEvalCommand } from './eval.ts';

/** The built-in suite the demo runs (found from cli/ in a checkout, from dist/cli/ in an installed package). */
export const DEMO_TASKS = fileURLToPath(new URL(`${import.meta.url.endsWith('.ts') ? '..' : '../..'}/eval/suites/basic/tasks.json`, import.meta.url));
/** The resolutions the demo runs the suite at. */
export const DEMO_RESOLUTIONS = ['1280x800', '1920x1080'] as const;

/** `vncua demo`'s options: the --help is generated from them. */
export const DEMO_SPEC = {
  command: 'demo',
  options: {
    resolution: { type: 'string', multiple: true, value: 'WxH', description: `screen size (default ${DEMO_RESOLUTIONS.join(' and ')})` },
    workers: { type: 'string', value: 'N', description: 'runs at once', default: '2' },
    tasks: { type: 'string', value: 'FILE', description: 'the task file (default: the basic suite, eval/suites/basic/tasks.json)' },
    out: { type: 'string', value: 'DIR', description: 'results root (default runs/demo-<timestamp>)' },
  },
  notes: `runs the basic suite with the replay agent, post-processes the recordings (step reports) and prints
the path of scores.html; it is \`vncua eval\` with these arguments
`,
} as const satisfies CommandSpec;

/** What `vncua demo` was asked to do. */
export interface DemoOptions {
  resolutions: ScreenSize[];
  workers: number;
  tasks: string;
  out: string;
}

/** Parse `vncua demo` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseDemoArgs(argv: string[], now = new Date()): DemoOptions | undefined {
  const line = parseCommandLine(DEMO_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  const sizes = v.resolution.length > 0 ? v.resolution : DEMO_RESOLUTIONS;
  return {
    resolutions: sizes.map((s) => parsedValue(s, '--resolution', parseScreenSize)),
    workers: wholeNumber(v.workers, '--workers', 1),
    tasks: v.tasks ?? DEMO_TASKS,
    out: v.out ?? join('runs', `demo-${now.toISOString().replace(/[:.]/g, '-').slice(0, 19)}`),
  };
}

/** Run the demo; resolves to the exit code (0 when every run finished and succeeded). */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(DEMO_SPEC, () => parseDemoArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const cancel = cancelOnSignals('demo', 'cancelling: the running tasks stop and their desktops are torn down');
  const t0 = performance.now();
  try {
    const { summary, scoresHtml } = await runEvalCommand(
      {
        tasks: o.tasks,
        agent: 'replay',
        resolutions: o.resolutions,
        workers: o.workers,
        rerun: false,
        out: resolve(o.out),
        provider: 'local',
        process: true,
        score: true,
        args: [],
      },
      { signal: cancel.signal },
    );
    const minutes = (performance.now() - t0) / 60_000;
    process.stdout.write(
      `demo: ${summary.successes}/${summary.ran} runs succeeded (${summary.infraErrors} infra errors${summary.skipped ? `, ${summary.skipped} already done` : ''}) ` +
        `in ${(minutes * 60).toFixed(0)} s, ${(summary.ran / minutes).toFixed(1)} tasks per minute\n`,
    );
    if (scoresHtml) process.stdout.write(`Open the scores: ${scoresHtml}\n`);
    return !summary.cancelled && summary.infraErrors === 0 && summary.successes === summary.ran ? 0 : 1;
  } catch (e) {
    return badInputExit('demo', e, EVAL_INPUT_ERROR_CODES);
  } finally {
    cancel.dispose();
  }
}
