/**
 * What the pool benches (desktop-pool.ts, pool-breakdown.ts) share: a trivial task page and the
 * spares' empty page served on this machine, an agent whose one step holds the desktop, and a
 * provider wrapper noting when each task asked for its desktop.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DesktopProvider } from '../../eval/providers/types.ts';
import { SPARE_PAGE_PATH } from '../../eval/static-server.ts';
import { Agent, type AgentContext } from '../../harness/agent/index.ts';

/** One page that shows its text at once, and SPARE_PAGE_PATH, on `host` (0.0.0.0 for containers); `onRequest` hears each request's path as it arrives. */
export async function servePage(host: string, onRequest?: (path: string, t: number) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    onRequest?.(req.url ?? '', performance.now());
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    // The spares' empty page, as vncua eval's suite server answers it (eval/static-server.ts).
    if (req.url === SPARE_PAGE_PATH) res.end('<!doctype html><meta charset="utf-8"><title></title>');
    else res.end('<!doctype html><meta charset="utf-8"><title>trivial</title><p>code#1</p>');
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** When each task asked for its desktop, got it, its `ready` settled, and its agent could first act (by task URL; performance.now()). */
export interface Marks {
  asked: Map<string, number>;
  acquired: Map<string, number>;
  ready: Map<string, number>;
  acted: Map<string, number>;
}

/** Empty marks. */
export const newMarks = (): Marks => ({ asked: new Map(), acquired: new Map(), ready: new Map(), acted: new Map() });

/** One step: note the time, hold the desktop for `holdMs`, finish. */
export class HoldAgent extends Agent {
  private readonly url: string;
  constructor(
    ctx: AgentContext,
    private readonly marks: Marks,
    private readonly holdMs: number,
  ) {
    super(ctx.agentOptions);
    this.url = ctx.url ?? '';
  }
  override async act(): Promise<boolean> {
    if (!this.marks.acted.has(this.url)) this.marks.acted.set(this.url, performance.now());
    await this.wait(this.holdMs / 1000);
    return true;
  }
}

/** `inner`, noting when each task asks for its desktop and when its `ready` settles. */
export function timed(inner: DesktopProvider, marks: Marks): DesktopProvider {
  return {
    name: inner.name,
    ...(inner.plan ? { plan: (u) => inner.plan!(u) } : {}),
    ...(inner.close ? { close: () => inner.close!() } : {}),
    ...(inner.prepare ? { prepare: (o) => inner.prepare!(o) } : {}),
    acquire: async (req) => {
      marks.asked.set(req.url, performance.now());
      const d = await inner.acquire(req);
      marks.acquired.set(req.url, performance.now());
      const note = () => void marks.ready.set(req.url, performance.now());
      if (d.ready) void d.ready.then(note, () => {});
      else note();
      return d;
    },
  };
}
