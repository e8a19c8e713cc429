/**
 * What the desktop's security (issue 12: X cookie, token-guarded WebSocket and CDP bridges,
 * Chromium on a pipe, scrubbed environments) costs at start and teardown: docker/start.sh as it
 * is, against start.sh as it was before (commit 3fe8974: no cookie, no token, Chromium on its
 * own port), taken from git history into a temp dir. Runs alternate, same machine load.
 * Each run: spawn the script, its JSON line, then the RFB greeting through the WebSocket and CDP
 * json/version answered from Node (ready); close its stdin until no process of it is left.
 *
 * Run: npx tsx bench/desktop-start-security.ts [runs=15]   (needs the git history)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitGroupGone } from '../harness/desktop/procs.ts';
import { cdpJson, rfbGreeting } from '../harness/desktop/test-helpers.ts';
import { median, ms, quantile, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 15);
const WARMUP = 2;
const BEFORE = '3fe8974';
const root = fileURLToPath(new URL('..', import.meta.url));

const old = mkdtempSync(join(tmpdir(), 'vncua-bench-start-before-'));
try {
  for (const f of ['start.sh', 'ws-bridge.py', 'tcp-forward.py']) {
    writeFileSync(join(old, f), execFileSync('git', ['show', `${BEFORE}:docker/${f}`], { cwd: root }));
  }
} catch (e) {
  rmSync(old, { recursive: true, force: true });
  console.log(`\nskipped: the start script of ${BEFORE} is not in this checkout's git history (${(e as Error).message.split('\n')[0]})`);
  process.exit(0);
}

const scripts = { before: join(old, 'start.sh'), now: join(root, 'docker/start.sh') };
type Kind = keyof typeof scripts;

async function once(script: string): Promise<{ ready: number; teardown: number }> {
  const t0 = performance.now();
  const child = spawn('bash', [script, '--json'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`${script} exited with ${c}`)));
  });
  const info = JSON.parse(line) as { vncUrl: string; cdpUrl: string };
  await Promise.all([rfbGreeting(info.vncUrl), cdpJson(info.cdpUrl, 'json/version')]);
  const ready = performance.now() - t0;
  const t1 = performance.now();
  child.stdin!.end();
  await waitGroupGone(child.pid!, 20_000);
  return { ready, teardown: performance.now() - t1 };
}

const rows: Record<Kind, { ready: number[]; teardown: number[] }> = { before: { ready: [], teardown: [] }, now: { ready: [], teardown: [] } };
try {
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const k of (i % 2 ? ['before', 'now'] : ['now', 'before']) as Kind[]) {
      const r = await once(scripts[k]);
      if (i < WARMUP) continue;
      rows[k].ready.push(r.ready);
      rows[k].teardown.push(r.teardown);
    }
  }
} finally {
  rmSync(old, { recursive: true, force: true });
}
const line = (name: string, xs: number[], vs: number[]) => [name, ms(median(xs)), ms(quantile(xs, 0.9)), `${(median(xs) / median(vs)).toFixed(2)}x`];
console.log(
  `\nDesktop start (to ready: RFB greeting over ws + CDP json/version from Node) and teardown, start.sh now vs at ${BEFORE}, ${RUNS} runs each, alternating, ${new Date().toISOString().slice(0, 10)}, ms\n`,
);
console.log(
  table(
    ['What', 'median', 'p90', 'now / before'],
    [
      line('start.sh now: start to ready', rows.now.ready, rows.before.ready),
      line(`start.sh at ${BEFORE}: start to ready`, rows.before.ready, rows.before.ready),
      line('start.sh now: teardown (stdin closed to no process left)', rows.now.teardown, rows.before.teardown),
      line(`start.sh at ${BEFORE}: teardown`, rows.before.teardown, rows.before.teardown),
    ],
  ),
);
