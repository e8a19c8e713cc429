/**
 * Task files: both formats parse and normalize; every bad entry gives one issue naming its index and
 * field (all collected into one EVAL_ERR_BAD_TASKS); base URLs resolve our relative URLs and rebase
 * uitask's origins; sharding is deterministic, disjoint and complete.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { expandJobs, jobLabel, parseShard, shardJobs } from './jobs.ts';
import { loadTaskFile, parseTasks, rebaseUrl, parseBaseUrl, resolveTaskUrls, taskGroup, type TaskIssue } from './tasks.ts';

function issuesOf(f: () => unknown): Array<[number, string]> {
  try {
    f();
  } catch (e) {
    if (isVncuaError(e, 'EVAL_ERR_BAD_TASKS')) return (e.details!.issues as TaskIssue[]).map((i) => [i.index, i.field]);
    throw e;
  }
  throw new Error('expected EVAL_ERR_BAD_TASKS');
}

const ok = { id: 'click-1', goal: 'Click the button', url: 'pages/click.html', success: { sentinel: 'code#1' } };

describe('task files, our format', () => {
  it('normalizes tasks: group from the id, resolution parsed, optional fields kept', () => {
    const { format, tasks } = parseTasks([
      ok,
      {
        id: 'form--12',
        goal: 'Fill the form',
        url: 'https://example.org/f',
        success: { selector: '#done', visible: true },
        maxSteps: 7,
        resolution: '1920x1080',
        hint: 'tab between fields',
      },
      { id: 'x', goal: 'g', url: 'a.html', success: { expression: 'window.done === true' }, group: 'mine' },
    ]);
    expect(format).toBe('vncua');
    expect(tasks).toEqual([
      { id: 'click-1', goal: 'Click the button', url: 'pages/click.html', success: { sentinel: 'code#1' }, group: 'click' },
      {
        id: 'form--12',
        goal: 'Fill the form',
        url: 'https://example.org/f',
        success: { selector: '#done', visible: true },
        group: 'form',
        maxSteps: 7,
        resolution: { width: 1920, height: 1080 },
        hint: 'tab between fields',
      },
      { id: 'x', goal: 'g', url: 'a.html', success: { expression: 'window.done === true' }, group: 'mine' },
    ]);
  });

  it('reports every bad entry once, with its index and field', () => {
    const issues = issuesOf(() =>
      parseTasks([
        ok,
        { ...ok, id: 'a', success: {} },
        { ...ok, id: 'b', success: { sentinel: 'x', selector: '#y' } },
        { ...ok, id: 'c', maxStep: 3 },
        { goal: 'no id', url: 'u', success: { sentinel: 's' } },
        { ...ok, id: 'bad/id' },
        { ...ok, id: 'd', goal: '' },
        { ...ok, id: 'e', url: 'http://[broken' },
        { ...ok, id: 'f', success: { selector: 7 } },
        { ...ok, id: 'g', maxSteps: 0 },
        { ...ok, id: 'h', resolution: '1280*800' },
        { ...ok, id: 'i', resolution: '8x8' },
        'not an object',
        { ...ok },
        { ...ok, id: 'j', hint: 3 },
      ]),
    );
    expect(issues).toEqual([
      [1, 'success'],
      [2, 'success'],
      [3, 'maxStep'],
      [4, 'id'],
      [5, 'id'],
      [6, 'goal'],
      [7, 'url'],
      [8, 'success'],
      [9, 'maxSteps'],
      [10, 'resolution'],
      [11, 'resolution'],
      [12, ''],
      [13, 'id'],
      [14, 'hint'],
    ]);
  });

  it('a file that is not an array of tasks is one issue at index -1', () => {
    expect(issuesOf(() => parseTasks({ tasks: [] }))).toEqual([[-1, '']]);
    expect(issuesOf(() => parseTasks([]))).toEqual([[-1, '']]);
  });
});

describe('task files, uitask format', () => {
  const ui = [
    { web_name: 'combo-box', id: 'combo-box-tasks--1', ques: 'Pick "Banana"', ux_hint: 'open the list first', web: 'https://uitask.example/combo/index.html?x=1#top', extra: 1 },
    { web_name: 'date', id: 'date-tasks--2', ques: 'Pick May 3', ux_hint: null, web: 'http://other.example:8080/date/p.html' },
  ];

  it('is detected and mapped: ques -> goal, web_name -> group, ux_hint -> hint, the >code#1</ sentinel', () => {
    const { format, tasks } = parseTasks(ui);
    expect(format).toBe('uitask');
    expect(tasks).toEqual([
      {
        id: 'combo-box-tasks--1',
        goal: 'Pick "Banana"',
        url: 'https://uitask.example/combo/index.html?x=1#top',
        success: { sentinel: '>code#1</' },
        group: 'combo-box',
        hint: 'open the list first',
      },
      { id: 'date-tasks--2', goal: 'Pick May 3', url: 'http://other.example:8080/date/p.html', success: { sentinel: '>code#1</' }, group: 'date' },
    ]);
  });

  it('reports bad uitask entries by index and field', () => {
    const issues = issuesOf(() =>
      parseTasks([ui[0], { ...ui[1], web: 'not a url' }, { ...ui[1], id: 'date-tasks--3', ques: undefined }, { ...ui[1], web_name: 5, id: 'z' }, { ...ui[0] }]),
    );
    expect(issues).toEqual([
      [1, 'web'],
      [2, 'ques'],
      [3, 'web_name'],
      [4, 'id'],
    ]);
    // An absent id (a union of string and number) is reported as missing, not as zod's bare "Invalid input".
    let err: unknown;
    try {
      parseTasks([ui[0], { ...ui[1], id: undefined }]);
    } catch (e) {
      err = e;
    }
    expect((err as { details: { issues: unknown[] } }).details.issues).toEqual([{ index: 1, field: 'id', problem: 'missing' }]);
  });

  it('--base-url moves web URLs to a local origin, keeping path, query and fragment', () => {
    const { tasks } = parseTasks(ui);
    const moved = resolveTaskUrls(tasks, 'http://127.0.0.1:8123/sites', 'uitask');
    expect(moved.map((t) => t.url)).toEqual(['http://127.0.0.1:8123/sites/combo/index.html?x=1#top', 'http://127.0.0.1:8123/sites/date/p.html']);
    expect(rebaseUrl('https://a.example/x/y.html', parseBaseUrl('http://127.0.0.1:9/'))).toBe('http://127.0.0.1:9/x/y.html');
  });
});

describe('loading files, base URLs, groups, shards', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-tasks-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a file, resolving relative URLs against the base; unreadable or non-JSON files are EVAL_ERR_BAD_TASKS', async () => {
    const file = join(dir, 'tasks.json');
    await writeFile(file, JSON.stringify([ok, { ...ok, id: 'abs', url: 'https://example.org/p' }]));
    const t = await loadTaskFile(file, { baseUrl: 'http://127.0.0.1:5000/suite/' });
    expect(t.file).toBe(file);
    expect(t.tasks.map((x) => x.url)).toEqual(['http://127.0.0.1:5000/suite/pages/click.html', 'https://example.org/p']);
    await writeFile(join(dir, 'bad.json'), '[{');
    await expect(loadTaskFile(join(dir, 'bad.json'))).rejects.toMatchObject({ code: 'EVAL_ERR_BAD_TASKS', details: { issues: [{ index: -1 }] } });
    await expect(loadTaskFile(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 'EVAL_ERR_BAD_TASKS' });
    expect(() => resolveTaskUrls(t.tasks, 'not a url')).toThrow(expect.objectContaining({ code: 'EVAL_ERR_BAD_OPTIONS' }));
  });

  it('task groups drop a trailing -N / --N', () => {
    expect(['combo-box-tasks--1', 'click-3', 'plain', '12', 'a-b'].map(taskGroup)).toEqual(['combo-box-tasks', 'click', 'plain', '12', 'a-b']);
  });

  it('shards are deterministic, disjoint and together cover every run; pinned resolutions run once', () => {
    const { tasks } = parseTasks([ok, { ...ok, id: 'b' }, { ...ok, id: 'c', resolution: '800x600' }, { ...ok, id: 'd' }]);
    const jobs = expandJobs(tasks, [
      { width: 1280, height: 800 },
      { width: 1920, height: 1080 },
    ]);
    expect(jobs.map((j) => `${j.task.id}@${j.size.width}`)).toEqual(['click-1@1280', 'click-1@1920', 'b@1280', 'b@1920', 'c@800', 'd@1280', 'd@1920']);
    const shards = [1, 2, 3].map((i) => shardJobs(jobs, parseShard(`${i}/3`)).map((j) => j.index));
    expect(shards).toEqual([
      [0, 3, 6],
      [1, 4],
      [2, 5],
    ]);
    expect(shardJobs(jobs, parseShard('2/3')).map((j) => j.index)).toEqual(shards[1]);
    for (const bad of ['0/3', '4/3', '1/0', 'x', '1/2/3']) expect(() => parseShard(bad)).toThrow(expect.objectContaining({ code: 'EVAL_ERR_BAD_OPTIONS' }));
  });

  it('--repeat K: every task at every resolution K times, repeats last; labels carry #n only when K > 1', () => {
    const { tasks } = parseTasks([ok, { ...ok, id: 'b', resolution: '800x600' }]);
    const jobs = expandJobs(tasks, [{ width: 1280, height: 800 }], 2);
    expect(jobs.map((j) => [jobLabel(j), j.index])).toEqual([
      ['click-1@1280x800#1', 0],
      ['click-1@1280x800#2', 1],
      ['b@800x600#1', 2],
      ['b@800x600#2', 3],
    ]);
    expect(shardJobs(jobs, parseShard('2/2')).map(jobLabel)).toEqual(['click-1@1280x800#2', 'b@800x600#2']);
    expect(expandJobs(tasks, [{ width: 1280, height: 800 }]).map(jobLabel)).toEqual(['click-1@1280x800', 'b@800x600']);
  });
});

describe('task files: the navigation guard fields', () => {
  it('keeps auth and secrets that name variables; a task giving a secret value is refused with SECRET_ERR_INLINE, never repeating it', () => {
    const { tasks } = parseTasks([{ ...ok, auth: [{ domain: '*.example.com', type: 'bearer', tokenEnv: 'EXAMPLE_TOKEN' }], secrets: { password: { env: 'LOGIN_PASSWORD' } } }]);
    expect(tasks[0]).toMatchObject({ auth: [{ domain: '*.example.com', type: 'bearer', tokenEnv: 'EXAMPLE_TOKEN' }], secrets: { password: { env: 'LOGIN_PASSWORD' } } });
    for (const bad of [{ secrets: { password: 'hunter2-in-task' } }, { auth: [{ domain: 'x.com', type: 'bearer', token: 'hunter2-in-task' }] }]) {
      let err: unknown;
      try {
        parseTasks([{ ...ok, ...bad }]);
      } catch (e) {
        err = e;
      }
      const issue = (err as { details: { issues: Array<{ problem: string }> } }).details.issues[0]!;
      expect(issue.problem).toMatch(/^SECRET_ERR_INLINE: /);
      expect((err as Error).message).not.toContain('hunter2');
    }
    expect(issuesOf(() => parseTasks([{ ...ok, auth: [{ domain: 'x.com', type: 'nope' }] }]))).toEqual([[0, 'auth']]);
  });

  it('keeps allowedDomains / blockedDomains; a malformed pattern is an issue naming it with GUARD_ERR_BAD_PATTERN', () => {
    const { tasks } = parseTasks([
      { ...ok, allowedDomains: ['*.example.com'], blockedDomains: ['ads.example.com'] },
      { ...ok, id: 'two', allowedDomains: [] },
    ]);
    expect(tasks[0]).toMatchObject({ allowedDomains: ['*.example.com'], blockedDomains: ['ads.example.com'] });
    expect(tasks[1]).not.toHaveProperty('allowedDomains');
    let err: unknown;
    try {
      parseTasks([{ ...ok, blockedDomains: ['fine.com', 'ba*d.com'] }]);
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'EVAL_ERR_BAD_TASKS')).toBe(true);
    const issue = (err as { details: { issues: TaskIssue[] } }).details.issues[0]!;
    expect(issue).toMatchObject({ index: 0, field: 'blockedDomains.1' });
    expect(issue.problem).toMatch(/^GUARD_ERR_BAD_PATTERN: blockedDomains pattern "ba\*d\.com" is not valid/);
    expect(issuesOf(() => parseTasks([{ ...ok, allowedDomains: 'example.com' }]))).toEqual([[0, 'allowedDomains']]);
  });
});
