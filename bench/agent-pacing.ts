/**
 * Why the Agent paces input the way it does (harness/agent/input.ts): sends N clicks (a mix of
 * single, double and triple, each at its own position) over a raw VncClient with different
 * pacing rules, and counts the clicks the page saw exactly as intended (right position, click
 * counts 1..n, n mousedowns, one dblclick for n ≥ 2). Run on Xvnc and on x11vnc.
 *
 * Rules (applied after each event; "button" = press or release):
 * - none: no pacing at all;
 * - gapN: sleep N ms after each button event;
 * - rt: an RFB round trip (harness/agent/round-trip.ts) after each button event;
 * - rt+gap2: the Agent's rule: a round trip, then at least 2 ms since the event was sent.
 *
 * Run: npx tsx bench/agent-pacing.ts [--clicks 40] [--reps 2] [--server xvnc|x11vnc|both]
 */
import { RoundTrip } from '../harness/agent/round-trip.ts';
import { startEventsDesktop, type ServerKind } from '../harness/agent/test-helpers/desktops.ts';
import { connectVnc, type VncClient } from '../harness/rfb/index.ts';
import { median, ms, table } from './stats.ts';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const CLICKS = Number(arg('--clicks', '40'));
const REPS = Number(arg('--reps', '2'));
const SERVERS: ServerKind[] = arg('--server', 'both') === 'both' ? ['xvnc', 'x11vnc'] : [arg('--server', 'xvnc') as ServerKind];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Pace = (afterButton: boolean, sentAt: number) => Promise<void>;

function rules(rt: RoundTrip, kind: ServerKind): Array<[string, Pace]> {
  const gaps = kind === 'xvnc' ? [2] : [10, 20];
  return [
    ['none', async () => {}],
    ...gaps.map((g): [string, Pace] => [`gap${g}`, async (b) => (b ? sleep(g) : undefined)]),
    ['rt', async (b) => (b ? rt.sync() : undefined)],
    [
      'rt+gap2',
      async (b, sent) => {
        if (!b) return;
        await rt.sync();
        const left = sent + 2 - performance.now();
        if (left > 0) await sleep(left);
      },
    ],
  ];
}

async function clickOnce(c: VncClient, pace: Pace, x: number, y: number, n: number): Promise<void> {
  c.pointerEvent(x, y, 0);
  await pace(false, performance.now());
  for (let i = 0; i < n; i++) {
    for (const mask of [1, 0]) {
      const t = performance.now();
      c.pointerEvent(x, y, mask);
      await pace(true, t);
    }
  }
}

async function measure(kind: ServerKind): Promise<string[][]> {
  const d = await startEventsDesktop(kind);
  const rows: string[][] = [];
  try {
    const c = await connectVnc(d.vncUrl);
    const rt = new RoundTrip(c);
    try {
      for (const [name, pace] of rules(rt, kind)) {
        const goods: number[] = [];
        const perClick: number[] = [];
        for (let rep = 0; rep < REPS; rep++) {
          await d.reset();
          const plan = Array.from({ length: CLICKS }, (_, i) => ({
            x: 10 + (i % 14) * 40,
            y: 20 + Math.floor(i / 14) * 50 + (i % 2) * 20,
            n: i % 5 === 3 ? 2 : i % 5 === 4 ? 3 : 1,
          }));
          const t0 = performance.now();
          for (const p of plan) await clickOnce(c, pace, p.x, p.y, p.n);
          perClick.push((performance.now() - t0) / CLICKS);
          await rt.sync();
          await sleep(1200);
          const { events } = await d.state();
          let good = 0;
          for (const p of plan) {
            const at = events.filter((e) => e.x === p.x && e.y === p.y);
            const details = at
              .filter((e) => e.type === 'click')
              .map((e) => e.detail)
              .join('');
            const downs = at.filter((e) => e.type === 'mousedown').length;
            const dbl = at.filter((e) => e.type === 'dblclick').length;
            if (details === '123'.slice(0, p.n) && downs === p.n && dbl === (p.n >= 2 ? 1 : 0)) good++;
          }
          goods.push(good);
        }
        rows.push([kind, name, goods.map((g) => `${g}/${CLICKS}`).join(', '), ms(median(perClick))]);
      }
    } finally {
      await c.close();
    }
  } finally {
    await d.close();
  }
  return rows;
}

const rows: string[][] = [];
for (const kind of SERVERS) rows.push(...(await measure(kind)));
console.log(`## Click pacing (${CLICKS} clicks per run: 60% single, 20% double, 20% triple; ${REPS} runs per rule)\n`);
console.log(table(['Server', 'Rule', 'Exact clicks per run', 'ms per click (median)'], rows));
