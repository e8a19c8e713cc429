/**
 * Test fixture: one worker process's model calls through a RedisRateGate.
 * Run: node --import tsx eval/queue/test-helpers/rate-child.fixture.ts PORT RULES CALLS CONCURRENCY [BACKOFF_AFTER BACKOFF_MS]
 * It prints "ready", waits for a line on stdin, then makes CALLS acquires for { adapter: 'chat', model: 'm' } from
 * CONCURRENCY loops, printing {"at":…} (the grant, on Redis's clock) for each; with BACKOFF_AFTER, after that many of its
 * grants it reports a 429 backoff of BACKOFF_MS and prints {"backoff":{from,until}}. Ends with {"done":true}.
 */
import { Redis } from 'ioredis';
import { RedisRateGate } from '../rate-limit.ts';

const [port, rules, calls, concurrency, backoffAfter, backoffMs] = process.argv.slice(2) as [string, string, string, string, string?, string?];
const redis = new Redis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null });
const gate = new RedisRateGate({ connection: redis, rules });
const call = { adapter: 'chat', model: 'm' };
const write = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);

await redis.ping();
process.stdout.write('ready\n');
await new Promise((r) => process.stdin.once('data', r));
let left = Number(calls);
let granted = 0;
const loop = async () => {
  while (left > 0) {
    left--;
    const g = await gate.acquire(call);
    write({ at: g.at });
    granted++;
    if (backoffAfter !== undefined && granted === Number(backoffAfter)) write({ backoff: await gate.backoff(call, Number(backoffMs), 'HTTP 429 (test)') });
  }
};
await Promise.all(Array.from({ length: Number(concurrency) }, loop));
write({ done: true });
redis.disconnect();
process.exit(0);
