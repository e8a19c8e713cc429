/**
 * The watchers of bench/live-overhead.ts, in a process of their own (as a browser would be): on
 * "connect" opens N vncua VncClients to the endpoint's /rfb (each asks for the next update as soon as
 * one is drawn: continuous requests), on "disconnect" closes them. Each watcher reports, with the
 * epoch time in ms (sub-ms), when the probe pixel it watches turns a new colour.
 *
 * Run by the bench through child_process.fork: argv URL N PROBE_X PROBE_Y.
 */
import { type VncClient, connectVnc } from '../../harness/rfb/client.ts';

const [url, n, px, py] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
let clients: VncClient[] = [];
const now = () => performance.timeOrigin + performance.now();
const send = (m: unknown) => process.send?.(m);

async function connect(): Promise<void> {
  clients = await Promise.all(Array.from({ length: n }, (_, i) => connectVnc(`${url}&who=watcher${i}`, { timeoutMs: 30_000 })));
  clients.forEach((c, i) => {
    const fb = c.framebuffer;
    let last = fb.pixel(px, py)[0];
    fb.observe({
      damage(x, y, w, h) {
        if (px < x || py < y || px >= x + w || py >= y + h) return;
        const r = fb.pixel(px, py)[0];
        if (r === last) return;
        last = r;
        send({ type: 'probe', watcher: i, r, t: now() });
      },
      resize() {},
    });
  });
}

process.on('message', (m: string) => {
  if (m === 'connect')
    void connect().then(
      () => send({ type: 'connected' }),
      (e: Error) => send({ type: 'error', message: e.message }),
    );
  else if (m === 'disconnect') {
    void Promise.all(clients.map((c) => c.close())).then(() => {
      clients = [];
      send({ type: 'disconnected' });
    });
  } else if (m === 'exit') void Promise.all(clients.map((c) => c.close())).then(() => process.exit(0));
});
send({ type: 'started' });
