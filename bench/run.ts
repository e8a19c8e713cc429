/**
 * Runs every benchmark (each runs vncua and its peers in the same run and prints a
 * markdown section) one after another, and writes bench/RESULTS.md.
 *
 * Run: npm run bench            (all; RESULTS.md is written anew)
 *      npm run bench -- screenshot click-latency   (a subset, by name: their sections of RESULTS.md
 *                                                   are replaced, the others kept, each dated)
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Each bench script, its arguments, and the issue figure it backs. */
const BENCHES: Array<{ name: string; script?: string; args: string[]; node?: string[]; about: string }> = [
  { name: 'screenshot', args: ['30'], about: '`screenshot()` against Playwright, raw CDP and gvnccapture' },
  { name: 'click-latency', args: ['60'], about: 'pointer click until the page handler runs, against xdotool' },
  { name: 'desktop-start', args: ['20'], about: 'desktop start until VNC (ws) and CDP answer, and teardown' },
  { name: 'docker-desktop', args: ['12'], about: 'the Docker desktop against the native one: start until VNC and CDP answer, idle memory, image size' },
  { name: 'desktop-start-security', args: ['15'], about: 'desktop start and teardown now against start.sh before the security work (X cookie, tokens, CDP bridge)' },
  { name: 'screenshot-memory', args: ['10000'], node: ['--expose-gc'], about: "the client's memory over 10,000 screenshots" },
  { name: 'zrle-decode', args: [], about: 'ZRLE decode of a 1280x800 frame' },
  { name: 'tight-decode', args: [], about: 'Tight decode of a 1280x800 frame' },
  { name: 'cdp-check', args: [], about: '`checkTaskSuccess()` (CDP sentinel) against a fresh connection per check' },
  { name: 'cdp-bridge', args: ['200'], about: "CDP through the desktop's token-guarded bridge (Chromium on a pipe) against Chromium's own port" },
  {
    name: 'success-race',
    args: ['--runs', '200', '--control', '100'],
    about:
      "missed and false successes on timer task pages (finish called at once) on Xvnc and x11vnc, against uitask's per-action check, and the grace monitor's per-step overhead on a static screen",
  },
  { name: 'trace-write', args: [], about: 'trace append cost' },
  { name: 'import-time', args: ['10'], about: "each package entry's import time in a fresh node process, and which heavy packages (model SDKs, playwright-core, sharp) it loads" },
  { name: 'agent-overhead', args: ['--x11vnc'], about: "each primitive's cost, checkTaskSuccess(), and the agent loop's own overhead per step" },
  { name: 'proxy-overhead', args: [], about: 'what the recording proxy adds to `screenshot()` and to click latency, and the recording size per minute' },
  {
    name: 'live-overhead',
    args: [],
    about:
      "what watching a run through its live endpoint costs the agent loop (0 against 2 watchers asking continuously), and the latency from the agent's framebuffer to a watcher's",
  },
  { name: 'post-process', args: [], about: 'post-processing a 100-action session at 1280x800, also stretched to 5 minutes: time against the session, actions per second' },
  {
    name: 'post-process-real',
    script: 'post-process',
    args: ['--real-minutes', '5', '--runs', '3'],
    about: 'post-processing a real 5-minute, 100-action session at 1280x800 (paced, not stretched)',
  },
  {
    name: 'viewer',
    args: [],
    about: 'the trace viewer (vncua serve): time to first frame opening a 300-step run, seek median on a 30-minute 1280x800 recording (a real one extended)',
  },
  {
    name: 'live-view',
    args: [],
    about:
      "the live view (vncua serve's live side): a desktop change painted in the viewer's noVNC canvas after the agent's client sees it, and the memory of `vncua serve` watching 8 live workers with a 30-minute recording open, over 10 minutes",
  },
  {
    name: 'export',
    args: [],
    about:
      '`vncua export --format jsonl` of a basic-suite run (30 runs at 1280x800): steps per second with the images rendered from the recordings, and copied from `vncua process`',
  },
  { name: 'page-ready', args: ['15'], about: "a task page's load until the agent's first act(): the page readiness wait against the fixed wait it replaced" },
  { name: 'eval-overhead', args: ['20'], about: "the runner's desktop overhead per task (start plus teardown)" },
  {
    name: 'desktop-pool',
    args: ['20'],
    about: 'per-task desktop overhead (task start until the agent can act) with `vncua eval --pool 2` against none, native and in Docker (when an engine and the image are there)',
  },
  {
    name: 'pool-breakdown',
    args: ['30'],
    about: "where a pooled task's desktop overhead goes (`vncua eval --pool 2`, native): each phase from the runner's task start until the agent can act, medians",
  },
  { name: 'eval-ports', args: ['200', '8'], about: 'port collisions with 8 workers over 200 task runs' },
  { name: 'eval-suite', args: [], about: 'the basic suite with the replay agent end to end at 1280x800 and 1920x1080, tasks per minute' },
  { name: 'desktop-cost', args: ['8'], about: "one desktop's memory (PSS) and CPU while a task runs: the basis of `vncua eval`'s default --workers" },
  {
    name: 'desktop-cost-docker',
    script: 'desktop-cost',
    args: ['8', '--provider', 'docker'],
    about: 'the same for a container desktop, and how many desktops this machine holds while a suite runs',
  },
  {
    name: 'queue-upload',
    args: ['9'],
    about:
      "a finished run (a real recording extended to tens of MB) from a queue worker to the coordinator: the results receiver's HTTP upload against Redis streams in 256 KiB chunks, and Redis's peak memory",
  },
  {
    name: 'queue',
    args: ['--tasks', '12', '--workers', '1,2,4', '--one-process', '4', '--rounds', '3', '--stall-runs', '3'],
    about:
      "the Redis job queue (`vncua eval --queue` + `vncua worker` processes) against `vncua eval` with as many desktops: throughput with 1, 2 and 4 workers, queue overhead per run, and the time to restart a SIGKILLed worker's job elsewhere",
  },
  {
    name: 'explorer',
    args: ['5', '60'],
    about: "the explorer's heuristic steps per second on a static multi-page app (issue 18's bar: 5), beside the random agent on the same page",
  },
  {
    name: 'explorer-findings',
    args: ['5', '80'],
    about: "the explorer's time to find every problem planted in its test app (issue 18's bar: 60 s), medians of 5 seeds",
  },
  { name: 'byom-overhead', args: [], about: "each model adapter's own overhead per step and request payload size at 1280x800" },
  {
    name: 'guard-overhead',
    args: ['80'],
    about: 'the navigation guard (allowedDomains / blockedDomains, CDP Fetch on the browser target) per request: a page with 100 subresources loaded with and without it',
  },
  {
    name: 'secret-scan',
    args: ['2'],
    about: 'the secret scan over every artifact of the full basic suite run with every model adapter (0 hits)',
  },
  {
    name: 'rate-gate',
    args: ['2000'],
    about: "the rate gate's cost per model call: acquire() on the Redis gate (a Lua script on a local redis-server) against the in-process gate",
  },
  {
    name: 'reliability',
    args: [],
    about:
      '`vncua eval` under faults: kill -9 and SIGINT of the runner, a dead Xvnc or Chromium, a task server that stops, a full results disk, 4x overload; nothing lost, nothing doubled, no orphan, the right codes',
  },
];

const only = process.argv.slice(2);
const unknown = only.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown.length > 0) {
  process.stderr.write(`bench: no bench named ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const sections: string[] = [];
const stamp = () =>
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
for (const b of BENCHES) {
  if (only.length > 0 && !only.includes(b.name)) continue;
  process.stderr.write(`bench: ${b.name}...\n`);
  const t = performance.now();
  const r = spawnSync(process.execPath, [...(b.node ?? []), '--import', 'tsx', `bench/${b.script ?? b.name}.ts`, ...b.args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const secs = ((performance.now() - t) / 1000).toFixed(0);
  const out = r.status === 0 ? r.stdout.trim() : `FAILED (exit ${r.status}):\n\n\`\`\`\n${(r.stderr || r.stdout).trim().slice(-3000)}\n\`\`\``;
  sections.push(`## ${b.name}: ${b.about}\n\n\`npx tsx bench/${b.script ?? b.name}.ts ${b.args.join(' ')}\` (${secs} s; ${stamp()})\n\n${out}\n`);
  process.stderr.write(`bench: ${b.name} done in ${secs} s\n`);
}
const results = new URL('./RESULTS.md', import.meta.url);
const header = `# Benchmark results\n\nWritten by \`npm run bench\`; ${cpus().length} cores (${cpus()[0]?.model.trim()}). Each section says when it ran and the load average at its end; a subset run (\`npm run bench -- NAME...\`) replaces only its own sections. Each script runs vncua and its peers in the same run; compare ratios, not absolute times: these machines are noisy.\n`;
const text = `${header}\n${only.length === 0 || !existsSync(results) ? sections.join('\n') : merge(readFileSync(results, 'utf8'), sections)}`;
writeFileSync(results, text);
process.stdout.write(`${header}\n${sections.join('\n')}`);

/** The sections of `old` (after its header) with those named in `fresh` replaced, new ones appended, in BENCHES order. */
function merge(old: string, fresh: string[]): string {
  // A section starts at `## NAME: ` for a bench NAME; a bench's own output may hold other `## ` headings.
  const order = BENCHES.map((b) => b.name);
  const nameOf = (sec: string) => /^## ([^:\n]+):/.exec(sec)?.[1] ?? '';
  const byName = new Map<string, string>();
  const start = new RegExp(`^(?=## (?:${order.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')}): )`, 'm');
  for (const sec of old.split(start).filter((x) => order.includes(nameOf(x)))) byName.set(nameOf(sec), sec.replace(/\n*$/, '\n'));
  for (const sec of fresh) byName.set(nameOf(sec), sec);
  return [...byName.entries()]
    .sort(([a], [b]) => (order.indexOf(a) === -1 ? 1e9 : order.indexOf(a)) - (order.indexOf(b) === -1 ? 1e9 : order.indexOf(b)))
    .map(([, sec]) => sec)
    .join('\n');
}
