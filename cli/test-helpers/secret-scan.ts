/**
 * The secret scan's setup, shared by cli/secrets-scan.desktop.test.ts (a sample of the basic suite) and
 * bench/secret-scan.ts (the full basic suite): three unique secrets (an auth binding's bearer token, a `secrets` entry
 * the model types through `{{secret:pw}}`, and the model API key in the environment) planted in a real `vncua eval`
 * with every shipped model adapter (openai-cua, anthropic, chat, http), each against its fake model server speaking
 * the real wire format through the official SDK (byom/*\/test-helpers). Then `vncua process`, `vncua score` and
 * `vncua export` run over the results. scanSecretRun() scans every byte under the output roots (recordings included:
 * the client stream is also decoded for KeyEvents), every stdout/stderr, and every request body the fake servers
 * received, for each secret, its JSON, URL and base64 forms and its keysyms in order.
 *
 * Each fake model plays, per task (told apart by the task's goal in the request), a click, the placeholder typed, and
 * finish; `type-search` clicks its search field first. Beside the suite's tasks, an `auth-poll` task on a site of the
 * scan's own whose page requests /api every 10 ms, for the bearer binding to go out during the run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeMessages, text, toolUse, type FakeMessagesServer } from '../../byom/anthropic/test-helpers/fake-messages.ts';
import { startChatServer, type ChatServer } from '../../byom/chat/test-helpers/chat-server.ts';
import { SUITE_DIR, serveSuite } from '../../byom/chat/test-helpers/suite-task.ts';
import { startScriptedServer, type ScriptedServer } from '../../byom/http/test-helpers/servers.ts';
import { computerCall, message, startFakeResponses, type FakeResponsesServer } from '../../byom/openai-cua/test-helpers/fake-responses.ts';
import { serveHtml, startSite, type Site } from '../../harness/guard/test-helpers.ts';
import { scanBytes, scanDirs, type LeakHit } from '../../harness/secrets/scan.ts';
import { runVncua } from './run-vncua.ts';

/** The placeholder the fake models type. */
export const SECRET_PLACEHOLDER = '{{secret:pw}}';

/** A unique 24-character token (printable ASCII: typeable on the US keymap). */
const token = (p: string) => `${p}${randomBytes(18).toString('base64url')}`.slice(0, 24);

/** What runSecretScan() takes. */
export interface SecretScanOptions {
  /** The basic suite's task ids to run (beside auth-poll); 'all' for every one. */
  tasks: readonly string[] | 'all';
  /** `vncua eval --workers` (default 1). */
  workers?: number;
  /** Deadline of each vncua command (default 240 s; the full suite needs more). */
  commandTimeoutMs?: number;
}

/** Everything one scan produced, for scanSecretRun() and the test's checks. */
export interface SecretScanRun {
  /** The three planted values. */
  secrets: string[];
  /** One results root per adapter. */
  roots: string[];
  /** Each command's stdout and stderr, first line naming it. */
  outputs: string[];
  /** Every request body the fake model servers received. */
  bodies: Array<{ where: string; text: string }>;
  /** Each adapter's `vncua eval` exit. */
  runs: Array<{ agent: string; code: number | null; stderr: string }>;
  /** Whether the site saw the bearer binding while each adapter's auth-poll ran. */
  bearerSeen: Record<string, boolean>;
  /** Task runs in the suite per adapter (auth-poll included). */
  taskCount: number;
  /** Remove everything (servers, the temporary directory). Never throws. */
  close(): Promise<void>;
}

/** Run `vncua eval` with every adapter (see the file comment) and collect what is to be scanned. */
export async function runSecretScan(o: SecretScanOptions): Promise<SecretScanRun> {
  const BEARER = token('B');
  const TYPED = token('T');
  const KEY = token('K');
  const dir = await mkdtemp(join(tmpdir(), 'vncua-scan-'));
  const closers: Array<() => Promise<void>> = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    const suite = await serveSuite();
    closers.push(() => suite.close());
    const site: Site = await startSite();
    closers.push(() => site.close());
    const seen = new Map<string, Set<string>>();
    let current = '';
    site.route('/api', (req, res) => {
      if (!seen.has(current)) seen.set(current, new Set());
      seen.get(current)!.add(String(req.headers.authorization));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    serveHtml(site, '/poll.html', '<!doctype html><title>poll</title><input autofocus><script>setInterval(() => fetch("/api").catch(() => {}), 10)</script>');
    const all = JSON.parse(await readFile(join(SUITE_DIR, 'tasks.json'), 'utf8')) as Array<Record<string, unknown> & { id: string; goal: string; url: string }>;
    const chosen = o.tasks === 'all' ? all : all.filter((t) => o.tasks.includes(t.id));
    if (o.tasks !== 'all' && chosen.length !== o.tasks.length) throw new Error(`secret scan: unknown task in ${o.tasks.join(', ')}`);
    const binding = [{ domain: site.pattern, type: 'bearer', tokenEnv: 'VNCUA_SCAN_BEARER' }];
    const secrets = { pw: { env: 'VNCUA_SCAN_PW' } };
    const POLL_GOAL = 'Type the password.';
    const entries = [
      ...chosen.map((t) => ({ ...t, url: new URL(t.url, suite.url).href, maxSteps: 4, auth: binding, secrets })),
      { id: 'auth-poll', goal: POLL_GOAL, url: `${site.origin}/poll.html`, success: { sentinel: 'never-there' }, maxSteps: 2, auth: binding, secrets },
    ];
    await writeFile(join(dir, 'tasks.json'), JSON.stringify(entries));
    const goals = entries.map((e) => e.goal);
    const env = { VNCUA_SCAN_BEARER: BEARER, VNCUA_SCAN_PW: TYPED };

    // Per task (its goal, found in the request), the steps in the adapter's wire format, in whatever order runs come.
    type Steps<T> = { typing: (x: number, y: number) => T[]; poll: T[] };
    const script = <T>(steps: Steps<T>) => {
      const n = new Map<string, number>();
      return (body: string): T => {
        const goal = goals.find((g) => body.includes(JSON.stringify(g).slice(1, -1))) ?? goals[0]!;
        const i = n.get(goal) ?? 0;
        n.set(goal, i + 1);
        const list = goal === POLL_GOAL ? steps.poll : goal === all.find((t) => t.id === 'type-search')?.goal ? steps.typing(290, 140) : steps.typing(640, 400);
        return list[Math.min(i, list.length - 1)]!;
      };
    };
    const openaiTurn = script({
      typing: (x, y) => [
        { reply: [computerCall({ action: { type: 'click', button: 'left', x, y } })] },
        { reply: [computerCall({ action: { type: 'type', text: SECRET_PLACEHOLDER } })] },
        { reply: [message('Typed it.')] },
      ],
      poll: [{ reply: [computerCall({ action: { type: 'move', x: 10, y: 10 } })] }, { reply: [message('Done.')] }],
    });
    const openai: FakeResponsesServer = await startFakeResponses((req) => openaiTurn(JSON.stringify(req.body)));
    closers.push(() => openai.close());
    const anthropicTurn = script({
      typing: (x, y) => [{ reply: [toolUse({ action: 'left_click', coordinate: [x, y] }), toolUse({ action: 'type', text: SECRET_PLACEHOLDER })] }, { reply: [text('Typed it.')] }],
      poll: [{ reply: [toolUse({ action: 'mouse_move', coordinate: [10, 10] })] }, { reply: [text('Done.')] }],
    });
    const anthropic: FakeMessagesServer = await startFakeMessages((req) => anthropicTurn(JSON.stringify(req.body)), { apiKey: KEY });
    closers.push(() => anthropic.close());
    const chatTurn = script<Record<string, unknown>>({
      typing: (x, y) => [{ action: 'click', coordinate: [x, y] }, { action: 'type', text: SECRET_PLACEHOLDER }, { action: 'finish' }],
      poll: [{ action: 'move', coordinate: [10, 10] }, { action: 'finish' }],
    });
    const chat: ChatServer = await startChatServer((b) => JSON.stringify(chatTurn(JSON.stringify(b))));
    closers.push(() => chat.close());
    const httpTurn = script<{ actions: Array<Record<string, unknown>> }>({
      typing: (x, y) => [{ actions: [{ type: 'TYPE_INTO', text: SECRET_PLACEHOLDER, x, y }] }, { actions: [{ type: 'FINISH' }] }],
      poll: [{ actions: [{ type: 'MOUSE_MOVE', x: 10, y: 10 }] }, { actions: [{ type: 'FINISH' }] }],
    });
    const http: ScriptedServer = await startScriptedServer((r) => ({ body: httpTurn(r.body) }));
    closers.push(() => http.close());
    const adapters: Array<{ agent: string; rest: string[]; env: Record<string, string> }> = [
      { agent: 'openai-cua', rest: ['--base-url', openai.baseURL], env: { OPENAI_API_KEY: KEY } },
      { agent: 'anthropic', rest: ['--base-url', anthropic.baseURL], env: { ANTHROPIC_API_KEY: KEY } },
      { agent: 'chat', rest: ['--base-url', chat.baseURL, '--model', 'test-vlm'], env: { VNCUA_CHAT_API_KEY: KEY } },
      { agent: 'http', rest: ['--endpoint', http.url], env: { VNCUA_PLANNER_TOKEN: KEY } },
    ];
    const timeoutMs = o.commandTimeoutMs ?? 240_000;
    const roots: string[] = [];
    const outputs: string[] = [];
    const runs: SecretScanRun['runs'] = [];
    for (const a of adapters) {
      current = a.agent;
      const out = join(dir, `out-${a.agent}`);
      roots.push(out);
      const r = await runVncua('eval', ['--tasks', join(dir, 'tasks.json'), '--agent', a.agent, '--workers', String(o.workers ?? 1), '--out', out, '--', ...a.rest], {
        env: { ...env, ...a.env },
        deadlineMs: timeoutMs,
      });
      runs.push({ agent: a.agent, code: r.code, stderr: r.stderr });
      outputs.push(`eval ${a.agent} stdout\n${r.stdout}`, `eval ${a.agent} stderr\n${r.stderr}`);
      for (const cmd of [
        ['process', out],
        ['score', out],
        ['export', out, '--format', 'jsonl', '--out', join(out, 'steps.jsonl')],
      ]) {
        const [command, ...rest] = cmd as [string, ...string[]];
        const c = await runVncua(command, rest, { env: { ...env, ...a.env }, deadlineMs: timeoutMs });
        outputs.push(`${cmd[0]} ${a.agent} stdout\n${c.stdout}`, `${cmd[0]} ${a.agent} stderr\n${c.stderr}`);
      }
    }
    const bodies = [
      ...openai.requests.map((r, i) => ({ where: `openai request ${i}`, text: JSON.stringify(r.body) })),
      ...anthropic.requests.map((r, i) => ({ where: `anthropic request ${i}`, text: JSON.stringify(r.body) })),
      ...chat.server.requests.map((r, i) => ({ where: `chat request ${i}`, text: r.body })),
      ...http.requests.map((r, i) => ({ where: `http request ${i}`, text: r.body })),
    ];
    const bearerSeen = Object.fromEntries(adapters.map((a) => [a.agent, seen.get(a.agent)?.has(`Bearer ${BEARER}`) ?? false]));
    return { secrets: [BEARER, TYPED, KEY], roots, outputs, bodies, runs, bearerSeen, taskCount: entries.length, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Scan everything a run produced for each of its secrets: the hits, and how many files and bytes were read. */
export async function scanSecretRun(r: SecretScanRun): Promise<{ hits: LeakHit[]; files: number; bytes: number }> {
  const hits: LeakHit[] = [];
  let files = 0;
  let bytes = 0;
  for (const s of r.secrets) {
    const d = await scanDirs(r.roots, s);
    files = d.files;
    bytes = d.bytes;
    hits.push(...d.hits);
    for (const o of r.outputs) hits.push(...scanBytes(o.split('\n')[0]!, Buffer.from(o), s));
    for (const b of r.bodies) hits.push(...scanBytes(b.where, Buffer.from(b.text), s));
  }
  return { hits, files, bytes };
}

/** The one run directory of `task` under an eval root (AGENT/WxH/TASK), relative to it. */
export async function findRunDir(root: string, task: string): Promise<string | null> {
  const { readdir } = await import('node:fs/promises');
  for (const agent of await readdir(root, { withFileTypes: true })) {
    if (!agent.isDirectory()) continue;
    for (const size of await readdir(join(root, agent.name), { withFileTypes: true })) {
      if (!size.isDirectory()) continue;
      return join(agent.name, size.name, task);
    }
  }
  return null;
}
