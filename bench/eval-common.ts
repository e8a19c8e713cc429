/**
 * Shared by the eval benches (not a bench itself): a one-page server, a trivial agent, and a provider
 * wrapper that records each desktop's ports, start time and teardown time.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from '../harness/agent/index.ts';
import type { AgentContext } from '../harness/agent/index.ts';
import type { DesktopProvider, LeasedDesktop } from '../eval/providers/types.ts';
import type { EvalTask } from '../eval/tasks.ts';

/** Serve one trivial page (it already shows the uitask sentinel, so every run succeeds) on 127.0.0.1. */
export async function serveTrivialPage(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><meta charset="utf-8"><title>trivial</title><p>code#1</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/trivial.html`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** `n` copies of a trivial task on `url`. */
export function trivialTasks(n: number, url: string): EvalTask[] {
  return Array.from({ length: n }, (_, i) => ({ id: `t-${String(i).padStart(3, '0')}`, goal: 'nothing to do', url, success: { sentinel: '>code#1<' }, group: 't' }));
}

/** An agent whose one step is a zero-second wait (recorded, with the success check after it), then done. */
class DoneAgent extends Agent {
  override async act(): Promise<boolean> {
    await this.wait(0);
    return true;
  }
}

/** The 1-step agent, as runSuite takes it. */
export const doneAgent = { name: 'done', build: (ctx: AgentContext) => new DoneAgent(ctx.agentOptions) };

/** One desktop's life as the wrapper saw it. */
export interface DesktopLife {
  ports: number[];
  /** performance.now() around acquire() and release(). */
  acquireStart: number;
  acquired: number;
  releaseStart: number;
  released: number;
  /** acquire() failed. */
  failed?: string;
}

/** Wrap a provider to record every desktop's ports and timings into `lives`. */
export function measured(inner: DesktopProvider, lives: DesktopLife[]): DesktopProvider {
  return {
    name: inner.name,
    capacity: inner.capacity,
    async acquire(req): Promise<LeasedDesktop> {
      const life: DesktopLife = { ports: [], acquireStart: performance.now(), acquired: NaN, releaseStart: NaN, released: NaN };
      lives.push(life);
      let d: LeasedDesktop;
      try {
        d = await inner.acquire(req);
      } catch (e) {
        life.failed = (e as Error).message;
        throw e;
      }
      life.acquired = performance.now();
      life.ports = d.ports;
      return {
        ...d,
        release: async () => {
          life.releaseStart = performance.now();
          await d.release();
          life.released = performance.now();
        },
      };
    },
  };
}
