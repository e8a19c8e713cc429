/**
 * `vncua run` as a child process (`node bin/vncua.js run ...`) on real desktops: the built-in
 * scripted agent, a user module default-exporting an Agent subclass, a builder function, bad
 * modules and bad arguments, an already running desktop (--vnc/--cdp), and Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEventsPage, useEventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { launchDesktop, type Desktop } from '../harness/desktop/index.ts';
import { readResult, readTrace } from '../harness/trace/index.ts';

const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const agentIndex = fileURLToPath(new URL('../harness/agent/index.ts', import.meta.url));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `vncua run ...args`; `onStdout` sees the output as it comes (it may signal the child). */
function vncua(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; onStdout?: (text: string, child: ReturnType<typeof spawn>) => void } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...opts.env };
    const child = spawn(process.execPath, [bin, 'run', ...args], { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout, child);
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('vncua run', () => {
  let dir: string;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-run-'));
    page = await serveEventsPage();
    // No package.json: a .ts agent module is an ES module all the same (cli/agent-hooks.ts).
    await writeFile(
      join(dir, 'typing-agent.ts'),
      `import { Agent } from ${JSON.stringify(agentIndex)};
export default class TypingAgent extends Agent {
  async act(): Promise<boolean> {
    await this.mouseClick({ position: { x: 900, y: 100 } });
    await this.typeText(this.task ?? '');
    await this.finish({ typed: this.task });
    return true;
  }
}
`,
    );
    await writeFile(
      join(dir, 'echo.ts'),
      `import { Agent, type AgentContext } from ${JSON.stringify(agentIndex)};
class Echo extends Agent {
  constructor(private readonly ctx: AgentContext) { super(ctx.agentOptions); }
  async act(): Promise<boolean> {
    await this.finish({ args: this.ctx.args, maxSteps: this.ctx.maxSteps, url: this.ctx.url ?? null, task: this.ctx.task ?? null, graceMs: this.options.successGraceMs });
    return true;
  }
}
export default async (ctx: AgentContext) => new Echo(ctx);
`,
    );
    await writeFile(
      join(dir, 'sleepy.ts'),
      `import { Agent } from ${JSON.stringify(agentIndex)};
export default class Sleepy extends Agent {
  async act(): Promise<boolean> {
    await this.mouseMove({ x: 5, y: 5 });
    process.stdout.write('acting\\n');
    await this.wait(60);
    return true;
  }
}
`,
    );
    await writeFile(join(dir, 'no-default.ts'), 'export const notAnAgent = 1;\n');
    await writeFile(join(dir, 'not-agent-class.ts'), 'export default class Foo { act() { return true; } }\n');
    await writeFile(join(dir, 'bad-builder.ts'), 'export default () => ({ run() {} });\n');
  });

  afterAll(async () => {
    await page?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--agent scripted --script FILE on a local page: exit 0, the trace path printed, the files written', async () => {
    const script = [
      { action: 'mouse_click', params: { position: { x: 900, y: 100 }, button: 'left', click_type: 'single' } },
      { action: 'type_text', params: { text: 'from the CLI' } },
      { action: 'press_keys', params: { keys: 'ctrl+a' } },
    ];
    const scriptFile = join(dir, 'script.json');
    await writeFile(scriptFile, JSON.stringify(script));
    const out = join(dir, 'out-scripted');
    const r = await vncua(['--agent', 'scripted', '--script', scriptFile, '--url', page.url, '--out', out, '--size', '1280x720', '--max-steps', '10']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`trace: ${join(out, 'execution.json')}`);
    expect(r.stdout).toContain('result: finished (3 steps');
    const trace = await readTrace(join(out, 'execution.json'));
    expect(trace.entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(script);
    expect(await readResult(out)).toMatchObject({ status: 'finished', steps: 3 });
  });

  describe('on an already running desktop (--vnc/--cdp)', () => {
    const env = useEventsDesktop('xvnc');

    it('a module default-exporting an Agent subclass is constructed with the task and endpoints; the desktop is left running', async () => {
      const out = join(dir, 'out-class');
      const r = await vncua(['--agent', join(dir, 'typing-agent.ts'), '--task', 'héllo class', '--vnc', env.desktop.vncUrl, '--cdp', env.desktop.cdpUrl, '--out', out]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`trace: ${join(out, 'execution.json')}`);
      expect((await env.desktop.settle((s) => s.text === 'héllo class')).text).toBe('héllo class');
      const trace = await readTrace(out);
      expect(trace.entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text', 'finish']);
      expect(trace.entries[2]!.params).toEqual({ typed: 'héllo class' });
    });

    it('Ctrl-C cancels the run: exit 1, result.json says cancelled, the trace keeps the actions done', async () => {
      const out = join(dir, 'out-sleepy');
      let sent = false;
      const r = await vncua(['--agent', join(dir, 'sleepy.ts'), '--vnc', env.desktop.vncUrl, '--cdp', env.desktop.cdpUrl, '--out', out], {
        onStdout: (text, child) => {
          if (text.includes('acting') && !sent) {
            sent = true;
            child.kill('SIGINT');
          }
        },
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('result: cancelled');
      expect((await readResult(out)).status).toBe('cancelled');
      const trace = await readTrace(out);
      expect(trace.entries[0]!.action).toBe('mouse_move');
    });
  });

  it('a builder function gets ctx (args after --, maxSteps, url, task, --success-grace-ms in agentOptions); --out defaults to runs/<timestamp>-<module name> in the cwd', async () => {
    const cwd = join(dir, 'cwd');
    await mkdir(cwd, { recursive: true });
    const r = await vncua(['--agent', '../echo.ts', '--task', 'echo', '--url', page.url, '--max-steps', '7', '--success-grace-ms', '250', '--', '--foo', 'bar'], { cwd });
    expect(r.code).toBe(0);
    const runs = await readdir(join(cwd, 'runs'));
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-echo$/);
    const out = join(cwd, 'runs', runs[0]!);
    expect(r.stdout).toContain(`trace: ${join(out, 'execution.json')}`);
    const trace = await readTrace(out);
    expect(trace.entries.map((e) => [e.action, e.params])).toEqual([['finish', { args: ['--foo', 'bar'], maxSteps: 7, url: page.url, task: 'echo', graceMs: 250 }]]);
  });

  it('a module without a usable default export, a class that is not an Agent, a builder returning a non-Agent, a missing file: CLI_ERR_BAD_AGENT, exit 1', async () => {
    for (const mod of ['no-default.ts', 'not-agent-class.ts', 'bad-builder.ts', 'missing.ts']) {
      const out = join(dir, `out-${mod}`);
      // --vnc/--cdp point nowhere: the module is rejected before anything connects (bad-builder is called after; nothing listens there either).
      const r = await vncua(['--agent', join(dir, mod), '--vnc', 'ws://127.0.0.1:9', '--cdp', 'http://127.0.0.1:9', '--out', out]);
      expect(r.code, mod).toBe(1);
      expect(r.stderr, mod).toContain('CLI_ERR_BAD_AGENT');
      expect(existsSync(join(out, 'execution.json')), mod).toBe(false);
    }
  });

  it('a --url whose server is down: the run ends before its first act() with PAGE_ERR_UNREACHABLE naming the URL, exit 1', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/task.html`;
    const out = join(dir, 'out-dead-url');
    const r = await vncua(['--agent', join(dir, 'echo.ts'), '--url', url, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/result: error \(0 steps, \d+ ms\): PAGE_ERR_UNREACHABLE: /);
    expect(r.stdout).toContain(`the task page ${url} could not be loaded: net::ERR_CONNECTION_REFUSED`);
    expect(await readResult(out)).toMatchObject({ status: 'error', steps: 0, error: { code: 'PAGE_ERR_UNREACHABLE' } });
    expect((await readTrace(out)).entries).toEqual([]);
  });

  it("a --vnc that refuses, with recording on: the run ends RFB_ERR_CONNECT naming that URL (not the recording proxy's), exit 1", async () => {
    const vnc = `ws://127.0.0.1:${await closedPort()}`;
    const out = join(dir, 'out-dead-vnc');
    const r = await vncua(['--agent', join(dir, 'sleepy.ts'), '--vnc', vnc, '--cdp', `http://127.0.0.1:${await closedPort()}`, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`result: error \\(\\d+ steps?, \\d+ ms\\): RFB_ERR_CONNECT: could not connect to ${vnc.replace(/[.:/]/g, '\\$&')}: .*ECONNREFUSED`));
    expect(r.stdout).not.toContain('tcp://127.0.0.1');
    expect((await readResult(out)).error?.code).toBe('RFB_ERR_CONNECT');
    // The recording is there, with the proxy's own account of the failure.
    expect(existsSync(join(out, 'recording', 'recording.json'))).toBe(true);
  });

  it('bad arguments: CLI_ERR_BAD_ARGS, exit 2 (--vnc without --cdp, no --agent, an unknown flag, a bad --success-grace-ms)', async () => {
    for (const args of [
      ['--agent', 'scripted', '--vnc', 'ws://127.0.0.1:9'],
      ['--task', 'x'],
      ['--agent', 'scripted', '--bogus'],
      ['--agent', 'scripted', '--success-grace-ms', '-5'],
      ['--agent', 'scripted', '--success-grace-ms', '60001'],
    ]) {
      const r = await vncua(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('CLI_ERR_BAD_ARGS');
    }
  });

  it('bad passwords and URLs with credentials: a coded one-line error, exit 2, the secret never repeated, nothing written', async () => {
    const out = join(dir, 'out-bad-secret');
    const endpoints = ['--vnc', 'ws://127.0.0.1:9/tok', '--cdp', 'http://127.0.0.1:9/tok/'];
    const cases: Array<[string[], Record<string, string | undefined>, string]> = [
      [['--agent', 'scripted', '--vnc', 'ws://me:pw-in-url-7f3q9z@127.0.0.1:9/x', '--cdp', 'http://127.0.0.1:9/'], {}, 'CLI_ERR_BAD_ARGS'],
      [['--agent', 'scripted', '--vnc', 'ws://127.0.0.1:9/', '--cdp', 'http://me:pw-in-url-7f3q9z@127.0.0.1:9/'], {}, 'CLI_ERR_BAD_ARGS'],
      [['--agent', 'scripted', ...endpoints, '--password', 'pw-in-argv-4k8m2w'], {}, 'DESKTOP_ERR_BAD_PASSWORD'],
      [['--agent', 'scripted', ...endpoints, '--password-env', 'VNCUA_TEST_UNSET_PASSWORD'], { VNCUA_TEST_UNSET_PASSWORD: undefined }, 'DESKTOP_ERR_BAD_PASSWORD'],
      [['--agent', 'scripted', ...endpoints, '--password-file', join(dir, 'no-such-password-file')], {}, 'DESKTOP_ERR_BAD_PASSWORD'],
      [['--agent', 'scripted', ...endpoints], { VNCUA_VNC_PASSWORD: '' }, 'DESKTOP_ERR_BAD_PASSWORD'],
    ];
    for (const [args, env, code] of cases) {
      const r = await vncua([...args, '--out', out], { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0], args.join(' ')).toMatch(new RegExp(`^vncua run: ${code}: `));
      // The values, not the word: the usage text names --secrets-file.
      expect(r.stdout + r.stderr).not.toMatch(/pw-in-url-7f3q9z|pw-in-argv-4k8m2w/);
    }
    expect(existsSync(out)).toBe(false);
  });

  describe('on a desktop with a VNC password', () => {
    let desktop: Desktop;
    beforeAll(async () => {
      desktop = await launchDesktop({ url: page.url, password: 'runpass1', timeoutMs: 45_000 });
    }, 90_000);
    afterAll(async () => {
      await desktop?.close();
    });

    it('--password-file and --password-env give the agent the password; without one the run fails with RFB_ERR_AUTH_REQUIRED', async () => {
      const file = join(dir, 'vnc.pw');
      await writeFile(file, 'runpass1\n', { mode: 0o600 });
      for (const [name, extra, env] of [
        ['file', ['--password-file', file], {}],
        ['env', ['--password-env', 'MY_VNC_PW'], { MY_VNC_PW: 'runpass1' }],
        ['default env', [], { VNCUA_VNC_PASSWORD: 'runpass1' }],
      ] as Array<[string, string[], Record<string, string>]>) {
        const out = join(dir, `out-pw-${name.replace(/\W/g, '-')}`);
        const r = await vncua(['--agent', join(dir, 'typing-agent.ts'), '--task', 'pw', '--vnc', desktop.vncUrl, '--cdp', desktop.cdpUrl, '--out', out, ...extra], { env });
        expect(r.code, `${name}: ${r.stderr}`).toBe(0);
        expect((await readResult(out)).status).toBe('finished');
      }
      const out = join(dir, 'out-pw-none');
      const r = await vncua(['--agent', join(dir, 'typing-agent.ts'), '--task', 'pw', '--vnc', desktop.vncUrl, '--cdp', desktop.cdpUrl, '--out', out], {
        env: { VNCUA_VNC_PASSWORD: undefined },
      });
      expect(r.code).toBe(1);
      expect((await readResult(out)).error?.code).toBe('RFB_ERR_AUTH_REQUIRED');
      expect(r.stdout + r.stderr).not.toContain(new URL(desktop.vncUrl).pathname.slice(1)); // the token stays out of the output
    });
  });
});
