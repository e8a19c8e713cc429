/**
 * Judges on real runs: `vncua eval --judge ...` runs the replay agent on real desktops (Xvnc, Chromium)
 * over basic-suite pages: click-button (solved), double-click-file (solved; the suite's default judges)
 * and a run made to fail (it clicks "Remind me later" again and again). The LLM judge is the real
 * `openai` SDK against a local chat completions server that answers "pass" for everything but
 * double-click-file, where it answers garbage. Each judge's verdict is checked against what is known of
 * each run, then the scores' per-judge rates and disagreement list, then `vncua score --judge` judging
 * the finished runs again without re-running them.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, texts, type ChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { JUDGES_FILE, type JudgesFile } from '../eval/judges/record.ts';
import type { ScoreReport } from '../eval/score.ts';
import { startStaticServer, type StaticServer } from '../eval/static-server.ts';
import { run as evalRun } from './eval.ts';
import { run as scoreRun } from './score.ts';
import { runCaptured } from './test-helpers/capture.ts';

const SUITE = fileURLToPath(new URL('../eval/suites/basic/', import.meta.url));
const KEY_ENV = 'VNCUA_TEST_JUDGE_KEY';

let tmp: string;
let suite: StaticServer;
let chat: ChatServer;
const RES = '1280_800';

const pageJudges = [
  { type: 'url', glob: '*/pages/click-button.html' },
  { type: 'dom', text: 'You are subscribed.' },
  { type: 'dom', selector: '#success', name: 'success-box' },
  { type: 'expression', expression: "document.getElementById('status').textContent === 'You are subscribed.'" },
];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'vncua-judges-'));
  suite = await startStaticServer({ root: SUITE });
  chat = await startChatServer((body) => {
    const text = body.messages.flatMap((m) => texts(m.content)).join('\n');
    if (text.includes('budget.xlsx')) return 'Looks done to me!!';
    return '{"verdict":"pass","reason":"the page shows the expected state"}';
  });
  process.env[KEY_ENV] = 'sk-local-judge-key';
  const llm = { type: 'llm', model: 'gpt-4.1-mini', baseUrl: chat.baseURL, apiKeyEnv: KEY_ENV };
  const refs = join(tmp, 'suite', 'references');
  await mkdir(refs, { recursive: true });
  for (const id of ['click-button', 'double-click-file']) await writeFile(join(refs, `${id}.json`), await readFile(join(SUITE, 'references', `${id}.json`)));
  const later = { action: 'mouse_click', params: { position: { x: 450, y: 182 }, button: 'left', click_type: 'single' } };
  await writeFile(join(refs, 'click-button-fail.json'), JSON.stringify([later, later, later, later, later, { action: 'finish', params: {} }]));
  const tasks = [
    {
      id: 'click-button',
      goal: 'Subscribe to the newsletter by clicking the "Subscribe" button.',
      url: 'pages/click-button.html',
      success: { sentinel: 'code#1' },
      judges: [...pageJudges, { type: 'heuristic' }, llm],
    },
    { id: 'double-click-file', goal: 'Open the file "budget.xlsx" by double-clicking it.', url: 'pages/double-click-file.html', success: { sentinel: 'code#1' } },
    {
      id: 'click-button-fail',
      goal: 'Subscribe to the newsletter by clicking the "Subscribe" button.',
      url: 'pages/click-button.html',
      success: { sentinel: 'code#1' },
      maxSteps: 10,
      judges: [...pageJudges, { type: 'heuristic' }, llm, { type: 'hybrid', llm: { model: 'gpt-4.1-mini', baseUrl: chat.baseURL, apiKeyEnv: KEY_ENV } }],
    },
  ];
  await writeFile(join(tmp, 'suite', 'tasks.json'), JSON.stringify(tasks, null, 2));
}, 60_000);

afterAll(async () => {
  delete process.env[KEY_ENV];
  await suite?.close();
  await chat?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const verdicts = async (out: string, id: string): Promise<Record<string, string>> => {
  const f = JSON.parse(await readFile(join(out, 'replay', RES, id, JUDGES_FILE), 'utf8')) as JudgesFile;
  return Object.fromEntries(f.verdicts.map((v) => [v.judge, v.verdict]));
};

describe('judges on real runs', () => {
  it('vncua eval --judge: every judge against the known truth, the scores, then vncua score --judge', async () => {
    const out = join(tmp, 'out');
    const suiteJudges = JSON.stringify({ type: 'llm', model: 'gpt-4.1-mini', baseUrl: chat.baseURL, apiKeyEnv: KEY_ENV });
    const r = await runCaptured(evalRun, [
      '--tasks',
      join(tmp, 'suite', 'tasks.json'),
      '--agent',
      'replay',
      '--base-url',
      suite.url.replace('0.0.0.0', '127.0.0.1'),
      '--workers',
      '1',
      '--retries',
      '0',
      '--no-live',
      '--out',
      out,
      '--judge',
      'heuristic',
      '--judge',
      suiteJudges,
    ]);
    expect(r.code, r.err + r.out).toBe(0);

    // The solved run: every judge passes but the heuristic, which cannot tell a success.
    expect(await verdicts(out, 'click-button')).toEqual({
      sentinel: 'pass',
      url: 'pass',
      dom: 'pass',
      'success-box': 'pass',
      expression: 'pass',
      heuristic: 'unknown',
      llm: 'pass',
    });
    // The failed run: the page judges fail, the heuristic sees the loop, the (wrong) model says pass,
    // the loose URL judge passes; the hybrid's cheap judges agree on fail, so its LLM is not asked.
    const fail = JSON.parse(await readFile(join(out, 'replay', RES, 'click-button-fail', JUDGES_FILE), 'utf8')) as JudgesFile;
    expect(Object.fromEntries(fail.verdicts.map((v) => [v.judge, v.verdict]))).toEqual({
      sentinel: 'fail',
      url: 'pass',
      dom: 'fail',
      'success-box': 'fail',
      expression: 'fail',
      heuristic: 'fail',
      llm: 'pass',
      hybrid: 'fail',
    });
    const h = fail.verdicts.find((v) => v.judge === 'heuristic')!;
    // Clicks 2-5 on "Remind me later" left the screen pixel-identical (frames replayed from the recording).
    expect((h.evidence.signs as Array<{ kind: string; from: number; to: number }>).map((s) => [s.kind, s.from, s.to])).toEqual([
      ['stuck', 1, 4],
      ['loop', 0, 4],
    ]);
    expect(h.evidence.screens).toBe('recording');
    expect(fail.verdicts.find((v) => v.judge === 'hybrid')!.evidence.llm).toBeNull();
    expect(fail.verdicts.find((v) => v.judge === 'url')!.evidence.url).toMatch(/\/pages\/click-button\.html$/);
    expect(fail.verdicts.find((v) => v.judge === 'llm')).toMatchObject({ evidence: { screenshot: 'final_page.png' } });
    expect(fail.verdicts.find((v) => v.judge === 'llm')!.cost_usd).toBeGreaterThan(0);
    // The suite's judges for the task without its own; the model's garbage: unknown, one coded line.
    expect(await verdicts(out, 'double-click-file')).toEqual({ sentinel: 'pass', heuristic: 'unknown', llm: 'unknown' });
    expect(r.err).toMatch(/^vncua eval: JUDGE_ERR_BAD_ANSWER: replay\/1280_800\/double-click-file: judge llm: .*"Looks done to me!!"$/m);
    // 3 runs with an LLM judge asked, 1 hybrid not asked: 3 calls.
    expect(chat.bodies).toHaveLength(3);

    const scores = JSON.parse(await readFile(join(out, 'scores.json'), 'utf8')) as ScoreReport;
    const rate = (judge: string) => scores.judges.find((j) => j.judge === judge)!;
    expect(rate('sentinel')).toMatchObject({ runs: 3, pass: 2, fail: 1, unknown: 0, pass_rate: 2 / 3 });
    expect(rate('llm')).toMatchObject({ runs: 3, pass: 2, fail: 0, unknown: 1, pass_rate: 1 });
    expect(rate('heuristic')).toMatchObject({ runs: 3, pass: 0, fail: 1, unknown: 2, pass_rate: 0 });
    expect(scores.disagreements.map((d) => d.task_id)).toEqual(['click-button-fail']);
    expect(scores.disagreements[0]).toMatchObject({ link: expect.stringMatching(/click-button-fail\//), viewer: './?run=replay%2F1280_800%2Fclick-button-fail' });
    const md = await readFile(join(out, 'scores.md'), 'utf8');
    expect(md).toContain('## Runs where judges disagree');
    expect(md).toMatch(/click-button-fail.*sentinel fail.*url pass/);
    const html = await readFile(join(out, 'scores.html'), 'utf8');
    expect(html).toContain('<h2>Runs where judges disagree</h2>');
    expect(html).toMatch(/class="judged-run" href="replay\/1280_800\/click-button-fail\//);
    // Each run's cell says its verdicts on hover.
    expect(html).toContain('judges: sentinel pass, heuristic unknown, llm unknown');

    // Judge again without re-running: the selector's verdict comes from the run's end where it was taken;
    // where it was not, it is unknown with JUDGE_ERR_NEEDS_PAGE.
    const s = await runCaptured(scoreRun, [out, '--judge', 'heuristic', '--judge', '{"type":"dom","selector":"#success"}']);
    expect(s.code, s.err).toBe(0);
    expect(await verdicts(out, 'click-button')).toEqual({ sentinel: 'pass', heuristic: 'unknown', dom: 'pass' });
    expect(await verdicts(out, 'click-button-fail')).toEqual({ sentinel: 'fail', heuristic: 'fail', dom: 'fail' });
    expect(await verdicts(out, 'double-click-file')).toEqual({ sentinel: 'pass', heuristic: 'unknown', dom: 'unknown' });
    expect(s.err).toMatch(/^vncua score: JUDGE_ERR_NEEDS_PAGE: replay\/1280_800\/double-click-file: /m);
    expect(s.out).toMatch(/judge dom: 50\.0% pass \(1\/2, 1 unknown\)/);
    expect(chat.bodies).toHaveLength(3);
  }, 300_000);
});
