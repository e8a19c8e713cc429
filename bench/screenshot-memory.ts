/**
 * Memory soak: take many screenshots through one live client (1280x800 Xvnc whose
 * root changes every 500 shots, so updates flow too) and print heapUsed / external /
 * RSS at intervals. Flat numbers after warm-up mean nothing leaks per screenshot.
 *
 * Run: node --expose-gc --import tsx bench/screenshot-memory.ts [shots=10000]
 * (without --expose-gc the numbers include garbage not yet collected)
 */
import { connectVnc } from '../harness/rfb/index.ts';
import { startXvnc } from '../harness/rfb/test-helpers/xvnc.ts';

const SHOTS = Number(process.argv[2] ?? 10_000);
const EVERY = Math.max(1, Math.floor(SHOTS / 10));
const gc = (globalThis as { gc?: () => void }).gc;
const mib = (n: number) => (n / 1024 / 1024).toFixed(1);

const xvnc = await startXvnc({ geometry: '1280x800' });
try {
  const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { encodings: ['copyrect', 'raw'] });
  const colours = ['#336699', '#993366', '#669933', '#202020'];
  const rows: string[] = [];
  const sample = (i: number) => {
    gc?.();
    const m = process.memoryUsage();
    rows.push(`| ${i} | ${mib(m.heapUsed)} | ${mib(m.external + m.arrayBuffers)} | ${mib(m.rss)} |`);
    console.log(rows.at(-1));
  };
  console.log(`${SHOTS} screenshots of 1280x800${gc ? '' : ' (no --expose-gc: numbers include uncollected garbage)'}\n`);
  console.log('| shots | heapUsed MiB | external+arrayBuffers MiB | RSS MiB |\n| --- | --- | --- | --- |');
  const started = performance.now();
  for (let i = 0; i < SHOTS; i++) {
    if (i % EVERY === 0) sample(i);
    if (i % 500 === 0) await xvnc.x('xsetroot', ['-solid', colours[(i / 500) % colours.length]!]);
    const shot = await client.screenshot({ cursor: i % 2 === 0, cache: false });
    if (shot.width !== 1280 || shot.png.length < 100) throw new Error('bad screenshot');
  }
  sample(SHOTS);
  console.log(`\n${((performance.now() - started) / SHOTS).toFixed(2)} ms per screenshot on average`);
  await client.close();
} finally {
  await xvnc.stop();
}
