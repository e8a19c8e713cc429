/**
 * Desktop start and teardown, against its parts started bare in the same run.
 * Run: npx tsx bench/desktop-start.ts [runs=20]
 *
 * - vncua desktop: launchDesktop() until the RFB greeting arrives through the WebSocket AND
 *   CDP /json/version answers (both checked again from Node after it resolves, through the
 *   token-guarded bridges; Chromium on --remote-debugging-pipe behind cdp-bridge.py); close()
 *   until no process of the desktop is left.
 * - peers: bare Xvnc until its RFB port accepts; Chromium (same flags, on an already running
 *   X display) until CDP /json/version answers; stock websockify and our ws-bridge.py (the
 *   same websockify without numpy) until their port accepts.
 * Runs are interleaved so every row sees the same machine load. Prints a markdown table.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_BIN, DESKTOP_CHROMIUM_FLAGS, devToolsEndpoint } from '../harness/cdp/test-helpers.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { stopGroup, stopTagged } from '../harness/desktop/procs.ts';
import { cdpJson, rfbGreeting } from '../harness/desktop/test-helpers.ts';
import { median, ms, quantile, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 20);
const WARMUP = 2;
const POLL_MS = 5;
const WS_BRIDGE = fileURLToPath(new URL('../docker/ws-bridge.py', import.meta.url));
// ws-bridge.py answers only under a token, read from a file (as start.sh gives it).
const TOKEN_DIR = mkdtempSync(join(tmpdir(), 'vncua-bench-token-'));
const TOKEN_FILE = join(TOKEN_DIR, 'token');
writeFileSync(TOKEN_FILE, '0123456789abcdef0123456789abcdef\n', { mode: 0o600 });
process.on('exit', () => rmSync(TOKEN_DIR, { recursive: true, force: true }));

const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('bench: timed out');
    await sleep(POLL_MS);
  }
}

/** A bare part: its own process group, tagged so stray helpers are found too. */
function spawnPart(cmd: string, args: string[], tag: string, extraEnv: Record<string, string> = {}, fd3 = false): ChildProcess {
  return spawn(cmd, args, {
    detached: true,
    stdio: fd3 ? ['ignore', 'ignore', 'ignore', 'pipe'] : 'ignore',
    env: { ...process.env, ...extraEnv, VNCUA_DESKTOP_TAG: tag },
  });
}

async function stopPart(p: ChildProcess, tag: string): Promise<void> {
  await stopGroup(p.pid!, p.pid!);
  if (p.exitCode === null && p.signalCode === null) {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await stopTagged(tag);
}

let tagSeq = 0;
const newTag = () => `bench-desktop-${process.pid}-${++tagSeq}`;

/** Start Xvnc; resolves with its display once it wrote it to -displayfd. */
async function startXvnc(port: number, tag: string): Promise<{ proc: ChildProcess; display: string }> {
  const proc = spawnPart(
    'Xvnc',
    [
      '-displayfd',
      '3',
      '-geometry',
      '1280x800',
      '-depth',
      '24',
      '-SecurityTypes',
      'None',
      '-interface',
      '127.0.0.1',
      '-rfbport',
      String(port),
      '-AlwaysShared',
      '-UseBlacklist=0',
      '-nolisten',
      'tcp',
    ],
    tag,
    {},
    true,
  );
  const display = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const fd3 = proc.stdio[3] as NodeJS.ReadableStream;
    fd3.setEncoding('utf8');
    fd3.on('data', (s: string) => {
      buf += s;
      if (buf.includes('\n')) resolve(`:${buf.trim()}`);
    });
    proc.once('exit', (c) => reject(new Error(`Xvnc exited with ${c}`)));
  });
  return { proc, display };
}

async function benchXvnc(): Promise<number> {
  const tag = newTag();
  const port = await freePort();
  const t0 = performance.now();
  const { proc } = await startXvnc(port, tag);
  await until(() => accepts(port));
  const dt = performance.now() - t0;
  await stopPart(proc, tag);
  return dt;
}

async function benchChromium(): Promise<number> {
  const xTag = newTag();
  const x = await startXvnc(await freePort(), xTag);
  const tag = newTag();
  const dir = mkdtempSync(join(tmpdir(), 'vncua-bench-chromium-'));
  try {
    const t0 = performance.now();
    const proc = spawnPart(CHROMIUM_BIN, ['--remote-debugging-port=0', `--user-data-dir=${dir}`, ...DESKTOP_CHROMIUM_FLAGS, '--app=about:blank'], tag, { DISPLAY: x.display });
    let cdpUrl: string | undefined;
    await until(async () => {
      cdpUrl ??= (await devToolsEndpoint(dir))?.cdpUrl;
      if (!cdpUrl) return false;
      return cdpJson(cdpUrl, '/json/version').then(
        () => true,
        () => false,
      );
    });
    const dt = performance.now() - t0;
    await stopPart(proc, tag);
    return dt;
  } finally {
    await stopPart(x.proc, xTag);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchWebsockify(cmd: string, args: string[]): Promise<number> {
  const tag = newTag();
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawnPart(cmd, [...args, `127.0.0.1:${port}`, '127.0.0.1:1'], tag);
  await until(() => accepts(port));
  const dt = performance.now() - t0;
  await stopPart(proc, tag);
  return dt;
}

async function benchDesktop(): Promise<{ resolve: number; ready: number; teardown: number }> {
  const t0 = performance.now();
  const d = await launchDesktop();
  const resolve = performance.now() - t0;
  await Promise.all([rfbGreeting(d.vncUrl), cdpJson(d.cdpUrl, '/json/version')]);
  const ready = performance.now() - t0;
  const t1 = performance.now();
  await d.close();
  return { resolve, ready, teardown: performance.now() - t1 };
}

async function main(): Promise<void> {
  const rows: Record<string, number[]> = {
    desktopResolve: [],
    desktopReady: [],
    desktopTeardown: [],
    xvnc: [],
    chromium: [],
    websockify: [],
    bridge: [],
  };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const keep = i >= WARMUP;
    const d = await benchDesktop();
    const x = await benchXvnc();
    const c = await benchChromium();
    const w = await benchWebsockify('websockify', []);
    const b = await benchWebsockify('/usr/bin/python3', [WS_BRIDGE, '--token-file', TOKEN_FILE]);
    if (!keep) continue;
    rows.desktopResolve!.push(d.resolve);
    rows.desktopReady!.push(d.ready);
    rows.desktopTeardown!.push(d.teardown);
    rows.xvnc!.push(x);
    rows.chromium!.push(c);
    rows.websockify!.push(w);
    rows.bridge!.push(b);
    process.stderr.write(`run ${i - WARMUP + 1}/${RUNS}: desktop ready ${ms(d.ready)} ms, teardown ${ms(d.teardown)} ms\n`);
  }
  const med = (k: string) => median(rows[k]!);
  const criticalPath = med('xvnc') + med('chromium');
  const line = (name: string, k: string, vs: string) => [name, ms(med(k)), ms(quantile(rows[k]!, 0.9)), vs];
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  process.stdout.write(
    `\nDesktop start and teardown, ${RUNS} runs (after ${WARMUP} warm-up), ${new Date().toISOString().slice(0, 10)}, ms\n\n` +
      table(
        ['What', 'median', 'p90', 'ratio'],
        [
          line(
            'vncua desktop: start to ready (RFB greeting over ws + CDP /json/version, checked from Node)',
            'desktopReady',
            `${ratio(med('desktopReady'), criticalPath)} of bare Xvnc + Chromium (${ms(criticalPath)})`,
          ),
          line('vncua desktop: launchDesktop() resolves', 'desktopResolve', ''),
          line('vncua desktop: close() until no process is left', 'desktopTeardown', ''),
          line('peer: bare Xvnc, spawn to RFB port open', 'xvnc', ''),
          line('peer: bare Chromium on a running X display, spawn to CDP /json/version', 'chromium', ''),
          line('peer: stock websockify, spawn to port open', 'websockify', ''),
          line('ours: ws-bridge.py (websockify without numpy), spawn to port open', 'bridge', `${ratio(med('bridge'), med('websockify'))} of stock websockify`),
        ],
      ) +
      '\n',
  );
}

await main();
