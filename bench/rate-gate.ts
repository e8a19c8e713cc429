/**
 * What the rate gate costs a model call: `acquire()` when the limit admits at once (the common case), for the
 * in-process LocalRateGate against the RedisRateGate (one Lua script on a real redis-server on loopback), with no
 * rule, one and three matching rules; Redis's bare PING round trip beside it; `backoff()`; and acquires per second
 * with 16 in flight. A model call takes hundreds of ms to seconds: this is the overhead per call.
 * Usage: `npx tsx bench/rate-gate.ts [N]` (N timed acquires per row, default 2000).
 */
import { LocalRateGate, type RateGate } from '../harness/agent/rate-gate.ts';
import { RedisRateGate } from '../eval/queue/rate-limit.ts';
import { connectRedis, startRedis } from '../eval/queue/test-helpers.ts';
import { quantile, sample, table } from './stats.ts';

const N = Number(process.argv[2] ?? 2000);
const CALL = { adapter: 'chat', model: 'bench-model' };
// Limits that admit every request of the bench (the cost measured is the check, not a wait).
const RULES: Record<string, string[]> = {
  'no rule (backoff check only)': [],
  'one rule (1000000/s)': ['1000000/s'],
  'three rules (global, model, adapter)': ['1000000/s', '1000000/min:bench-model', '1000000/h:chat'],
};

const us = (ms: number) => (ms * 1000).toFixed(1);

async function main(): Promise<void> {
  const redis = await startRedis();
  const conn = connectRedis(redis.port);
  try {
    const rows: string[][] = [];
    const pings = await sample(N, () => conn.ping(), 200);
    rows.push(['Redis PING round trip (baseline)', '', us(quantile(pings, 0.5)), us(quantile(pings, 0.9))]);
    for (const [label, rules] of Object.entries(RULES)) {
      const gates: Array<[string, RateGate]> = [
        ['local', new LocalRateGate(rules)],
        ['redis', new RedisRateGate({ connection: conn, rules, prefix: `bench:${rows.length}` })],
      ];
      for (const [kind, gate] of gates) {
        const xs = await sample(N, () => gate.acquire(CALL), 200);
        rows.push([`acquire(), ${label}`, kind, us(quantile(xs, 0.5)), us(quantile(xs, 0.9))]);
      }
    }
    const gate = new RedisRateGate({ connection: conn, prefix: 'bench:backoff' });
    const offs = await sample(N, () => gate.backoff({ adapter: 'chat', model: 'other' }, 1, 'bench'), 200);
    rows.push(['backoff()', 'redis', us(quantile(offs, 0.5)), us(quantile(offs, 0.9))]);

    // Throughput: 16 acquires in flight from one process (one connection), one rule.
    const busy = new RedisRateGate({ connection: conn, rules: ['1000000/s'], prefix: 'bench:busy' });
    let left = N * 2;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (left-- > 0) await busy.acquire(CALL);
      }),
    );
    const perSec = (N * 2) / ((performance.now() - t0) / 1000);

    process.stdout.write(`${N} timed calls per row (after 200 untimed), redis-server ${redis.port} on 127.0.0.1; µs per call.\n\n`);
    process.stdout.write(`${table(['operation', 'gate', 'median µs', 'p90 µs'], rows)}\n\n`);
    process.stdout.write(`RedisRateGate with 16 acquires in flight from one process: ${Math.round(perSec)} acquires/s.\n`);
    const local = rows.find((r) => r[0]!.startsWith('acquire(), one rule') && r[1] === 'local')!;
    const remote = rows.find((r) => r[0]!.startsWith('acquire(), one rule') && r[1] === 'redis')!;
    process.stdout.write(
      `\nOne rule: the Redis gate costs ${remote[2]} µs median per model call against ${local[2]} µs for the local gate (a model call itself takes 100s of ms).\n`,
    );
  } finally {
    conn.disconnect();
    await redis.close();
  }
}

await main();
