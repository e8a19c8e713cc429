/**
 * The built-in suite end to end, as `npm run demo` runs it: `vncua eval` (a child process, as a user
 * runs it) over eval/suites/basic/tasks.json with the replay agent on local desktops (the command
 * starts the suite's static server), then the post-processor (step reports) and the scores.
 * The issue's bar: <= 5 minutes on 2 cores. Prints tasks per minute, the success rate and where the
 * time went.
 *
 * Run: npx tsx bench/eval-suite.ts [--workers 2] [--resolution WxH ...] [--no-process]
 * (default: 1280x800 and 1920x1080, as `npm run demo`)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScoreReport } from '../eval/score.ts';
import { table } from './stats.ts';

const LIMIT_MS = 5 * 60_000;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const workers = argv.includes('--workers') ? argv[argv.indexOf('--workers') + 1]! : '2';
const resolutions = argv.flatMap((a, i) => (a === '--resolution' ? ['--resolution', argv[i + 1]!] : []));
const processRuns = !argv.includes('--no-process');

async function main(): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-suite-'));
  const tasks = join(ROOT, 'eval/suites/basic/tasks.json');
  const sizes = resolutions.length ? resolutions : ['--resolution', '1280x800', '--resolution', '1920x1080'];
  const args = ['--tasks', tasks, '--agent', 'replay', '--workers', workers, '--out', out, ...sizes, ...(processRuns ? ['--process'] : [])];
  const marks: Record<string, number> = {};
  const t0 = performance.now();
  try {
    const child = spawn(process.execPath, [join(ROOT, 'bin/vncua.js'), 'eval', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      process.stderr.write(s);
      pending += s;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        for (const k of ['serving', 'results:', 'scores:']) if (line.includes(k)) marks[k] ??= performance.now() - t0;
      }
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    const wall = performance.now() - t0;
    if (code !== 0) throw new Error(`vncua eval exited with ${code}`);
    const report = JSON.parse(await readFile(join(out, 'scores.json'), 'utf8')) as ScoreReport;
    const runs = report.runs.length;
    const verdict = wall <= LIMIT_MS && report.infra_errors.length === 0 ? 'PASS' : 'FAIL';
    const s = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);
    process.stdout.write(
      `\nThe basic suite with the replay agent, end to end (\`vncua eval\`${processRuns ? ' --process' : ''}, scores), ${workers} workers, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}\n\n` +
        table(
          ['What', 'Value'],
          [
            ['runs', `${runs} (${report.by_agent.map((a) => `${a.agent}: ${a.successes}/${a.runs} succeeded`).join('; ')}; ${report.infra_errors.length} infra errors)`],
            ['success per resolution', report.by_resolution.map((r) => `${r.resolution}: ${(100 * (r.success_rate ?? 0)).toFixed(0)}%`).join(', ')],
            ['command start until the suite is served', s(marks.serving)],
            ['eval (desktops + agent runs)', s(marks['results:'] !== undefined && marks.serving !== undefined ? marks['results:'] - marks.serving : undefined)],
            ['post-processing + scores', s(marks['scores:'] !== undefined && marks['results:'] !== undefined ? marks['scores:'] - marks['results:'] : undefined)],
            ['end to end', `${s(wall)} (limit ${LIMIT_MS / 1000} s): ${verdict}`],
            ['tasks per minute', ((runs / wall) * 60_000).toFixed(1)],
          ],
        ) +
        '\n',
    );
    if (verdict !== 'PASS') process.exitCode = 1;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

await main();
