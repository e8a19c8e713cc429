/**
 * A task page behind a login, through `vncua eval` as a user runs it: the task's own page answers 401 (HTTP Basic)
 * unless the request carries the task's binding, so the runner must open it only once the run's auth bindings are
 * attached (agent.run's `ready` as a function; the desktop waits at its empty page meanwhile). Without a pool and
 * with `--pool 1` (a spare's open()): the run succeeds, the site never answered 401 (the very first request carried
 * the binding), and no byte under the results holds the password.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSite, type Site } from '../harness/guard/test-helpers.ts';
import { scanDirs } from '../harness/secrets/scan.ts';
import { runVncua } from './test-helpers/child.ts';

const USER = 'ann';
const PASSWORD = 'pw-behind-login-8c1f0e';
const PAGE = '<!doctype html><title>in</title><style>html,body{margin:0;height:100%}div{height:100%;background:#3a6}</style><div>code#1</div>';

describe('vncua eval: a task page that needs its auth binding', () => {
  let site: Site;
  let dir: string;
  let tasks: string;
  const answered: Array<{ path: string; status: number }> = [];

  beforeAll(async () => {
    site = await startSite();
    site.route('/login.html', (req, res) => {
      const ok = req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
      answered.push({ path: '/login.html', status: ok ? 200 : 401 });
      if (!ok) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="test"', 'content-type': 'text/plain' }).end('login first');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    dir = await mkdtemp(join(tmpdir(), 'vncua-eval-auth-'));
    tasks = join(dir, 'tasks.json');
    await writeFile(
      tasks,
      JSON.stringify([
        {
          id: 'behind-login',
          goal: 'Open the page behind the login',
          url: `${site.origin}/login.html`,
          success: { sentinel: 'code#1' },
          maxSteps: 3,
          auth: [{ domain: site.pattern, type: 'basic', username: USER, passwordEnv: 'VNCUA_TEST_LOGIN_PW' }],
        },
      ]),
    );
  });
  afterAll(async () => {
    await site?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const pool of ['0', '1']) {
    it(`--pool ${pool}: the page opens with the binding already attached; no 401, no password on disk`, async () => {
      answered.length = 0;
      const out = join(dir, `runs-${pool}`);
      const r = await runVncua('eval', ['--tasks', tasks, '--agent', 'eval/test-fixtures/click-agent.ts', '--out', out, '--workers', '1', '--pool', pool], {
        deadlineMs: 240_000,
        env: { ...process.env, VNCUA_TEST_LOGIN_PW: PASSWORD },
      });
      expect(r.code, r.stderr).toBe(0);
      const runDir = join(out, 'click-agent', '1280_800', 'behind-login');
      const result = JSON.parse(await readFile(join(runDir, 'result.json'), 'utf8')) as { status: string; success?: boolean; error?: unknown };
      expect(result.error).toBeUndefined();
      expect(result.success).toBe(true);
      // The page was asked for (at least once) and never without the binding.
      expect(answered.length).toBeGreaterThan(0);
      expect(answered.filter((a) => a.status !== 200)).toEqual([]);
      const trace = await readFile(join(runDir, 'execution.json'), 'utf8');
      expect(trace).toContain('"kind":"applied"');
      expect((await scanDirs([out], PASSWORD)).hits).toEqual([]);
    }, 300_000);
  }
});
