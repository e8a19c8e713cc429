/**
 * The README's quick start, from the packed tarball: `npm pack` (its prepack build) of a copy of this
 * checkout, `npm install <tgz>` in a fresh folder, the README's commands there, with the README's
 * my-agent.ts and task file, on real local desktops: first in a folder holding only the .ts files and
 * node_modules, then once it has a package.json without "type". Also: a function passed to Playwright's
 * `page.evaluate` from an agent module runs in the page (no bundler helper such as `__name` in it), a
 * wrong default export is CLI_ERR_BAD_AGENT, the README's agent type-checks against the packed types, and
 * the subpath entries import from the installed package (`vncua/rfb` without a model SDK or playwright-core).
 * Slow (pack and install): one file, generous deadlines; skipped, saying why, only when npm cannot run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDir } from '../harness/test-helpers/serve-dir.ts';
import { readResult, readTrace } from '../harness/trace/index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Why npm cannot be used here (the only reason to skip), or undefined. */
const npmProblem = (() => {
  const r = spawnSync('npm', ['--version'], { encoding: 'utf8', env: userEnv() });
  if (r.error) return `npm could not be started (${r.error.message})`;
  return r.status === 0 ? undefined : `npm --version exited ${r.status}: ${r.stderr.trim()}`;
})();
if (npmProblem) console.warn(`cli/quick-start.desktop.test.ts SKIPPED: ${npmProblem}`);

/** The environment of a user's shell: without the npm_* variables of an enclosing `npm test`. */
function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

/** The README's quick start section. */
function quickStart(): string {
  const start = README.indexOf('## Quick start: your own agent in your own folder');
  if (start < 0) throw new Error('README.md has no "## Quick start: your own agent in your own folder" section');
  const end = README.indexOf('\n## ', start + 3);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of the quick start whose language is `lang`. */
function blocks(lang: string): string[] {
  return [...quickStart().matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2]!);
}

/** The quick start's command lines starting with `prefix`, split into words (double quotes group; `#` starts a comment). */
function commandLines(prefix: string): string[][] {
  return blocks('sh')
    .flatMap((b) => b.split('\n'))
    .filter((l) => l.startsWith(prefix))
    .map((l) => {
      const words: string[] = [];
      for (const m of l.matchAll(/"([^"]*)"|(\S+)/g)) {
        if (m[2]?.startsWith('#')) break;
        words.push(m[1] ?? m[2]!);
      }
      return words;
    });
}

/** Replace the value of `flag` in `args`. */
function withFlag(args: string[], flag: string, value: string): string[] {
  const i = args.indexOf(flag);
  if (i < 0) throw new Error(`the README's command ${args.join(' ')} has no ${flag}`);
  return [...args.slice(0, i + 1), value, ...args.slice(i + 2)];
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command in its own process group; on the deadline the whole group is killed and the test fails saying so. */
function sh(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: userEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) did not end within ${timeoutMs} ms; output:\n${stdout}\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

/** `npx vncua ARGS` as the README says it, never fetching a package from the registry (`--no`). */
function npxVncua(words: string[], cwd: string): Promise<Ran> {
  expect(words.slice(0, 2)).toEqual(['npx', 'vncua']);
  return sh('npx', ['--no', ...words.slice(1)], cwd, 180_000);
}

/** A page whose button fills the window; pressing it shows `code#1` (the success sentinel). */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Quick start</title><link rel="icon" href="data:,">
<style>html,body{margin:0;height:100%}button{width:100vw;height:100vh;font-size:40px;border:0;background:#cde}</style></head>
<body><button onclick="document.getElementById('r').textContent='code#1'">Press me</button><p id="r"></p></body></html>
`;

/** A builder-exporting agent module that reads the page with Playwright through a helper imported as './probe.js' (probe.ts). */
const PROBE_AGENT = `import { Agent, type AgentContext } from 'vncua';
import { probePage } from './probe.js';

class ProbeAgent extends Agent {
  constructor(private readonly cdp: string, options: AgentContext['agentOptions']) {
    super(options);
  }
  async act(): Promise<boolean> {
    await this.finish({ probe: await probePage(this.cdp) });
    return true;
  }
}

export default (ctx: AgentContext) => new ProbeAgent(ctx.cdpUrl, ctx.agentOptions);
`;

/** The helper: named functions, a class and an arrow function inside the function given to page.evaluate. */
const PROBE = `import { chromium } from 'playwright-core';

export async function probePage(cdpUrl: string): Promise<unknown> {
  const browser = await chromium.connectOverCDP(cdpUrl);
  try {
    const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url().endsWith('/page.html'));
    if (!page) throw new Error('page.html is not open');
    return await page.evaluate(() => {
      function shout(s: string): string {
        return s.toUpperCase();
      }
      class Box {
        constructor(readonly value: string) {}
      }
      const twice = (s: string) => s + s;
      return { title: shout(document.title), box: new Box('boxed').value, twice: twice('ab'), name: shout.name };
    });
  } finally {
    await browser.close();
  }
}
`;

const NOT_AN_AGENT = `export default class Impostor {
  async act(): Promise<boolean> {
    return true;
  }
}
`;

const TYPO_AGENT = `import { Agent } from 'vncua';
export default class Typo extends Agent {
  async act(): Promise<boolean> {
    await this.mouseClik({ position: { x: 1, y: 1 } });
    return true;
  }
}
`;

describe.skipIf(!!npmProblem)(`the README's quick start, from the packed tarball${npmProblem ? ` (SKIPPED: ${npmProblem})` : ''}`, () => {
  let tmp: string;
  let app: string;
  let installedPackageJson: string;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'vncua-quick-start-'));
    // Pack a copy, so the prepack build writes dist/ there and not into this checkout.
    const src = join(tmp, 'src');
    const skip = new Set(['node_modules', 'dist', 'runs', 'out', '.git', '.vncua']);
    await cp(ROOT, src, { recursive: true, filter: (p) => !skip.has(relative(ROOT, p).split(sep)[0]!) && !p.endsWith('.log') });
    await symlink(join(ROOT, 'node_modules'), join(src, 'node_modules'), 'dir');
    const packed = await sh('npm', ['pack', '--pack-destination', tmp], src, 600_000);
    expect(packed.code, `npm pack failed:\n${packed.stdout}\n${packed.stderr}`).toBe(0);
    const tgz = (await readdir(tmp)).filter((f) => f.endsWith('.tgz'));
    expect(tgz).toHaveLength(1);

    app = join(tmp, 'app');
    await mkdir(app);
    const install = commandLines('npm install');
    expect(install).toEqual([['npm', 'install', 'vncua']]);
    const installed = await sh('npm', ['install', '--no-audit', '--no-fund', join(tmp, tgz[0]!)], app, 600_000);
    expect(installed.code, `npm install of the tarball failed:\n${installed.stdout}\n${installed.stderr}`).toBe(0);
    // The README's setup line (as root here, so without sudo): quiet when the desktop's packages are there.
    const setup = commandLines('sudo bash');
    expect(setup).toEqual([['sudo', 'bash', 'node_modules/vncua/scripts/setup.sh']]);
    const ranSetup = await sh('bash', [setup[0]![2]!], app, 600_000);
    expect(ranSetup.code, `setup.sh failed:\n${ranSetup.stdout}\n${ranSetup.stderr}`).toBe(0);

    // Only the .ts files and node_modules: npm install's package.json and lockfile go (restored for the second half).
    installedPackageJson = await readFile(join(app, 'package.json'), 'utf8');
    expect(JSON.parse(installedPackageJson)).not.toHaveProperty('type');
    await rm(join(app, 'package.json'));
    await rm(join(app, 'package-lock.json'), { force: true });

    const agent = blocks('ts').find((b) => b.startsWith('// my-agent.ts\n'));
    if (!agent) throw new Error('the quick start has no ```ts block starting with "// my-agent.ts"');
    await writeFile(join(app, 'my-agent.ts'), agent);
    const tasks = blocks('json');
    expect(tasks).toHaveLength(1);
    await writeFile(join(app, 'tasks.json'), tasks[0]!);
    await writeFile(join(app, 'page.html'), PAGE);
    await writeFile(join(app, 'probe-agent.ts'), PROBE_AGENT);
    await writeFile(join(app, 'probe.ts'), PROBE);
    await writeFile(join(app, 'not-an-agent.ts'), NOT_AN_AGENT);
    page = await serveDir(app);
  }, 1_500_000);

  afterAll(async () => {
    await page?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  for (const folder of ['only the .ts files and node_modules', 'a package.json without "type"'] as const) {
    describe(`in a folder with ${folder}`, () => {
      const tag = folder.startsWith('only') ? 'bare' : 'pkg';
      beforeAll(async () => {
        if (tag === 'pkg') await writeFile(join(app, 'package.json'), installedPackageJson);
        expect(existsSync(join(app, 'package.json'))).toBe(tag === 'pkg');
      });

      it("npx vncua run: the README's agent presses the button; trace and result on disk", async () => {
        const [words] = commandLines('npx vncua run');
        const r = await npxVncua(withFlag(words!, '--url', `${page.url}page.html`), app);
        expect(r.code, r.stderr).toBe(0);
        const tracePath = /^trace: (.+)$/m.exec(r.stdout)?.[1];
        expect(tracePath, r.stdout).toBeDefined();
        expect(tracePath!.startsWith(join(app, 'runs') + sep) && tracePath!.endsWith('-my-agent/execution.json')).toBe(true);
        const out = dirname(tracePath!);
        const trace = await readTrace(out);
        expect(trace.entries.map((e) => e.action)).toEqual(['mouse_click', 'finish']);
        expect(trace.entries[0]!.task_marked_complete).toBe(true);
        expect((trace.entries[1]!.params as { screenshotChars: number }).screenshotChars).toBeGreaterThan(1000);
        expect(await readResult(out)).toMatchObject({ status: 'finished' });
        expect(r.stdout).toMatch(/^result: finished \(1 step, \d+ ms\)$/m);
      }, 200_000);

      it("npx vncua eval: the README's task file and agent, processed and scored", async () => {
        const [words] = commandLines('npx vncua eval');
        const out = join(app, 'runs', `eval-${tag}`);
        const r = await npxVncua(withFlag(words!, '--out', out), app);
        expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
        expect(r.stdout).toMatch(/^eval: \[1\/1\] press@1280x800: finished, success, /m);
        const run = join(out, 'my-agent', '1280_800', 'press');
        expect(await readResult(run)).toMatchObject({ status: 'finished' });
        expect((await readTrace(run)).entries.map((e) => [e.action, e.task_marked_complete])).toEqual([
          ['mouse_click', true],
          ['finish', true],
        ]);
        expect(existsSync(join(run, 'action_screenshots.html'))).toBe(true);
        const scores = JSON.parse(await readFile(join(out, 'scores.json'), 'utf8')) as { runs: { task_id: string; success: boolean }[] };
        expect(scores.runs.map((s) => [s.task_id, s.success])).toEqual([['press', true]]);
      }, 200_000);

      it('a function given to page.evaluate from an agent module (imported as ./probe.js) runs in the page as written', async () => {
        const out = join(app, 'runs', `probe-${tag}`);
        const r = await npxVncua(['npx', 'vncua', 'run', '--agent', './probe-agent.ts', '--url', `${page.url}page.html`, '--max-steps', '2', '--out', out], app);
        expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
        const trace = await readTrace(out);
        expect(trace.entries.map((e) => [e.action, e.params])).toEqual([['finish', { probe: { title: 'QUICK START', box: 'boxed', twice: 'abab', name: 'shout' } }]]);
      }, 200_000);

      it('a default export that is not an Agent: CLI_ERR_BAD_AGENT, exit 1, before any desktop or output', async () => {
        const runOut = join(app, 'runs', `bad-run-${tag}`);
        const run = await npxVncua(['npx', 'vncua', 'run', '--agent', './not-an-agent.ts', '--url', `${page.url}page.html`, '--out', runOut], app);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^vncua run: CLI_ERR_BAD_AGENT: Agent module \.\/not-an-agent\.ts default-exports a class "Impostor", /m);
        const evalOut = join(app, 'runs', `bad-eval-${tag}`);
        const ev = await npxVncua(['npx', 'vncua', 'eval', '--tasks', 'tasks.json', '--agent', './not-an-agent.ts', '--out', evalOut], app);
        expect(ev.code).toBe(1);
        expect(ev.stderr).toMatch(/^vncua eval: CLI_ERR_BAD_AGENT: /m);
        expect(existsSync(runOut) || existsSync(evalOut)).toBe(false);
      }, 200_000);
    });
  }

  it('the subpath entries import from the installed tarball; vncua/rfb loads neither a model SDK nor playwright-core', async () => {
    const log = join(tmp, 'resolved.log');
    const hooks = pathToFileURL(join(ROOT, 'harness', 'test-helpers', 'resolve-log-hooks.mjs')).href;
    const rfb = `import { register } from 'node:module';
register(${JSON.stringify(hooks)}, { data: ${JSON.stringify(log)} });
const { connectVnc, VncClient } = await import('vncua/rfb');
process.stdout.write(typeof connectVnc + ' ' + typeof VncClient);`;
    const r = await sh(process.execPath, ['--input-type=module', '-e', rfb], app, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('function function');
    const resolved = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    expect(resolved.some((u) => u.endsWith('/node_modules/vncua/dist/harness/rfb/index.js'))).toBe(true);
    expect(resolved.filter((u) => /\/node_modules\/(openai|@anthropic-ai\/sdk|playwright-core)\//.test(u))).toEqual([]);

    // Every entry package.json exports loads; the bare Agent (vncua/agent) records only when given a
    // recorder, the package root's records through the recording proxy by default.
    const exported = Object.keys((JSON.parse(await readFile(join(app, 'node_modules', 'vncua', 'package.json'), 'utf8')) as { exports: object }).exports);
    const names = exported.map((k) => (k === '.' ? 'vncua' : `vncua/${k.slice(2)}`));
    expect(names).toEqual(
      expect.arrayContaining([
        'vncua',
        'vncua/rfb',
        'vncua/desktop',
        'vncua/agent',
        'vncua/recorder',
        'vncua/eval',
        'vncua/agents',
        'vncua/byom/openai-cua',
        'vncua/byom/anthropic',
        'vncua/byom/chat',
        'vncua/byom/http',
      ]),
    );
    const all = `const names = ${JSON.stringify(names)};
const loaded = {};
for (const n of names) loaded[n] = Object.keys(await import(n)).length;
const root = await import('vncua');
const bare = await import('vncua/agent');
const { recordingProxyRecorder } = await import('vncua/recorder');
process.stdout.write(JSON.stringify({ loaded, rootRecords: root.Agent.defaultRecorder === recordingProxyRecorder, bareRecords: bare.Agent.defaultRecorder, extendsBare: bare.Agent.isPrototypeOf(root.Agent) }));`;
    const r2 = await sh(process.execPath, ['--input-type=module', '-e', all], app, 120_000);
    expect(r2.code, r2.stderr).toBe(0);
    const got = JSON.parse(r2.stdout) as { loaded: Record<string, number>; rootRecords: boolean; bareRecords: unknown; extendsBare: boolean };
    for (const n of names) expect(got.loaded[n], n).toBeGreaterThan(0);
    expect(got).toMatchObject({ rootRecords: true, bareRecords: null, extendsBare: true });
  }, 300_000);

  it("the README's agent type-checks against the packed types; a misspelt primitive does not", async () => {
    await writeFile(join(app, 'typo-agent.ts'), TYPO_AGENT);
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'esnext', '--moduleResolution', 'bundler', '--lib', 'es2023,dom', '--skipLibCheck'];
    const r = await sh(process.execPath, [tsc, ...flags, 'my-agent.ts', 'typo-agent.ts'], app, 300_000);
    expect(r.code).toBe(2);
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^typo-agent\.ts\(4,\d+\): error TS2551: Property 'mouseClik' does not exist/);
  }, 300_000);
});
