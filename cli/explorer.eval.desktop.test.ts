/**
 * `vncua eval --agent explorer --urls FILE` over two URLs: the explorer's test app and an unreachable one. The app's
 * run writes its qa-report.* (every planted problem found); the unreachable URL is an infra error as for any task
 * (PAGE_ERR_*, exit code 1), and the scores get one QA line per explored app (findings by kind, coverage).
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import type { QaReport } from '../agents/explorer/report/schema.ts';
import { missedPlanted } from '../agents/explorer/test-pages/planted.ts';
import { serveTestApp, type TestApp } from '../agents/explorer/test-pages/server.ts';
import type { ScoreReport } from '../eval/score.ts';
import { run } from './eval.ts';
import { runCaptured } from './test-helpers/capture.ts';

let app: TestApp;
let out: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  app = await serveTestApp();
  out = await tempOutputDir('vncua-explorer-eval-');
});

afterAll(async () => {
  await app?.close();
  await out?.remove();
});

describe('vncua eval --agent explorer --urls', () => {
  it('explores each URL as an app: the test app gets its QA report and a QA line in the scores; an unreachable URL is an infra error with its own QA report', async () => {
    const port = await closedPort();
    const list = join(out.dir, 'apps.txt');
    await writeFile(list, `# the explorer's test app, and a port nothing listens on\n${app.url}\n\nhttp://127.0.0.1:${port}/\n`);
    const root = join(out.dir, 'results');
    const r = await runCaptured(run, ['--urls', list, '--agent', 'explorer', '--out', root, '--workers', '1', '--retries', '0', '--max-steps', '60', '--', '--seed', '1']);
    expect(r.code, r.err).toBe(1); // the unreachable URL's infra error remains
    const scores = JSON.parse(await readFile(join(root, 'scores.json'), 'utf8')) as ScoreReport;
    expect(scores.infra_errors.map((e) => [e.task_id, e.error?.code])).toEqual([[`127.0.0.1-${port}`, expect.stringMatching(/^PAGE_ERR_/)]]);
    // One QA line per app: the unreachable one's report says it was never explored.
    expect(scores.qa).toHaveLength(2);
    const q = scores.qa!.find((x) => x.url === app.url)!;
    const lost = scores.qa!.find((x) => x.url !== app.url)!;
    expect(lost).toMatchObject({ task_id: `127.0.0.1-${port}`, findings: 0, coverage_pct: 0 });
    expect(q).toMatchObject({ agent: 'explorer', task_id: `127.0.0.1-${new URL(app.url).port}-index.html`, url: app.url });
    const report = JSON.parse(await readFile(join(root, q.link.replace(/\.html$/, '.json')), 'utf8')) as QaReport;
    expect(missedPlanted(report.findings).map((p) => p.id)).toEqual([]);
    expect(q.findings).toBe(report.totals.findings);
    expect(q.coverage_pct).toBe(report.totals.coveragePct);
    expect(existsSync(join(root, dirname(q.link), 'qa-report.md'))).toBe(true);
    expect(r.out).toContain(`qa: explorer/${q.task_id}: ${q.findings} findings (`);
    expect(await readFile(join(root, 'scores.md'), 'utf8')).toContain('## QA (explored apps)');
    // The app that was never reached still has its QA report, with the run's error.
    const infraDir = join(root, scores.runs.find((x) => x.infra_error)!.dir);
    const lostReport = JSON.parse(await readFile(join(infraDir, 'qa-report.json'), 'utf8')) as QaReport;
    expect(lostReport).toMatchObject({ endReason: 'error', run: { status: 'error', error: { code: expect.stringMatching(/^PAGE_ERR_/) } } });
  }, 400_000);
});
