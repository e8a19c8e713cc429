/**
 * The live API of vncua serve (a real server on 127.0.0.1) over a root holding a live run (a live endpoint
 * in its directory, its trace written by a real TraceWriter), a stale live.json (its process gone) and a
 * finished run: discovery, status and steps pushed, takeover rules, the relay, an endpoint that stops
 * answering, the end of a run, and nothing written under ROOT.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sampleEntry } from '../../harness/trace/test-fixtures/entries.ts';
import { TraceWriter } from '../../harness/trace/writer.ts';
import { connectVnc } from '../../harness/rfb/client.ts';
import { startViewerServer, type ViewerServer } from '../server.ts';
import type { LiveMessage, LiveRunsMessage } from './messages.ts';
import { serveTestEndpoint, TestControl, type TestEndpoint } from './test-helpers.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const until = async <T>(get: () => T | undefined | null | false, what: string, ms = 15_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((r) => p.once('exit', r));
  return p.pid!;
}

async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    if (p.includes('.vncua-viewer')) continue;
    const s = await stat(p);
    out.push(`${p}:${s.isFile() ? `${s.size}:${s.mtimeMs}` : 'dir'}`);
  }
  return out.sort();
}

interface Fixture {
  root: string;
  server: ViewerServer;
  control: TestControl;
  endpoint: TestEndpoint;
  writer: TraceWriter;
  log: string[];
}

/** ROOT: replay/64_48/live (running), replay/64_48/stale (live.json of a dead process), replay/64_48/done (finished). */
async function fixture(): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), 'vncua-live-api-'));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const live = join(root, 'replay/64_48/live');
  const stale = join(root, 'replay/64_48/stale');
  const done = join(root, 'replay/64_48/done');
  for (const d of [live, stale, done]) await mkdir(d, { recursive: true });
  const writer = new TraceWriter(live);
  await writer.open();
  await writer.append(sampleEntry(0));
  await writeFile(join(stale, 'partial_execution.json'), '[]');
  await writeFile(join(stale, 'live.json'), JSON.stringify({ version: 1, url: 'http://127.0.0.1:9', token: 'f'.repeat(32), pid: await deadPid(), started_at: 1 }));
  const dw = new TraceWriter(done);
  await dw.open();
  await dw.append(sampleEntry(0));
  await dw.finalize();
  const control = new TestControl();
  const endpoint = await serveTestEndpoint(live, control);
  cleanup.push(() => endpoint.close());
  const log: string[] = [];
  const server = await startViewerServer({ root, log: (l) => log.push(l) });
  cleanup.push(() => server.close());
  return { root, server, control, endpoint, writer, log };
}

/** A WebSocket to serve's events (list, or one run), keeping every message. */
async function events(s: ViewerServer, dir?: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${s.url.replace('http:', 'ws:')}api/live/events${dir === undefined ? '' : `?dir=${encodeURIComponent(dir)}`}`, { headers });
  ws.on('error', () => {});
  cleanup.push(() => ws.terminate());
  const got: LiveMessage[] = [];
  ws.on('message', (d) => got.push(JSON.parse(String(d)) as LiveMessage));
  const closed = new Promise<number>((r) => ws.on('close', (c) => r(c)));
  return { ws, got, closed };
}

const post = async (s: ViewerServer, dir: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${s.url}api/live/control?dir=${encodeURIComponent(dir)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('vncua serve live API (real servers on 127.0.0.1)', () => {
  it('lists the live run with its status, the stale live.json as not live, pushes changes; never shows the endpoint or its token', async () => {
    const f = await fixture();
    const before = await snapshot(f.root);
    const list = (await (await fetch(`${f.server.url}api/live/runs`)).json()) as LiveRunsMessage;
    expect(list.runs).toEqual([
      { dir: 'replay/64_48/live', state: 'connecting', holder: null, help: null, steps: 0, pid: process.pid, started_at: f.endpoint.announcement.started_at, error: null },
    ]);
    expect(list.stale).toEqual([expect.objectContaining({ dir: 'replay/64_48/stale', code: 'SERVE_ERR_NOT_LIVE', message: expect.stringContaining('is gone') })]);
    const ev = await events(f.server);
    await until(() => ev.got.some((m) => m.type === 'runs' && m.runs[0]?.state === 'running'), 'the running status');
    f.control.step();
    f.control.askHelp('a captcha');
    const help = await until(() => ev.got.find((m) => m.type === 'runs' && m.runs[0]?.state === 'help') as LiveRunsMessage | undefined, 'the help status');
    expect(help.runs[0]).toMatchObject({ help: 'a captcha', steps: 1 });
    expect(f.log).toContain('replay/64_48/live asks for help: a captcha');
    // The token and the endpoint's port appear in nothing the page gets.
    const all = JSON.stringify(ev.got) + JSON.stringify(list);
    expect(all).not.toContain(f.endpoint.announcement.token);
    expect(all).not.toContain(f.endpoint.announcement.url);
    // A run that starts later appears; one that ends goes.
    const other = join(f.root, 'replay/64_48/later');
    await mkdir(other);
    const c2 = new TestControl();
    const e2 = await serveTestEndpoint(other, c2);
    cleanup.push(() => e2.close());
    await until(() => ev.got.some((m) => m.type === 'runs' && m.runs.map((r) => r.dir).join() === 'replay/64_48/later,replay/64_48/live'), 'the second live run');
    await writeFile(join(other, 'result.json'), JSON.stringify({ status: 'finished', steps: 0, durationMs: 10 }));
    await e2.end();
    await until(() => {
      const last = ev.got.at(-1);
      return last?.type === 'runs' && last.runs.map((r) => r.dir).join() === 'replay/64_48/live';
    }, 'the second run to go');
    // Each start and end bumps `changes` (the page reloads its run table then).
    const changes = () => ev.got.flatMap((m) => (m.type === 'runs' ? [m.changes] : []));
    await until(() => changes().at(-1)! - changes()[0]! === 2, 'the start and the end counted');
    await rm(other, { recursive: true });
    expect(await snapshot(f.root)).toEqual(before);
  });

  it('one run: its status, its steps as they are written, its end once the trace is final (then the socket closes)', async () => {
    const f = await fixture();
    const ev = await events(f.server, 'replay/64_48/live');
    const steps = () => ev.got.filter((m) => m.type === 'steps').flatMap((m) => (m.type === 'steps' ? m.entries : []));
    await until(() => steps().length === 1, 'the first step');
    for (let i = 1; i <= 3; i++) {
      await f.writer.append(sampleEntry(i));
      f.control.step();
      await until(() => steps().some((e) => e.index === i), `step ${i}`);
    }
    expect(steps().map((e) => e.index)).toEqual([0, 1, 2, 3]);
    await until(() => ev.got.some((m) => m.type === 'run' && m.run?.steps === 3), 'the status with 3 steps');
    // The end: the endpoint says ended and closes while the trace is not final yet; "ended" waits for result.json.
    await f.endpoint.end();
    await until(() => ev.got.some((m) => m.type === 'run' && m.run?.state !== 'running'), 'the status after the end');
    expect(ev.got.some((m) => m.type === 'ended')).toBe(false);
    await f.writer.finalize();
    await f.writer.writeResult({ status: 'finished', steps: 4, durationMs: 100 } as never);
    expect(await ev.closed).toBe(1000);
    expect(ev.got.at(-1)).toEqual({ type: 'ended', dir: 'replay/64_48/live' });
    // Not live any more: the page shows the recorded trace.
    const r = (await (await fetch(`${f.server.url}api/live/run?dir=replay%2F64_48%2Flive`)).json()) as { run: unknown; notLive: { code: string } };
    expect(r).toMatchObject({ run: null, notLive: { code: 'SERVE_ERR_NOT_LIVE' } });
    const row = (await (await fetch(`${f.server.url}api/runs`)).json()) as { runs: Array<{ dir: string; status: string }> };
    expect(row.runs.find((x) => x.dir === 'replay/64_48/live')?.status).toBe('finished');
  });

  it('takeover: one holder at a time (LIVE_ERR_TAKEN names the holder, also on stderr), handback by the holder only; bad requests', async () => {
    const f = await fixture();
    const dir = 'replay/64_48/live';
    expect(await post(f.server, dir, { op: 'takeover', who: 'ann' })).toEqual({ status: 200, body: { state: 'paused', holder: 'ann', help: null, steps: 0 } });
    const taken = await post(f.server, dir, { op: 'takeover', who: 'bob' });
    expect(taken).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_TAKEN', holder: 'ann' } });
    expect(f.log.find((l) => l.startsWith('LIVE_ERR_TAKEN: replay/64_48/live: bob asked to take over; ann holds'))).toBeDefined();
    expect(await post(f.server, dir, { op: 'handback', who: 'bob' })).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_NOT_HOLDER' } });
    expect(await post(f.server, dir, { op: 'handback', who: 'ann' })).toEqual({ status: 200, body: { state: 'running', holder: null, help: null, steps: 0 } });
    expect(await post(f.server, dir, { op: 'jump', who: 'ann' })).toMatchObject({ status: 400, body: { code: 'SERVE_ERR_BAD_REQUEST' } });
    expect(await post(f.server, dir, { op: 'takeover', who: '<script>' })).toMatchObject({ status: 400, body: { code: 'SERVE_ERR_BAD_REQUEST' } });
    expect(await post(f.server, 'replay/64_48/done', { op: 'takeover', who: 'ann' })).toMatchObject({ status: 409, body: { code: 'SERVE_ERR_NOT_LIVE' } });
    expect(await post(f.server, 'replay/64_48/stale', { op: 'takeover', who: 'ann' })).toMatchObject({ status: 409, body: { code: 'SERVE_ERR_NOT_LIVE' } });
    expect(await post(f.server, '../x', { op: 'takeover', who: 'ann' })).toMatchObject({ status: 409, body: { code: 'SERVE_ERR_NOT_LIVE' } });
    // Another site's page, or a rebound host name: refused before the endpoint is asked.
    expect(await post(f.server, dir, { op: 'takeover', who: 'eve' }, { origin: 'http://evil.example' })).toMatchObject({ status: 403, body: { code: 'SERVE_ERR_CROSS_ORIGIN' } });
    // A name that resolves to 127.0.0.1 by DNS rebinding: the Host is not a loopback name.
    const rebound = await new Promise<{ status: number; body: string }>((r, j) => {
      const req = request(`${f.server.url}api/live/control?dir=${encodeURIComponent(dir)}`, { method: 'POST', headers: { host: 'evil.example' } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => r({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', j);
      req.end(JSON.stringify({ op: 'takeover', who: 'eve' }));
    });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ code: 'SERVE_ERR_CROSS_ORIGIN' });
    expect(f.control.status().holder).toBeNull();
    const ws = await events(f.server, undefined, { origin: 'http://evil.example' });
    const refused = await new Promise<number>((r) => ws.ws.once('unexpected-response', (_q, res) => r(res.statusCode ?? 0)));
    expect(refused).toBe(403);
  });

  it("relays a watcher to the run's /rfb: an RFB client through serve sees the run's framebuffer; input only with view_only=0 from the holder", async () => {
    const f = await fixture();
    f.control.paint(200, 30, 90);
    const base = `${f.server.url.replace('http:', 'ws:')}api/live/rfb?dir=replay%2F64_48%2Flive`;
    const watch = async (q: string) => {
      const c = await connectVnc(`${base}&${q}`, { timeoutMs: 15_000 });
      cleanup.push(() => c.close());
      return c;
    };
    const ann = await watch('who=ann');
    await ann.sync();
    expect([ann.framebuffer.width, ann.framebuffer.height]).toEqual([64, 48]);
    expect(Buffer.compare(Buffer.from(ann.framebuffer.rgbPlane()), Buffer.from(f.control.framebuffer()!.rgbPlane()))).toBe(0);
    // A change follows.
    f.control.paint(10, 220, 40);
    await until(() => ann.framebuffer.pixel(5, 5)[1] === 220, 'the new colour through serve');
    expect(Buffer.compare(Buffer.from(ann.framebuffer.rgbPlane()), Buffer.from(f.control.framebuffer()!.rgbPlane()))).toBe(0);
    // ann holds control: her input through a view-only socket is dropped, through view_only=0 it arrives.
    await post(f.server, 'replay/64_48/live', { op: 'takeover', who: 'ann' });
    ann.pointerEvent(3, 4, 1);
    const annLive = await watch('who=ann&view_only=0');
    annLive.pointerEvent(7, 8, 1);
    annLive.pointerEvent(7, 8, 0);
    await until(() => f.control.inputs.length === 2, 'the input of the interactive socket');
    expect(f.control.inputs).toEqual([
      { who: 'ann', event: { type: 'pointer', x: 7, y: 8, buttonMask: 1 } },
      { who: 'ann', event: { type: 'pointer', x: 7, y: 8, buttonMask: 0 } },
    ]);
    // bob does not hold control: nothing of his reaches the desktop.
    const bob = await watch('who=bob&view_only=0');
    bob.pointerEvent(1, 1, 1);
    annLive.keyEvent(0x61, true);
    await until(() => f.control.inputs.length === 3, 'the key');
    expect(f.control.inputs.map((i) => i.who)).toEqual(['ann', 'ann', 'ann']);
    // A run that is not live: the socket closes with SERVE_ERR_NOT_LIVE.
    const gone = new WebSocket(`${f.server.url.replace('http:', 'ws:')}api/live/rfb?dir=replay%2F64_48%2Fstale&who=ann`);
    cleanup.push(() => gone.terminate());
    const c = await new Promise<[number, string]>((r) => gone.once('close', (code, reason) => r([code, String(reason)])));
    expect(c[0]).toBe(4404);
    expect(c[1]).toMatch(/^SERVE_ERR_NOT_LIVE/);
  });

  it('an endpoint that stops answering: unreachable with SERVE_ERR_LIVE_UNREACHABLE (once on stderr), control answers it too', async () => {
    const f = await fixture();
    const dir = 'replay/64_48/live';
    const ev = await events(f.server, dir);
    await until(() => ev.got.some((m) => m.type === 'run' && m.run?.state === 'running'), 'running');
    await f.endpoint.crash();
    const m = await until(() => ev.got.find((x) => x.type === 'run' && x.run?.state === 'unreachable'), 'unreachable');
    expect(m.type === 'run' && m.run?.error?.code).toBe('SERVE_ERR_LIVE_UNREACHABLE');
    expect(await post(f.server, dir, { op: 'takeover', who: 'ann' })).toMatchObject({ status: 502, body: { code: 'SERVE_ERR_LIVE_UNREACHABLE' } });
    await until(() => f.log.some((l) => l.startsWith('SERVE_ERR_LIVE_UNREACHABLE: The live endpoint of run replay/64_48/live does not answer')), 'the stderr line');
    expect(f.log.filter((l) => l.startsWith('SERVE_ERR_LIVE_UNREACHABLE: The live endpoint')).length).toBe(1);
  });

  it('a runner whose process dies: its page is told the run ended, it leaves the list, SERVE_ERR_NOT_LIVE on stderr; live.json stays on disk', async () => {
    const f = await fixture();
    const dir = 'replay/64_48/live';
    // The announcement names a process of its own, which then dies (a runner killed with -9).
    const runner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    cleanup.push(() => void runner.kill('SIGKILL'));
    const file = join(f.root, dir, 'live.json');
    await writeFile(file, JSON.stringify({ ...f.endpoint.announcement, pid: runner.pid }));
    const list = await events(f.server);
    const ev = await events(f.server, dir);
    await until(() => ev.got.some((m) => m.type === 'run' && m.run?.state === 'running'), 'running');
    await until(() => list.got.some((m) => m.type === 'runs' && m.runs.length === 1), 'the run listed');
    runner.kill('SIGKILL');
    await new Promise((r) => runner.once('exit', r));
    await f.writer.finalize();
    await f.writer.writeResult({ status: 'error', steps: 1, durationMs: 100 } as never);
    expect(await ev.closed).toBe(1000);
    expect(ev.got.at(-1)).toEqual({ type: 'ended', dir });
    await until(() => list.got.some((m) => m.type === 'runs' && m.runs.length === 0 && m.stale.some((x) => x.dir === dir)), 'the run gone from the list, stale');
    expect(f.log).toContain(`SERVE_ERR_NOT_LIVE: ${dir}: its process (pid ${runner.pid}) is gone`);
    expect((await stat(file)).isFile()).toBe(true);
  });

  it('a viewer with a token (--host): the live API and its sockets need the token too', async () => {
    const f = await fixture();
    const s = await startViewerServer({ root: f.root, token: 'sekrit-token' });
    cleanup.push(() => s.close());
    expect(s.url).toMatch(/\/sekrit-token\/$/);
    const origin = s.url.replace(/sekrit-token\/$/, '');
    expect((await fetch(`${origin}api/live/runs`)).status).toBe(403);
    expect(((await (await fetch(`${s.url}api/live/runs`)).json()) as LiveRunsMessage).runs.map((r) => r.dir)).toEqual(['replay/64_48/live']);
    const bare = new WebSocket(`${origin.replace('http:', 'ws:')}api/live/events`);
    bare.on('error', () => {});
    cleanup.push(() => bare.terminate());
    expect(await new Promise<number>((r) => bare.once('unexpected-response', (_q, res) => r(res.statusCode ?? 0)))).toBe(403);
    const ok = await events(s);
    await until(() => ok.got.some((m) => m.type === 'runs' && m.runs.length === 1), 'the list through the token path');
  });
});
