/**
 * The navigation guard through `vncua eval` as a user runs it (`node bin/vncua.js eval` in a child): --allowed-domains
 * and --blocked-domains, a task's own blockedDomains, the suite server's origin allowed on its own. Each task page is
 * one link over the whole screen; the click agent clicks it. Blocked sites (real HTTP servers on 127.0.0.1) never get
 * a request; result.json, the trace and `vncua score` count DOMAIN_BLOCKED. A malformed pattern: one line, exit 2.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSite, type Site } from '../harness/guard/test-helpers.ts';
import { codeLine, runVncua } from './test-helpers/child.ts';

const link = (href: string) => `<!doctype html><title>t</title><style>html,body{margin:0;height:100%}a{display:block;height:100%;background:#36c}</style><a href="${href}">go</a>`;

describe('vncua eval with the navigation guard', () => {
  let bad: Site;
  let off: Site;
  let task: Site;
  let dir: string;
  let tasks: string;

  beforeAll(async () => {
    [bad, off, task] = await Promise.all([startSite(), startSite(), startSite()]);
    dir = await mkdtemp(join(tmpdir(), 'vncua-eval-guard-'));
    await writeFile(join(dir, 'to-bad.html'), link(`${bad.origin}/secret.html`));
    await writeFile(join(dir, 'to-off.html'), link(`${off.origin}/elsewhere.html`));
    await writeFile(join(dir, 'to-own.html'), link('done.html'));
    await writeFile(join(dir, 'to-task.html'), link(`${task.origin}/forbidden-by-task.html`));
    await writeFile(join(dir, 'done.html'), '<!doctype html><title>done</title><code>code#1</code>');
    tasks = join(dir, 'tasks.json');
    const t = (id: string, url: string, extra: object = {}) => ({ id, goal: 'Follow the link', url, success: { sentinel: '>code#1<' }, maxSteps: 3, ...extra });
    await writeFile(
      tasks,
      JSON.stringify([
        t('bad-1', 'to-bad.html'),
        t('off-1', 'to-off.html'),
        t('own-1', 'to-own.html'),
        // Allowed by --allowed-domains, blocked by the task's own list.
        t('task-1', 'to-task.html', { blockedDomains: [task.pattern] }),
      ]),
    );
  });
  afterAll(async () => {
    for (const s of [bad, off, task]) await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('blocks what the flags and the task block, allows the suite page origin, and counts DOMAIN_BLOCKED', async () => {
    const out = join(dir, 'runs');
    const r = await runVncua(
      'eval',
      [
        '--tasks',
        tasks,
        '--agent',
        'eval/test-fixtures/click-agent.ts',
        '--out',
        out,
        '--workers',
        '1',
        '--allowed-domains',
        `example.com,${task.pattern}`,
        '--blocked-domains',
        bad.pattern,
      ],
      { deadlineMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(bad.log).toEqual([]);
    expect(off.log).toEqual([]);
    expect(task.log).toEqual([]);
    const result = (id: string) => JSON.parse(readFileSync(join(out, 'click-agent', '1280_800', id, 'result.json'), 'utf8')) as { domain_blocked?: number; success?: boolean };
    expect(result('bad-1')).toMatchObject({ domain_blocked: 1, success: false });
    expect(result('off-1')).toMatchObject({ domain_blocked: 1, success: false });
    expect(result('task-1')).toMatchObject({ domain_blocked: 1, success: false });
    // The suite's own server (an OS-chosen port nobody listed) is allowed: the same-origin link succeeds.
    expect(result('own-1')).toMatchObject({ domain_blocked: 0, success: true });
    const trace = JSON.parse(readFileSync(join(out, 'click-agent', '1280_800', 'off-1', 'execution.json'), 'utf8')) as Array<{ meta?: { domain_blocked?: unknown[] } }>;
    expect(trace.flatMap((e) => e.meta?.domain_blocked ?? [])).toEqual([
      expect.objectContaining({ url: `${off.origin}/elsewhere.html`, rule: 'allowedDomains: no pattern matches', resource_type: 'Document' }),
    ]);
    const scored = await runVncua('score', [out]);
    expect(scored.code, scored.stderr).toBe(0);
    expect(scored.stdout).toMatch(/^click-agent: .*DOMAIN_BLOCKED 3 in 3 runs$/m);
    expect(readFileSync(join(out, 'scores.md'), 'utf8')).toContain('DOMAIN_BLOCKED (runs)');
  }, 300_000);

  it('a malformed pattern: one line GUARD_ERR_BAD_PATTERN naming it, exit 2, nothing written', async () => {
    const out = join(dir, 'never');
    const r = await runVncua('eval', ['--tasks', tasks, '--agent', 'eval/test-fixtures/click-agent.ts', '--out', out, '--blocked-domains', 'ok.com,ev*l.com']);
    expect(r.code).toBe(2);
    expect(codeLine(r, 'eval')).toBe('GUARD_ERR_BAD_PATTERN');
    expect(r.stderr).toContain('blockedDomains pattern "ev*l.com"');
    expect(existsSync(out)).toBe(false);
    const run = await runVncua('run', ['--agent', 'eval/test-fixtures/click-agent.ts', '--allowed-domains', 'https://x.com/login']);
    expect(run.code).toBe(2);
    expect(codeLine(run, 'run')).toBe('GUARD_ERR_BAD_PATTERN');
  });
});
