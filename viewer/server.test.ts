import { createServer } from 'node:net';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { Replayer } from '../recorder/replay/replayer.ts';
import { T, damageServerStreamAt, writeVncuaRun } from '../recorder/process/test-helpers/runs.ts';
import { startViewerServer, type ViewerServer } from './server.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'vncua-viewer-http-'));
  cleanup.push(() => rm(d, { recursive: true, force: true }));
  return d;
}
async function serve(root: string, opts: Partial<Parameters<typeof startViewerServer>[0]> = {}): Promise<ViewerServer> {
  const s = await startViewerServer({ root, ...opts });
  cleanup.push(() => s.close());
  return s;
}
/** Two agents, two tasks; one run fails (a task.json of another group, no success), one run is damaged. */
async function sampleRoot(): Promise<string> {
  const root = await tmp();
  await writeVncuaRun(join(root, 'replay', '64_48', 't1'));
  await writeVncuaRun(join(root, 'replay', '64_48', 'broken'));
  await damageServerStreamAt(join(root, 'replay', '64_48', 'broken'), T + 1100);
  await writeFile(join(root, 'replay', '64_48', 'broken', 'task.json'), JSON.stringify({ id: 'broken', goal: 'Find the hidden llama', group: 'hard' }));
  const other = join(root, 'scripted', '64_48', 't1');
  await writeVncuaRun(other);
  await writeFile(join(other, 'result.json'), JSON.stringify({ status: 'max_steps', steps: 4, durationMs: 5001 }));
  const exec = join(other, 'execution.json');
  const { readFile } = await import('node:fs/promises');
  const entries = JSON.parse(await readFile(exec, 'utf8')) as Array<{ task_marked_complete: boolean | null }>;
  for (const e of entries) e.task_marked_complete = false;
  await writeFile(exec, JSON.stringify(entries));
  return root;
}
async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.name === '.vncua-viewer') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p, `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}:${(await stat(p)).mtimeMs}:${(await stat(p)).size}`);
    }
  };
  await walk(root, '');
  return out.sort();
}

describe('vncua serve HTTP API (a real server on 127.0.0.1, OS port)', () => {
  it('lists the runs with their scores, filters and searches them', async () => {
    const root = await sampleRoot();
    const s = await serve(root);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(s.token).toBeNull();
    const get = async (q: string) =>
      (await (await fetch(`${s.url}api/runs${q}`)).json()) as {
        runs: Array<{ dir: string; success: boolean; agent: string }>;
        total: number;
        facets: Record<string, string[]>;
        by_agent: Array<{ agent: string; successes: number; runs: number }>;
      };
    const all = await get('');
    expect(all.total).toBe(3);
    expect(all.runs.map((r) => r.dir)).toEqual(['replay/64_48/broken', 'replay/64_48/t1', 'scripted/64_48/t1']);
    expect(all.facets.agent).toEqual(['replay', 'scripted']);
    expect(all.facets.group).toEqual(['hard', 't1']);
    expect(all.facets.status).toEqual(['failure', 'success']);
    expect(all.by_agent.find((a) => a.agent === 'scripted')).toMatchObject({ successes: 0, runs: 1 });
    expect((await get('?agent=scripted')).runs.map((r) => r.dir)).toEqual(['scripted/64_48/t1']);
    expect((await get('?status=failure')).runs.map((r) => r.dir)).toEqual(['scripted/64_48/t1']);
    expect((await get('?group=hard')).runs.map((r) => r.dir)).toEqual(['replay/64_48/broken']);
    expect((await get('?resolution=64x48')).runs).toHaveLength(3);
    expect((await get('?resolution=1280x800')).runs).toHaveLength(0);
    // Task text and action params.
    expect((await get('?q=llama')).runs.map((r) => r.dir)).toEqual(['replay/64_48/broken']);
    expect((await get(`?q=${encodeURIComponent('"text":"ab"')}`)).runs).toHaveLength(3);
    expect((await get('?q=type_text&agent=replay')).runs).toHaveLength(2);
  });

  it('serves one run and the frame at any instant: the pixels vncua process replays; PNG too; nothing under ROOT changes but the cache', async () => {
    const root = await sampleRoot();
    const before = await snapshot(root);
    const s = await serve(root);
    const dir = 'replay/64_48/t1';
    const detail = (await (await fetch(`${s.url}api/run?dir=${encodeURIComponent(dir)}`)).json()) as {
      entries: unknown[];
      recording: { start: number; end: number; damage: unknown };
    };
    expect(detail.entries).toHaveLength(4);
    expect(detail.recording.start).toBeLessThanOrEqual(T + 10);
    expect(detail.recording.end).toBe(T + 6000);
    expect(detail.recording.damage).toBeNull();
    const replay = await Replayer.open(join(root, dir));
    for (const t of [T + 50, T + 139, T + 140, T + 1050, T + 2600, T + 5999, T + 4000, T + 100]) {
      const res = await fetch(`${s.url}api/frame?dir=${encodeURIComponent(dir)}&t=${t}`);
      expect(res.status).toBe(200);
      const got = new Uint8Array(await res.arrayBuffer());
      const want = await (await Replayer.open(join(root, dir))).frameAt(t, { cursor: true });
      expect([Number(res.headers.get('x-width')), Number(res.headers.get('x-height'))]).toEqual([want!.width, want!.height]);
      expect(Buffer.compare(Buffer.from(got), Buffer.from(want!.rgb)), `T+${t - T}`).toBe(0);
    }
    expect((await fetch(`${s.url}api/frame?dir=${encodeURIComponent(dir)}&t=${T}`)).status).toBe(204);
    const png = await fetch(`${s.url}api/frame.png?dir=${encodeURIComponent(dir)}&t=${T + 1050}`);
    expect(png.headers.get('content-type')).toBe('image/png');
    const raw = await sharp(Buffer.from(await png.arrayBuffer()))
      .raw()
      .toBuffer();
    expect(Buffer.compare(raw, Buffer.from((await replay.frameAt(T + 1050, { cursor: true }))!.rgb))).toBe(0);
    // The index completes and is cached in the run's .vncua-viewer/ only.
    for (;;) {
      const ix = (await (await fetch(`${s.url}api/index?dir=${encodeURIComponent(dir)}`)).json()) as { complete: boolean };
      if (ix.complete) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await s.close();
    expect(await snapshot(root)).toEqual(before);
    expect(await readdir(join(root, dir, '.vncua-viewer'))).toEqual(expect.arrayContaining(['index.json', 'frames.bin']));
  });

  it('a damaged recording: the run says where the damage starts; frames before it are exact, after it stale', async () => {
    const root = await sampleRoot();
    const s = await serve(root);
    const dir = 'replay/64_48/broken';
    const lastGood = T + 1020;
    const d = (await (await fetch(`${s.url}api/run?dir=${encodeURIComponent(dir)}`)).json()) as { recording: { damage: { code: string; until: number; message: string } } };
    expect(d.recording.damage).toMatchObject({ code: 'SERVE_ERR_RECORDING_DAMAGED', until: lastGood });
    expect(d.recording.damage.message).toContain(new Date(lastGood).toISOString());
    const res = await fetch(`${s.url}api/frame?dir=${encodeURIComponent(dir)}&t=${T + 3000}`);
    expect(res.headers.get('x-stale-reason')).toBe('damage');
    expect(Number(res.headers.get('x-known-until'))).toBe(lastGood);
  });

  it('errors: unknown run 404 with its code; a root with no runs answers an empty list with SERVE_ERR_NO_RUNS; a port in use; a missing root', async () => {
    const root = await sampleRoot();
    const s = await serve(root);
    const nf = await fetch(`${s.url}api/run?dir=nope/x`);
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as { code: string }).code).toBe('SERVE_ERR_RUN_NOT_FOUND');
    const traversal = await fetch(`${s.url}api/frame?dir=${encodeURIComponent('../../etc')}&t=1`);
    expect(traversal.status).toBe(404);
    const empty = await tmp();
    await mkdir(join(empty, 'nothing-here'));
    const e = await serve(empty);
    const list = (await (await fetch(`${e.url}api/runs`)).json()) as { runs: unknown[]; empty: { code: string } };
    expect(list.runs).toEqual([]);
    expect(list.empty.code).toBe('SERVE_ERR_NO_RUNS');
    expect((await fetch(e.url)).status).toBe(200);
    const port = Number(new URL(s.url).port);
    const err = await startViewerServer({ root, port }).catch((x: unknown) => x);
    expect(isVncuaError(err, 'SERVE_ERR_PORT_IN_USE')).toBe(true);
    const gone = await startViewerServer({ root: join(root, 'no-such') }).catch((x: unknown) => x);
    expect(isVncuaError(gone, 'SERVE_ERR_ROOT')).toBe(true);
  });

  it('with a token (as off loopback), every request needs it in the path', async () => {
    const root = await sampleRoot();
    const s = await serve(root, { token: 'tok_abcdefghijklmnop' });
    expect(s.url).toMatch(/\/tok_abcdefghijklmnop\/$/);
    const base = s.url.replace(/tok_abcdefghijklmnop\/$/, '');
    expect((await fetch(`${base}api/runs`)).status).toBe(403);
    expect((await fetch(`${base}tok_abcdefghijklmnoX/api/runs`)).status).toBe(403);
    expect((await fetch(`${base}`)).status).toBe(403);
    expect((await fetch(`${s.url}api/runs`)).status).toBe(200);
    expect((await fetch(s.url)).status).toBe(200);
    expect((await fetch(`${s.url}app.js`)).headers.get('content-type')).toContain('javascript');
    // A server started for another host gets a random token by default.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.2', () => r()));
    probe.close();
    const other = await serve(root, { host: '127.0.0.2' });
    expect(other.token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(other.url).toContain(other.token!);
  });
});
