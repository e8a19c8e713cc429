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
import { serveEventsPage, startEventsDesktop, type EventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { readResult, readTrace } from '../harness/trace/index.ts';

const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const agentIndex = fileURLToPath(new URL('../harness/agent/index.ts', import.meta.url));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `vncua run ...args`; `onStdout` sees the output as it comes (it may signal the child). */
function vncua(args: string[], opts: { cwd?: string; onStdout?: (text: string, child: ReturnType<typeof spawn>) => void } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'run', ...args], { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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
    // Agent modules are ES modules: tsx loads a .ts file as CommonJS unless its package says "type": "module".
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
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
    let desktop: EventsDesktop;
    beforeAll(async () => {
      desktop = await startEventsDesktop('xvnc');
    }, 90_000);
    afterAll(async () => {
      await desktop?.close();
    });

    it('a module default-exporting an Agent subclass is constructed with the task and endpoints; the desktop is left running', async () => {
      await desktop.reset();
      const out = join(dir, 'out-class');
      const r = await vncua(['--agent', join(dir, 'typing-agent.ts'), '--task', 'héllo class', '--vnc', desktop.vncUrl, '--cdp', desktop.cdpUrl, '--out', out]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`trace: ${join(out, 'execution.json')}`);
      expect((await desktop.settle((s) => s.text === 'héllo class')).text).toBe('héllo class');
      const trace = await readTrace(out);
      expect(trace.entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text', 'finish']);
      expect(trace.entries[2]!.params).toEqual({ typed: 'héllo class' });
    });

    it('Ctrl-C cancels the run: exit 1, result.json says cancelled, the trace keeps the actions done', async () => {
      const out = join(dir, 'out-sleepy');
      let sent = false;
      const r = await vncua(['--agent', join(dir, 'sleepy.ts'), '--vnc', desktop.vncUrl, '--cdp', desktop.cdpUrl, '--out', out], {
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

  it('bad arguments: CLI_ERR_BAD_ARGS, exit 2 (--vnc without --cdp, no --agent, an unknown flag, a bad --success-grace-ms)', async () => {
    for (const args of [['--agent', 'scripted', '--vnc', 'ws://127.0.0.1:9'], ['--task', 'x'], ['--agent', 'scripted', '--bogus'], ['--agent', 'scripted', '--success-grace-ms', '-5'], ['--agent', 'scripted', '--success-grace-ms', '60001']]) {
      const r = await vncua(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('CLI_ERR_BAD_ARGS');
    }
  });
});
