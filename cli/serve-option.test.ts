/**
 * `--serve [PORT]` / `--serve-host` of vncua eval and vncua run: parsing (a bare --serve, a port, a bad one), the
 * help line, and the in-process viewer: its printed URL answers, a port in use is SERVE_ERR_PORT_IN_USE.
 */
import { createServer } from 'node:net';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { usageText } from './command.ts';
import { EVAL_SPEC, parseEvalArgs } from './eval.ts';
import { parseRunArgs, RUN_SPEC } from './run.ts';
import { startCommandViewer, withServeValue } from './serve-option.ts';
import { codeLine, runVncua } from './test-helpers/child.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
const EVAL = ['--tasks', 'x.json', '--agent', 'replay'];
const argError = (f: () => unknown): [string, unknown] | undefined => {
  try {
    f();
  } catch (e) {
    if (isVncuaError(e)) return [e.code, (e.details as { argument?: unknown }).argument];
    throw e;
  }
  return undefined;
};
function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d));
  return { stream, text: () => text };
}

describe('--serve [PORT]', () => {
  it('a bare --serve takes an OS-chosen port; --serve PORT and --serve=PORT a given one; the rest after -- is untouched', () => {
    expect(withServeValue(['--serve'])).toEqual(['--serve=']);
    expect(withServeValue(['--serve', '--out', 'o'])).toEqual(['--serve=', '--out', 'o']);
    expect(withServeValue(['--serve', '8080'])).toEqual(['--serve', '8080']);
    expect(withServeValue(['--', '--serve'])).toEqual(['--', '--serve']);
    expect(parseEvalArgs([...EVAL, '--serve'])?.serve).toEqual({ port: 0 });
    expect(parseEvalArgs([...EVAL, '--serve', '8080'])?.serve).toEqual({ port: 8080 });
    expect(parseEvalArgs([...EVAL, '--serve=9000', '--out', 'o'])).toMatchObject({ serve: { port: 9000 }, out: 'o' });
    expect(parseEvalArgs([...EVAL, '--serve', '--', '--serve'])).toMatchObject({ serve: { port: 0 }, args: ['--serve'] });
    expect(parseEvalArgs([...EVAL, '--serve', '--serve-host', '0.0.0.0'])?.serve).toEqual({ port: 0, host: '0.0.0.0' });
    expect(parseEvalArgs(EVAL)?.serve).toBeUndefined();
    expect(parseRunArgs(['--agent', 'scripted', '--serve'])?.serve).toEqual({ port: 0 });
    expect(parseRunArgs(['--agent', 'scripted', '--serve', '7001'])?.serve).toEqual({ port: 7001 });
  });

  it('a bad port or a lone --serve-host is CLI_ERR_BAD_ARGS naming the flag', () => {
    expect(argError(() => parseEvalArgs([...EVAL, '--serve', 'abc']))).toEqual(['CLI_ERR_BAD_ARGS', '--serve']);
    expect(argError(() => parseEvalArgs([...EVAL, '--serve', '0']))).toEqual(['CLI_ERR_BAD_ARGS', '--serve']);
    expect(argError(() => parseEvalArgs([...EVAL, '--serve', '70000']))).toEqual(['CLI_ERR_BAD_ARGS', '--serve']);
    expect(argError(() => parseEvalArgs([...EVAL, '--serve-host', '0.0.0.0']))).toEqual(['CLI_ERR_BAD_ARGS', '--serve-host']);
    expect(argError(() => parseRunArgs(['--agent', 'scripted', '--serve=x']))).toEqual(['CLI_ERR_BAD_ARGS', '--serve']);
  });

  it('the help lists it for both commands', () => {
    for (const spec of [EVAL_SPEC, RUN_SPEC]) {
      expect(usageText(spec)).toContain('[--serve [PORT]]');
      expect(usageText(spec)).toMatch(/--serve-host ADDR/);
    }
  });

  it('starts the viewer over the results root (created), prints its URL, which answers; a port in use is SERVE_ERR_PORT_IN_USE', async () => {
    const base = await mkdtemp(join(tmpdir(), 'vncua-serve-option-'));
    cleanup.push(() => rm(base, { recursive: true, force: true }));
    const root = join(base, 'out');
    const out = sink();
    const err = sink();
    const viewer = await startCommandViewer('eval', root, { port: 0 }, { out: out.stream, err: err.stream });
    cleanup.push(() => viewer.close());
    expect((await stat(root)).isDirectory()).toBe(true);
    expect(out.text()).toBe(`eval: live view and results at ${viewer.url} (until this command ends; later: vncua serve ${root})\n`);
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const live = (await (await fetch(`${viewer.url}api/live/runs`)).json()) as { runs: unknown[] };
    expect(live.runs).toEqual([]);
    // A port someone holds.
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => holder.close(() => r())));
    const port = (holder.address() as { port: number }).port;
    const e = await startCommandViewer('run', root, { port }, { out: out.stream, err: err.stream, path: '?run=.' }).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isVncuaError(e, 'SERVE_ERR_PORT_IN_USE')).toBe(true);
  });

  it('vncua eval / vncua run --serve on a port in use: one coded line, exit 2, before any desktop starts; nothing run', async () => {
    const base = await mkdtemp(join(tmpdir(), 'vncua-serve-busy-'));
    cleanup.push(() => rm(base, { recursive: true, force: true }));
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => holder.close(() => r())));
    const port = String((holder.address() as { port: number }).port);
    const ev = await runVncua('eval', ['--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--out', join(base, 'eval'), '--serve', port]);
    expect(ev.code, ev.stderr).toBe(2);
    expect(codeLine(ev, 'eval')).toBe('SERVE_ERR_PORT_IN_USE');
    expect(await readdir(join(base, 'eval'))).toEqual([]);
    const run = await runVncua('run', ['--agent', 'scripted', '--out', join(base, 'run'), `--serve=${port}`]);
    expect(run.code, run.stderr).toBe(2);
    expect(codeLine(run, 'run')).toBe('SERVE_ERR_PORT_IN_USE');
    expect(await readdir(join(base, 'run'))).toEqual([]);
  });
});
