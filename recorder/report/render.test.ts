import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isVncuaError, type ErrorCode } from '../../harness/errors.ts';
import { markersFor, renderStepReport, writeStepReport, type ActionScreenshotsInput } from './index.ts';
import { NASTY_TEXT, makeRunDir } from './test-helpers/fixture.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true }).catch(() => undefined);
});

async function codeOf(p: Promise<unknown>): Promise<{ code?: ErrorCode; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (isVncuaError(e)) return { code: e.code, details: e.details };
    throw e;
  }
  return {};
}

function minimal(actions: unknown[] = []): ActionScreenshotsInput {
  return {
    version: 1,
    source: 'vncua',
    alignment: 'timestamps',
    task: 't',
    outcome: null,
    width: 10,
    height: 10,
    settle_ms: 1000,
    warnings: [],
    actions,
  } as ActionScreenshotsInput;
}

describe('renderStepReport', () => {
  it('escapes untrusted text: no injected tag survives as markup', async () => {
    const { dir, data } = await makeRunDir();
    dirs.push(dir);
    const html = renderStepReport(data);
    expect(html).not.toContain('<script>window.__pwned');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('</pre></section> ');
    expect(html).toContain('&#60;script&#62;window.__pwned=2&#60;/script&#62;');
    // Exactly one script element (ours), no external resources.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/<link\b/);
    expect(html).not.toMatch(/\bsrc="(https?:|\/\/|data:)/);
    expect(html).not.toMatch(/url\(/);
  });

  it("marks a person's steps (actor human, a takeover) in the step and in the index; the agent's are unmarked", () => {
    const html = renderStepReport(
      minimal([
        { index: 0, action: 'mouse_click', params: { position: { x: 1, y: 1 }, button: 'left', click_type: 'single' }, before: 'a/0000_before.png', after: 'a/0000_after.png' },
        { index: 1, action: 'type_text', actor: 'human', params: { text: 'hi' }, before: 'a/0001_before.png', after: 'a/0001_after.png' },
      ]),
    );
    expect(html).toContain('<section class="step" id="step-0"');
    expect(html).toContain('<section class="step human" id="step-1"');
    expect(html.match(/by a person<\/span>/g)).toHaveLength(1);
    expect(html).toContain('<a href="#step-1" class="human" title="type_text (by a person)">1</a>');
    expect(html).toContain('<a href="#step-0" title="mouse_click">0</a>');
    // Its before/after images are shown like any step's.
    expect(html).toContain('src="a/0001_before.png"');
    expect(html).toContain('src="a/0001_after.png"');
  });

  it("shows each step's model calls (tokens, cost) and the outcome's stop status, reason, error and model totals", () => {
    const html = renderStepReport({
      ...minimal([
        { index: 0, action: 'wait', params: { seconds: 0 }, model: { calls: 1, input_tokens: 1200, output_tokens: 80, cost_usd: 0.0046 } },
        { index: 1, action: 'wait', params: { seconds: 0 }, model: { calls: 2, input_tokens: null, output_tokens: null, cost_usd: null } },
        { index: 2, action: 'wait', params: { seconds: 0 } },
      ]),
      outcome: {
        status: 'cost_cap',
        steps: 3,
        duration_ms: 50,
        success: false,
        reason: 'spent <it>',
        error: { code: 'AGENT_ERR_COST_CAP', message: 'The run cost $0.01.' },
        model: { calls: 3, input_tokens: null, output_tokens: null, cost_usd: null },
      },
    } as ActionScreenshotsInput);
    expect(html).toContain('<span class="model" title="model calls recorded on this step: tokens in / out, cost at list prices">1 call · 1200 in / 80 out tokens · $0.0046</span>');
    expect(html).toContain('>2 calls</span>');
    expect(html.match(/<span class="model"/g)).toHaveLength(2);
    expect(html).toContain('<dt>status</dt><dd>cost_cap</dd>');
    expect(html).toContain('<dt>reason</dt><dd>spent &#60;it&#62;</dd>');
    expect(html).toContain('<dt>error</dt><dd><code>AGENT_ERR_COST_CAP</code> The run cost $0.01.</dd>');
    expect(html).toContain('<dt>model</dt><dd>3 calls</dd>');
  });

  it('marks the first successful step with what its check saw (escaped) and the frame of that moment', () => {
    const step = (index: number, tmc: boolean) => ({
      index,
      action: 'mouse_click',
      params: {},
      started_at: 1000 + index * 100,
      ended_at: 1010 + index * 100,
      task_marked_complete: tmc,
    });
    const data = {
      ...minimal([step(0, false), step(1, true), step(2, true)]),
      success: {
        index: 1,
        at: 1250,
        phase: 'grace',
        rule: 'text',
        pattern: '>code#1</',
        snippet: '<img src=x onerror="alert(1)">code#1</b>',
        url: 'http://h/?q=<script>',
        image: 'action_screenshots/success.png',
      },
    } as ActionScreenshotsInput;
    const html = renderStepReport(data);
    const sections = html.match(/<section [^>]*>/g)!;
    expect(sections.map((t) => /class="([^"]*)"/.exec(t)![1])).toEqual(['step', 'step done first-success', 'step done']);
    const banner = /<div class="success" id="first-success">[\s\S]*?<\/figure><\/div>/.exec(html)![0];
    expect(banner).toContain('&#60;img src=x onerror=&#34;alert(1)&#34;&#62;code#1&#60;/b&#62;');
    expect(banner).toContain('http://h/?q=&#60;script&#62;');
    expect(banner).toContain('+140 ms after the action ended');
    expect(banner).toContain('<img src="action_screenshots/success.png"');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('class="done first"');
    // A success image path outside the run directory is refused like any other image path.
    expect(() => renderStepReport({ ...data, success: { index: 1, image: '../x.png' } } as ActionScreenshotsInput)).toThrow(/success\.image/);
    // Without a success object the first step marked complete is the first success (older files, uitask).
    expect(renderStepReport(minimal([step(0, false), step(1, false), step(2, true)]))).toContain('<section class="step done first-success" id="step-2"');
  });

  it('allows exactly its own inline script through the CSP hash', () => {
    const html = renderStepReport(minimal());
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script, 'utf8').digest('base64');
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!.replace(/&#39;/g, "'");
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
    expect(csp).toContain("default-src 'none'");
  });

  it('lazy-loads images with their size and relative paths', async () => {
    const { dir, data } = await makeRunDir();
    dirs.push(dir);
    const html = renderStepReport(data);
    const imgs = html.match(/<img [^>]*>/g) ?? [];
    expect(imgs.length).toBe(2 * (data.actions.length - 1)); // one step has no frames
    for (const img of imgs) {
      expect(img).toMatch(/ loading="lazy"/);
      expect(img).toMatch(/ width="\d+" height="\d+"/);
      expect(img).toMatch(/ src="action_screenshots\/\d{4}_(before|after)\.png"/);
    }
    expect(html).toContain('width="400" height="250"');
  });

  it('shows typed text and pressed keys as text', async () => {
    const { dir, data } = await makeRunDir();
    dirs.push(dir);
    const html = renderStepReport(data);
    expect(html).toContain(`<pre class="text">${NASTY_TEXT.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</pre>`);
    expect(html).toContain('<kbd class="text">ctrl+&#60;</kbd>');
  });

  it('rejects an image path that leaves the run directory or names a URL', () => {
    for (const bad of ['http://example.com/a.png', '/etc/passwd', '../x.png', 'a/../../x.png', 'javascript:alert(1)', 'a\\b.png']) {
      let err: unknown;
      try {
        renderStepReport(minimal([{ index: 0, action: 'wait', params: {}, before: bad, after: null }]));
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'REPORT_ERR_INVALID'), bad).toBe(true);
      expect((err as { details: { field: string } }).details.field).toBe('actions[0].before');
    }
  });

  it('rejects a wrong version or a missing field with REPORT_ERR_INVALID naming it', () => {
    const cases: Array<[unknown, string]> = [
      [{ ...minimal(), version: 2 }, 'version'],
      [{ ...minimal(), width: undefined }, 'width'],
      [minimal([{ index: 0, params: {} }]), 'actions[0].action'],
      [minimal([{ index: 0, action: 'wait', params: {}, duration_ms: 'slow' }]), 'actions[0].duration_ms'],
    ];
    for (const [data, field] of cases) {
      let err: unknown;
      try {
        renderStepReport(data as ActionScreenshotsInput);
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'REPORT_ERR_INVALID'), field).toBe(true);
      expect((err as { details: { field: string } }).details.field).toBe(field);
    }
  });
});

describe('markersFor', () => {
  it('infers a position-less click from the previous pointer action, and ignores bad coordinates', () => {
    const a = markersFor('mouse_drag', { start: { x: 1, y: 2 }, end: { x: 30, y: 40 } }, null);
    expect(a.line).toEqual({ x1: 1, y1: 2, x2: 30, y2: 40 });
    expect(a.pointer).toEqual({ x: 30, y: 40 });
    const b = markersFor('mouse_click', { button: 'left', click_type: 'double' }, a.pointer);
    expect(b.markers).toEqual([{ role: 'point', kind: 'double_click', x: 30, y: 40, label: '2×', inferred: true }]);
    const c = markersFor('mouse_click', { button: 'left' }, null);
    expect(c.markers).toEqual([]);
    const d = markersFor('mouse_move', { position: { x: -1, y: 'a' } }, { x: 5, y: 5 });
    expect(d.markers).toEqual([]);
    expect(d.pointer).toEqual({ x: 5, y: 5 });
    const e = markersFor('mouse_scroll', { position: { x: 3, y: 4 }, direction: 'left', repeat: 2 }, null);
    expect(e.markers[0]).toMatchObject({ kind: 'scroll', direction: 'left', label: '×2' });
  });
});

describe('writeStepReport', () => {
  it('writes action_screenshots.html beside the JSON and returns its path', async () => {
    const { dir, data } = await makeRunDir();
    dirs.push(dir);
    const path = await writeStepReport(dir);
    expect(path).toBe(join(dir, 'action_screenshots.html'));
    expect(await readFile(path, 'utf8')).toBe(renderStepReport(data));
    expect((await readdir(dir)).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('fails with REPORT_ERR_NOT_FOUND when there is no action_screenshots.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-report-'));
    dirs.push(dir);
    expect((await codeOf(writeStepReport(dir))).code).toBe('REPORT_ERR_NOT_FOUND');
    expect((await codeOf(writeStepReport(join(dir, 'nope')))).code).toBe('REPORT_ERR_NOT_FOUND');
  });

  it('fails with REPORT_ERR_INVALID on broken JSON and on a schema mismatch, writing nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-report-'));
    dirs.push(dir);
    await writeFile(join(dir, 'action_screenshots.json'), '{"version": 1, "actions": [');
    expect((await codeOf(writeStepReport(dir))).code).toBe('REPORT_ERR_INVALID');
    await writeFile(join(dir, 'action_screenshots.json'), JSON.stringify({ ...minimal(), alignment: 'guessed' }));
    const r = await codeOf(writeStepReport(dir));
    expect(r.code).toBe('REPORT_ERR_INVALID');
    expect(r.details?.field).toBe('alignment');
    expect(await readdir(dir)).toEqual(['action_screenshots.json']);
  });

  it('fails with REPORT_ERR_ABORTED when cancelled, writing nothing', async () => {
    const { dir } = await makeRunDir({ steps: [] });
    dirs.push(dir);
    const ac = new AbortController();
    ac.abort();
    const r = await codeOf(writeStepReport(dir, { signal: ac.signal }));
    expect(r.code).toBe('REPORT_ERR_ABORTED');
    expect(r.details?.reason).toBe('aborted');
    expect((await readdir(dir)).includes('action_screenshots.html')).toBe(false);
  });

  it('fails with REPORT_ERR_WRITE when the run directory is not writable', async () => {
    if (process.getuid?.() === 0) {
      // root ignores directory permissions: make the target a directory instead, so rename fails.
      const { dir } = await makeRunDir({ steps: [] });
      dirs.push(dir);
      await import('node:fs/promises').then((fs) => fs.mkdir(join(dir, 'action_screenshots.html', 'x'), { recursive: true }));
      expect((await codeOf(writeStepReport(dir))).code).toBe('REPORT_ERR_WRITE');
      return;
    }
    const { dir } = await makeRunDir({ steps: [] });
    dirs.push(dir);
    await chmod(dir, 0o555);
    try {
      expect((await codeOf(writeStepReport(dir))).code).toBe('REPORT_ERR_WRITE');
    } finally {
      await chmod(dir, 0o755);
    }
  });
});
