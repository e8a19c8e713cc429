/**
 * `vncua score DIR`: score every run under DIR (the --out of `vncua eval`, or any tree of run
 * directories) and write DIR/scores.json, DIR/scores.md and DIR/scores.html (eval/score.ts;
 * the metrics are described in eval/README.md).
 */
import { pct } from '../eval/score-render.ts';
import { writeScores } from '../eval/score.ts';
import { badArgs, parseCommandArgs } from './command.ts';

const USAGE = `usage: vncua score DIR
  score every run under DIR (OUT/<agent>/<W>_<H>/<task id>/ from vncua eval, or any directories
  holding execution.json / result.json) and write DIR/scores.json, scores.md and scores.html
exit code: 0 when scores were written, 1 when DIR holds no run, 2 on bad arguments
`;

/** Parse `vncua score` arguments; undefined for --help. */
export function parseScoreArgs(argv: string[]): { dir: string } | undefined {
  if (argv.includes('-h') || argv.includes('--help')) return undefined;
  const unknown = argv.find((a) => a.startsWith('-'));
  if (unknown) throw badArgs(`unknown argument "${unknown}".`, unknown);
  if (argv.length !== 1) throw badArgs(argv.length === 0 ? 'DIR is required (the --out directory of vncua eval).' : 'give exactly one DIR.', 'DIR');
  return { dir: argv[0]! };
}

/** Run `vncua score DIR`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('score', USAGE, () => parseScoreArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const { report, files } = await writeScores(o.dir);
  for (const a of report.by_agent) {
    process.stdout.write(`${a.agent}: ${pct(a.success_rate)} success (${a.successes}/${a.runs})${a.infra_errors ? `, ${a.infra_errors} infra error${a.infra_errors === 1 ? '' : 's'} excluded` : ''}\n`);
  }
  process.stdout.write(`scores: ${files.html}\n`);
  return 0;
}
