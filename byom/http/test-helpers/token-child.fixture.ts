/**
 * Test fixture: a process that gets a planner token through the shared on-disk cache.
 * Run: node --import tsx byom/http/test-helpers/token-child.fixture.ts AUTH_URL CACHE_FILE
 * It prints "ready", waits for a line on stdin, gets the token, prints { token, fetches } and exits.
 */
import { ClientCredentialsSource } from '../auth.ts';

const [authUrl, cacheFile] = process.argv.slice(2) as [string, string];
const source = new ClientCredentialsSource({ authUrl, clientId: 'id', clientSecret: 'secret', cacheFile, lockTimeoutMs: 20_000 });
process.stdout.write('ready\n');
await new Promise((r) => process.stdin.once('data', r));
const token = await source.token();
process.stdout.write(`${JSON.stringify({ token, fetches: source.fetches })}\n`);
process.exit(0);
