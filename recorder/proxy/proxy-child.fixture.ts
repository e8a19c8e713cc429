/**
 * Test fixture: a Node process running a recording proxy, so a test can SIGKILL it mid-traffic.
 * Prints { url, wsUrl } as one JSON line once listening, then idles until killed.
 * Run: node --import tsx recorder/proxy/proxy-child.fixture.ts <upstream> <dir> [async|sync]
 */
import { startRecordingProxy } from './proxy.ts';

const [upstream, dir, writes] = process.argv.slice(2);
const proxy = await startRecordingProxy({ upstream: upstream!, dir: dir!, writes: writes === 'sync' ? 'sync' : 'async' });
process.stdout.write(`${JSON.stringify({ url: proxy.url, wsUrl: proxy.wsUrl })}\n`);
setInterval(() => {}, 60_000);
