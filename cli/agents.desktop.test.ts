/**
 * Agent modules as a checkout's `vncua run` loads them (bin/vncua.js on the .ts sources; the installed
 * package is cli/quick-start.desktop.test.ts): a .ts module in a folder with no package.json, whose 'vncua' is a
 * different copy (it must not be used: the runner's Agent is), calling Playwright's page.evaluate with
 * named functions on a real desktop.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDir } from '../harness/test-helpers/serve-dir.ts';
import { readTrace } from '../harness/trace/index.ts';
import { compilesHere } from './agent-hooks.ts';
import { packageEntryUrls } from './agents.ts';

const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const playwright = pathToFileURL(fileURLToPath(new URL('../node_modules/playwright-core/index.mjs', import.meta.url))).href;

/** Run `vncua ARGS` (the checkout's bin) in `cwd`. */
function vncua(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('compilesHere: which files the agent hooks compile', () => {
  it('.ts and .mts files outside node_modules; not declarations, dependencies, .js, .cts or non-file URLs', () => {
    expect(['file:///a/agent.ts', 'file:///a/b.mts', 'file:///a/agent.ts?x=1'].map(compilesHere)).toEqual([true, true, true]);
    expect(
      ['file:///a/x.d.ts', 'file:///a/node_modules/p/i.ts', 'file:///a/agent.js', 'file:///a/agent.mjs', 'file:///a/agent.cts', 'data:text/javascript,1', 'node:fs'].map(
        compilesHere,
      ),
    ).toEqual([false, false, false, false, false, false, false]);
  });
});

describe('packageEntryUrls: what the agent hooks resolve vncua and its subpaths to', () => {
  it("every entry of package.json's exports, in a checkout to its .ts source", () => {
    const urls = packageEntryUrls(true);
    expect(Object.keys(urls)).toEqual(expect.arrayContaining(['vncua', 'vncua/rfb', 'vncua/agent', 'vncua/agents', 'vncua/recorder', 'vncua/byom/chat']));
    expect(urls.vncua).toBe(new URL('../index.ts', import.meta.url).href);
    expect(urls['vncua/agent']).toBe(new URL('../harness/agent/index.ts', import.meta.url).href);
    for (const url of Object.values(urls)) expect(existsSync(fileURLToPath(url)), url).toBe(true);
  });
});

describe('an agent module in a folder of its own, from the checkout', () => {
  let dir: string;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-agent-loader-'));
    await writeFile(join(dir, 'page.html'), '<!doctype html><html><head><title>Loader</title><link rel="icon" href="data:,"></head><body>hi</body></html>\n');
    // Another package called vncua where the module would find it: its Agent is not the runner's.
    await mkdir(join(dir, 'node_modules', 'vncua'), { recursive: true });
    await writeFile(join(dir, 'node_modules', 'vncua', 'package.json'), '{ "name": "vncua", "type": "module", "exports": "./index.js" }\n');
    await writeFile(join(dir, 'node_modules', 'vncua', 'index.js'), 'export class Agent {}\n');
    await writeFile(
      join(dir, 'probe-agent.ts'),
      `import { Agent } from 'vncua';
import { chromium } from ${JSON.stringify(playwright)};

export default class ProbeAgent extends Agent {
  async act(): Promise<boolean> {
    const browser = await chromium.connectOverCDP(this.options.cdpUrl!);
    try {
      const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url().endsWith('/page.html'))!;
      const probe = await page.evaluate(() => {
        function shout(s: string): string {
          return s.toUpperCase();
        }
        class Box {
          constructor(readonly value: number) {}
        }
        return { title: shout(document.title), box: new Box(7).value, name: shout.name };
      });
      await this.finish({ probe });
    } finally {
      await browser.close();
    }
    return true;
  }
}
`,
    );
    page = await serveDir(dir);
  });

  afterAll(async () => {
    await page?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs: no package.json needed, 'vncua' is the runner's own, page.evaluate's functions run in the page", async () => {
    const out = join(dir, 'out');
    const r = await vncua(['run', '--agent', './probe-agent.ts', '--url', `${page.url}page.html`, '--max-steps', '2', '--out', out], dir);
    const text = r.stdout + r.stderr;
    expect(r.code, text).toBe(0);
    const trace = await readTrace(out);
    expect(trace.entries.map((e) => [e.action, e.params])).toEqual([['finish', { probe: { title: 'LOADER', box: 7, name: 'shout' } }]]);
  }, 120_000);

  it('a syntax error: CLI_ERR_BAD_AGENT on one line naming the file, line and column; nothing written', async () => {
    await writeFile(join(dir, 'broken.ts'), "import { Agent } from 'vncua';\nexport default class Broken extends Agent {\n  async act(: Promise<boolean> { return true; }\n}\n");
    const out = join(dir, 'out-broken');
    const r = await vncua(['run', '--agent', './broken.ts', '--url', `${page.url}page.html`, '--out', out], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^vncua run: CLI_ERR_BAD_AGENT: Agent module \.\/broken\.ts could not be loaded: [^\n]*broken\.ts:3:\d+: ERROR: [^\n]*\n$/);
    expect(existsSync(out)).toBe(false);
  });
});
