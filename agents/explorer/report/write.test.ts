/**
 * The QA report writer: qa-report.json valid against the committed JSON Schema (checked with ajv) and the zod
 * schema, findings grouped by kind and sorted by step, hostile page text escaped in the HTML and Markdown,
 * links to the run files that exist, the committed schema file equal to fresh output, and the error codes.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../../../harness/test-helpers/files.ts';
import type { ExplorerSummary, Finding } from '../types.ts';
import { groupFindings } from './build.ts';
import { escapeHtml, escapeMd } from './render.ts';
import { renderQaReportJsonSchema } from './schema.ts';
import { writeQaReport } from './write.ts';

const SCHEMA_FILE = fileURLToPath(new URL('./qa-report.schema.json', import.meta.url));
const HOSTILE = '<script>alert("x")</script> | `code` *b*';

/** A small exploration's summary: two steps, two states, three targets (one with a hostile label). */
function summary(): ExplorerSummary {
  return {
    startUrl: 'http://127.0.0.1:8080/index.html',
    seed: 7,
    startedAt: '2026-11-27T12:00:00.000Z',
    durationMs: 4321,
    endReason: 'exhausted',
    steps: [
      {
        step: 1,
        action: { action: 'mouse_click', params: { position: { x: 10, y: 20 } } },
        layer: 'heuristic',
        strategy: 'page.tab',
        target: { key: 'tab:Errors', kind: 'tab', label: 'Errors' },
        progress: true,
        url: 'http://127.0.0.1:8080/index.html',
        frameHash: 'ab12',
        atMs: 800,
      },
      {
        step: 2,
        action: { action: 'press_key', params: { key: 'Escape' } },
        layer: 'unstick',
        strategy: 'unstick.escape',
        progress: false,
        url: 'http://127.0.0.1:8080/index.html',
        frameHash: 'ab12',
        atMs: 1600,
      },
    ],
    states: [
      { key: 's1', url: 'http://127.0.0.1:8080/index.html', frameHash: 'ab00', firstStep: 0, visits: 1, screenshot: 'screens/state 1.png' },
      { key: 's2', url: 'http://127.0.0.1:8080/index.html', frameHash: 'ab12', firstStep: 1, visits: 2 },
    ],
    coverage: {
      seen: 3,
      tried: 1,
      targets: [
        { key: 'tab:Errors', kind: 'tab', label: 'Errors', tried: true, firstSeenStep: 0 },
        { key: 'button:x', kind: 'button', label: HOSTILE, tried: false, firstSeenStep: 0 },
        { key: 'link:r', kind: 'link', label: 'Reports', tried: false, firstSeenStep: 1 },
      ],
    },
    unstick: [{ step: 2, strategy: 'escape', reason: 'no progress for 1 step' }],
    model: { calls: 0, ignored: 0, costUsd: 0, tokens: { input: 0, output: 0 } },
  };
}

const FINDINGS: Finding[] = [
  { kind: 'console_error', step: 2, url: 'http://127.0.0.1:8080/index.html', message: 'second console error', screenshot: 'screens/f2.png' },
  {
    kind: 'http_error',
    step: 1,
    url: null,
    message: 'HTTP 500 Internal Server Error for Document http://127.0.0.1:8080/broken',
    excerpt: 'HTTP 500 Internal Server Error\nhttp://127.0.0.1:8080/broken',
  },
  {
    kind: 'console_error',
    step: 1,
    url: 'http://127.0.0.1:8080/index.html',
    message: HOSTILE,
    excerpt: `${HOSTILE}\n    at f (app.js:1:1)`,
    screenshot: 'screens/f1.png',
    count: 3,
    lastStep: 2,
  },
];

describe('writeQaReport', () => {
  let out: { dir: string; remove(): Promise<void> };
  beforeEach(async () => {
    out = await tempOutputDir('vncua-qa-report-');
  });
  afterEach(async () => {
    await out.remove();
  });

  it('writes qa-report.json valid against the committed JSON Schema, with totals, links and the run outcome', async () => {
    await writeFile(join(out.dir, 'execution.json'), '{}');
    await writeFile(join(out.dir, 'result.json'), JSON.stringify({ status: 'success', steps: 3, error: null }));
    await mkdir(join(out.dir, 'recording'));
    await writeQaReport(out.dir, summary(), FINDINGS);
    const json = JSON.parse(await readFile(join(out.dir, 'qa-report.json'), 'utf8'));
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const validate = ajv.compile(JSON.parse(await readFile(SCHEMA_FILE, 'utf8')));
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    expect(json.totals).toEqual({
      steps: 2,
      states: 2,
      findings: 3,
      byKind: { crash: 0, frozen: 0, uncaught_exception: 0, console_error: 2, http_error: 1, request_failed: 0, blank_screen: 0, blocked_navigation: 0 },
      coveragePct: 33.3,
      unstick: 1,
      costUsd: 0,
    });
    expect(json.links).toEqual({ trace: 'execution.json', result: 'result.json', stepReport: null, recording: 'recording', summary: null });
    expect(json.run).toEqual({ status: 'success', steps: 3 });
    // Grouped by kind (the kinds' order), each group by step.
    expect(json.findings.map((f: Finding) => `${f.kind}@${f.step}`)).toEqual(['console_error@1', 'console_error@2', 'http_error@1']);
    // A report the JSON Schema refuses: ajv says so (the schema checks something).
    expect(validate({ ...json, findings: [{ ...json.findings[0], kind: 'nope' }] })).toBe(false);
  });

  it('qa-report.html is self-contained and escapes page text; the Markdown escapes it too; both mention each finding', async () => {
    await writeQaReport(out.dir, summary(), FINDINGS, {}, null);
    const html = await readFile(join(out.dir, 'qa-report.html'), 'utf8');
    expect(html).not.toContain('<script>');
    expect(html).not.toMatch(/<link |src="http/);
    expect(html).toContain(escapeHtml(HOSTILE));
    expect(html).toContain('<h3 id="console_error">Console errors (2)</h3>');
    expect(html).toContain('<h3 id="http_error">HTTP errors (1)</h3>');
    expect(html).toContain('<img class="thumb" src="screens/f1.png"');
    expect(html).toContain('src="screens/state%201.png"');
    expect(html).toContain('3× (last at step 2)');
    expect(html).toContain('1 of 3 interactive elements acted on (33.3%)');
    expect(html).toContain('step 2: escape (no progress for 1 step)');
    const md = await readFile(join(out.dir, 'qa-report.md'), 'utf8');
    expect(md).toContain(escapeMd(HOSTILE));
    expect(md).not.toContain('<script>');
    for (const f of FINDINGS) {
      expect(html).toContain(escapeHtml(f.message));
      expect(md).toContain(escapeMd(f.message));
    }
    expect(md).toMatch(/^### Console errors \(2\)$/m);
    expect(md).toContain('[png](screens/f1.png)');
  });

  it('groupFindings leaves out empty kinds and orders kinds by severity', () => {
    expect(groupFindings(FINDINGS).map((g) => [g.kind, g.findings.length])).toEqual([
      ['console_error', 2],
      ['http_error', 1],
    ]);
    expect(groupFindings([])).toEqual([]);
  });

  it('an invalid report is QA_ERR_INVALID and writes nothing; an unwritable directory is QA_ERR_WRITE', async () => {
    const bad = { ...summary(), durationMs: -5, steps: [{ ...summary().steps[0]!, atMs: -1 }] };
    await expect(writeQaReport(out.dir, bad, [])).rejects.toMatchObject({ code: 'QA_ERR_INVALID' });
    await expect(readFile(join(out.dir, 'qa-report.json'))).rejects.toThrow();
    await expect(writeQaReport(join(out.dir, 'missing', 'dir'), summary(), [])).rejects.toMatchObject({ code: 'QA_ERR_WRITE' });
  });

  it('the committed qa-report.schema.json is the fresh output (npx tsx scripts/gen-schemas.ts)', async () => {
    expect(await readFile(SCHEMA_FILE, 'utf8')).toBe(renderQaReportJsonSchema());
  });
});
