/**
 * What watching a run costs the agent (issue 15 point 4: ≤ 5 %; and the figure "a change painted in
 * the viewer ≤ 100 ms median after the agent's client sees it"). One real desktop (Xvnc + Chromium,
 * 1280x800, bench/pages/live.html); "the agent" is a vncua VncClient holding the only VNC connection,
 * with a live endpoint (harness/live/endpoint.ts) serving its framebuffer through a minimal LiveControl
 * (the Agent's own is built on another branch). The same scripted loop runs with 0 watchers (the
 * endpoint running, as every run will have it) and with N watchers (default 2): vncua VncClients in a
 * process of their own (as a browser is) that ask for the next update as soon as one is drawn.
 *
 * Loop step: click the page's box (it toggles black / white) and wait until the agent's framebuffer
 * shows it, type 8 keys into the textarea, sync() (a round trip), screenshot() (PNG). Rounds alternate
 * the order of the two modes; per round, each mode runs the same number of steps. Reported: the loop's
 * time, the agent process's CPU and the watchers' process's CPU per step, medians over rounds, and the
 * median of the per-round ratios. Then latency: the time from the agent's framebuffer receiving the
 * box's new colour (a Framebuffer observer in this process) to each watcher's framebuffer receiving it
 * (an observer in the watchers' process), in epoch ms from both processes' performance clocks; for
 * changes back to back and for changes with a quiet screen between them.
 *
 * Run: npx tsx bench/live-overhead.ts [--rounds 20] [--steps 15] [--samples 60] [--watchers 2]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchDesktop } from '../harness/desktop/index.ts';
import { startLiveEndpoint } from '../harness/live/endpoint.ts';
import { RUNNING_FRAME_INTERVAL_MS, UPDATE_BUDGET } from '../harness/live/pacer.ts';
import { TestControl } from '../harness/live/test-helpers.ts';
import { connectVnc } from '../harness/rfb/client.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg('--rounds', 20);
const STEPS = arg('--steps', 15);
const SAMPLES = arg('--samples', 60);
const WATCHERS = arg('--watchers', 2);
/** The quiet time between spaced latency samples, ms. */
const GAP_MS = 300;
/** The probe pixel, inside the page's box (the kiosk window is the screen at 0,0). */
const PX = 320;
const PY = 240;
const KEYS = [...'livebench'].slice(0, 8).map((c) => c.charCodeAt(0));
const now = () => performance.timeOrigin + performance.now();

type ChildMsg = { type: 'started' | 'connected' | 'disconnected' } | { type: 'error'; message: string } | { type: 'probe'; watcher: number; r: number; t: number };

const pages = await servePages();
const desktop = await launchDesktop({ size: '1280x800', url: pages.url('live.html') });
const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-live-'));
let child: ChildProcess | null = null;
try {
  const agent = await connectVnc(desktop.vncUrl, { timeoutMs: 30_000 });
  const fb = agent.framebuffer;
  const probe = () => fb.pixel(PX, PY)[0];
  // The page is there once the box is black at the probe.
  for (let i = 0; probe() !== 0 || fb.pixel(PX, PY)[1] !== 0; i++) {
    if (i > 200) throw new Error(`the page never showed its black box at (${PX},${PY}): ${fb.pixel(PX, PY)}`);
    await agent.waitForUpdate({ timeoutMs: 30_000 }).catch(() => {});
  }
  const endpoint = await startLiveEndpoint({ dir, control: new TestControl(fb), title: 'live-overhead bench' });

  // The watchers' process.
  const waiters: Array<(m: ChildMsg) => boolean> = [];
  child = fork(
    fileURLToPath(new URL('./lib/live-watchers.ts', import.meta.url)),
    [`ws://127.0.0.1:${endpoint.port}/rfb?token=${endpoint.token}`, String(WATCHERS), String(PX), String(PY)],
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  child.on('message', (m: ChildMsg) => {
    for (let i = 0; i < waiters.length; i++) {
      if (waiters[i]!(m)) {
        waiters.splice(i, 1);
        return;
      }
    }
  });
  const expect = (pred: (m: ChildMsg) => boolean, what: string, timeoutMs = 60_000) =>
    new Promise<ChildMsg>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the watchers' process: no ${what} within ${timeoutMs} ms`)), timeoutMs);
      waiters.push((m) => {
        if (m.type === 'error') {
          clearTimeout(t);
          reject(new Error(`the watchers' process: ${m.message}`));
          return true;
        }
        if (!pred(m)) return false;
        clearTimeout(t);
        resolve(m);
        return true;
      });
    });
  await expect((m) => m.type === 'started', 'start');
  const setWatchers = async (on: boolean) => {
    const done = expect((m) => m.type === (on ? 'connected' : 'disconnected'), on ? 'connect' : 'disconnect');
    child!.send(on ? 'connect' : 'disconnect');
    await done;
    while (endpoint.watchers !== (on ? WATCHERS : 0)) await new Promise((r) => setImmediate(r));
  };

  /** Click the box and wait until the agent's framebuffer shows its new colour; returns that colour's red. */
  const toggle = async (): Promise<number> => {
    const want = probe() === 0 ? 255 : 0;
    agent.pointerEvent(PX, PY, 0);
    agent.pointerEvent(PX, PY, 1);
    agent.pointerEvent(PX, PY, 0);
    while (probe() !== want) await agent.waitForUpdate({ timeoutMs: 10_000 });
    return want;
  };
  const step = async () => {
    await toggle();
    for (const k of KEYS) {
      agent.keyEvent(k, true);
      agent.keyEvent(k, false);
    }
    await agent.sync();
    await agent.screenshot();
  };
  /** CPU time (ms) of the watchers' process so far, from /proc (clock ticks of 10 ms). */
  const childCpu = (): number => {
    const f = readFileSync(`/proc/${child!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  const block = async (): Promise<{ ms: number; cpu: number; watcherCpu: number }> => {
    const c0 = process.cpuUsage();
    const w0 = childCpu();
    const t0 = performance.now();
    for (let s = 0; s < STEPS; s++) await step();
    const t = performance.now() - t0;
    const c = process.cpuUsage(c0);
    return { ms: t, cpu: (c.user + c.system) / 1000, watcherCpu: childCpu() - w0 };
  };

  // Warm up both modes.
  await block();
  await setWatchers(true);
  await block();
  await setWatchers(false);

  const rows: Record<'none' | 'watched', Array<{ ms: number; cpu: number; watcherCpu: number }>> = { none: [], watched: [] };
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  let sentBytes = 0;
  let sentUpdates = 0;
  let builtUpdates = 0;
  let busyMs = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const order: Array<'none' | 'watched'> = r % 2 === 0 ? ['none', 'watched'] : ['watched', 'none'];
    const got: Partial<Record<'none' | 'watched', { ms: number; cpu: number; watcherCpu: number }>> = {};
    for (const mode of order) {
      if (mode === 'watched') await setWatchers(true);
      const before = endpoint.stats();
      got[mode] = await block();
      if (mode === 'watched') {
        const after = endpoint.stats();
        sentBytes += after.bytes - before.bytes;
        sentUpdates += after.updates - before.updates;
        builtUpdates += after.built - before.built;
        busyMs += after.busyMs - before.busyMs;
        await setWatchers(false);
      }
      rows[mode].push(got[mode]!);
    }
    ratios.push(got.watched!.ms / got.none!.ms);
    cpuRatios.push(got.watched!.cpu / got.none!.cpu);
  }

  // Latency, watchers connected and idle but for the change.
  await setWatchers(true);
  let agentAt = 0;
  let agentWant = -1;
  const stopObserving = fb.observe({
    damage(x, y, w, h) {
      if (agentAt === 0 && PX >= x && PY >= y && PX < x + w && PY < y + h && probe() === agentWant) agentAt = now();
    },
    resize() {},
  });
  /** Latency samples: toggle the box, `gapMs` after the watchers showed the previous toggle. */
  const measure = async (gapMs: number): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < SAMPLES + 3; i++) {
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      agentAt = 0;
      agentWant = probe() === 0 ? 255 : 0;
      const seen = Array.from({ length: WATCHERS }, (_, w) => expect((m) => m.type === 'probe' && m.watcher === w && m.r === agentWant, `watcher ${w}'s probe`, 30_000));
      await toggle();
      const ts = (await Promise.all(seen)) as Array<{ t: number }>;
      if (i >= 3) for (const m of ts) out.push(m.t - agentAt);
    }
    return out;
  };
  const backToBack = await measure(0);
  const spaced = await measure(GAP_MS);
  stopObserving();
  await setWatchers(false);

  const perStep = (xs: Array<{ ms: number }>) => median(xs.map((x) => x.ms)) / STEPS;
  const cpuStep = (xs: Array<{ cpu: number }>) => median(xs.map((x) => x.cpu)) / STEPS;
  const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)} %`;
  const watchedSecs = rows.watched.reduce((n, x) => n + x.ms, 0) / 1000;
  console.log(
    [
      `### The agent loop with ${WATCHERS} watchers against none (${ROUNDS} rounds of ${STEPS} steps per mode, 1280x800; step = click + wait for the change, 8 keys, sync(), screenshot())`,
      '',
      table(
        ['Watchers', 'Step, median ms', 'Agent process CPU per step, median ms', "Watchers' process CPU per step, median ms"],
        [
          ['0 (endpoint running)', ms(perStep(rows.none)), ms(cpuStep(rows.none)), '(none)'],
          [`${WATCHERS} (own process, continuous requests)`, ms(perStep(rows.watched)), ms(cpuStep(rows.watched)), ms(median(rows.watched.map((x) => x.watcherCpu)) / STEPS)],
        ],
      ),
      '',
      `Overhead on the loop: **${pct(median(ratios))}** (median of the per-round ratios; quartiles ${pct(quantile(ratios, 0.25))} .. ${pct(quantile(ratios, 0.75))}); the bar is ≤ 5 %. Agent process CPU: ${pct(median(cpuRatios))}.`,
      `While watched, the endpoint sent ${sentUpdates} updates (${builtUpdates} built, the rest shared between watchers), ${(sentBytes / 1e6 / watchedSecs).toFixed(2)} MB/s to ${WATCHERS} watchers (Hextile: one-colour tiles as a colour, the others raw); building and sending them took ${((busyMs / 1000 / watchedSecs) * 100).toFixed(1)} % of the agent process's time (the pacer's budget is ${(UPDATE_BUDGET * 100).toFixed(0)} %).`,
      '',
      `### Latency: the agent's framebuffer gets a change → a watcher's framebuffer gets it (${SAMPLES} changes × ${WATCHERS} watchers each, the box toggled 560x400 px)`,
      '',
      table(
        ['Changes', 'Median ms', 'p90 ms', 'Max ms'],
        [
          [
            `back to back (each as soon as the watchers showed the last: paced at ${RUNNING_FRAME_INTERVAL_MS} ms while the agent runs)`,
            ms(median(backToBack)),
            ms(quantile(backToBack, 0.9)),
            ms(Math.max(...backToBack)),
          ],
          [`${GAP_MS} ms apart (a quiet screen between changes, as between an agent's steps)`, ms(median(spaced)), ms(quantile(spaced, 0.9)), ms(Math.max(...spaced))],
        ],
      ),
    ].join('\n'),
  );
  child.send('exit');
  await endpoint.close();
  await agent.close();
} finally {
  child?.kill();
  await desktop.close();
  await pages.close();
  await rm(dir, { recursive: true, force: true });
}
