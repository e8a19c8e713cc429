/**
 * `vncua export --format jsonl` over a suite run: the basic suite (30 tasks) with the replay agent at
 * 1280x800 (`vncua eval`, a child process), then, each as a user runs it (a child process):
 *   1. `vncua export` of the unprocessed results: every before/after image rendered from the recordings
 *      (--jobs 1, then --jobs 2);
 *   2. `vncua process --jobs 2` (the peer: what rendering the same images into the runs costs);
 *   3. `vncua export` again, now copying vncua process's images.
 * Prints steps per second for each export, and the JSONL and image sizes.
 *
 * Run: npx tsx bench/export.ts [--root DIR]   (--root: an existing, unprocessed results root instead of a fresh suite run)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/vncua.js');
const argv = process.argv.slice(2);
const given = argv.includes('--root') ? argv[argv.indexOf('--root') + 1] : undefined;

/** Run `vncua ARGS...`; its wall time in ms and its stdout. */
async function vncua(args: string[]): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    stdout += s;
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`vncua ${args[0]} exited with ${code}:\n${stdout.slice(-2000)}`);
  return { ms: performance.now() - t0, stdout };
}

async function du(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += (await stat(join(e.parentPath, e.name))).size;
  }
  return n;
}

async function main(): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'vncua-bench-export-'));
  try {
    let root = given;
    if (root === undefined) {
      root = join(base, 'runs');
      process.stderr.write('export bench: vncua eval of the basic suite (replay, 1280x800)...\n');
      await vncua(['eval', '--tasks', join(ROOT, 'eval/suites/basic/tasks.json'), '--agent', 'replay', '--resolution', '1280x800', '--workers', '2', '--out', root, '--no-score']);
    }
    const rendered = await vncua(['export', root, '--format', 'jsonl', '--out', join(base, 'rendered')]);
    const rendered2 = await vncua(['export', root, '--format', 'jsonl', '--out', join(base, 'rendered2'), '--jobs', '2']);
    const steps = (await readFile(join(base, 'rendered', 'steps.jsonl'), 'utf8')).trimEnd().split('\n').length;
    const manifest = JSON.parse(await readFile(join(base, 'rendered', 'export.json'), 'utf8')) as { runs: unknown[]; images: number };
    const processed = given === undefined ? await vncua(['process', root, '--jobs', '2']) : null;
    const copied = processed ? await vncua(['export', root, '--format', 'jsonl', '--out', join(base, 'copied')]) : null;
    const rate = (ms: number) => `${(steps / (ms / 1000)).toFixed(1)} steps/s`;
    const jsonl = (await stat(join(base, 'rendered', 'steps.jsonl'))).size;
    const images = await du(join(base, 'rendered', 'images'));
    process.stdout.write(
      `\n\`vncua export --format jsonl\` of a basic-suite run (replay agent, 1280x800): ${manifest.runs.length} runs, ${steps} steps, ${manifest.images} PNGs; ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}; each command a fresh process, its start included\n\n` +
        table(
          ['What', 'Wall time', 'Steps per second'],
          [
            ['export, unprocessed runs (every image rendered from the recordings), --jobs 1', `${(rendered.ms / 1000).toFixed(1)} s`, rate(rendered.ms)],
            ['export, unprocessed runs, --jobs 2', `${(rendered2.ms / 1000).toFixed(1)} s`, rate(rendered2.ms)],
            ...(processed
              ? [['peer: `vncua process --jobs 2` of the same runs (images + step reports into the runs)', `${(processed.ms / 1000).toFixed(1)} s`, rate(processed.ms)]]
              : []),
            ...(copied ? [['export, processed runs (images copied from vncua process)', `${(copied.ms / 1000).toFixed(1)} s`, rate(copied.ms)]] : []),
          ],
        ) +
        `\nJSONL ${(jsonl / 1024).toFixed(0)} KiB (${(jsonl / steps).toFixed(0)} bytes per line); images ${(images / 1024 / 1024).toFixed(1)} MiB (${(images / manifest.images / 1024).toFixed(0)} KiB per PNG).\n`,
    );
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

await main();
