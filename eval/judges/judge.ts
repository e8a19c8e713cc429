/**
 * Judging one run: every judge of the list (the sentinel's verdict always first) decides pass, fail or
 * unknown from what the run left in its directory (the trace, result.json, task.json, the recording,
 * final_page.json / final_page.png written at its end), and judges.json records each verdict with its
 * evidence. The page judges' live checks come from final_page.json (captured by the runner); the url and
 * dom-text judges decide from its snapshot; the LLM judges run last, so their `when: "unsure"` policy
 * sees every other verdict.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readTrace } from '../../harness/trace/reader.ts';
import { runResultSchema, type RunResult, type TraceEntry } from '../../harness/trace/schema.ts';
import { TRACE_FILES } from '../../harness/trace/writer.ts';
import { TASK_FILE } from '../layout.ts';
import { firstSuccess } from '../score.ts';
import { findSigns, screenHashes, type EntryScreens } from './heuristic.ts';
import { askLlmJudge, type LlmJudgeInput, type PriceFn } from './llm.ts';
import { FINAL_PAGE_PNG, excerpt, readFinalPage, storedCheck, type FinalPage } from './page.ts';
import { writeJudges, type JudgeRecord, type JudgesFile, type Verdict } from './record.ts';
import { judgeNames, withSentinel, type CheapJudgeSpec, type HybridJudgeSpec, type JudgeSpec, type LlmJudgeSpec } from './spec.ts';
import { matchUrl } from './url-match.ts';

/** The final screen taken from the recording when the run has no final_page.png. */
export const FINAL_SCREEN_PNG = 'final_screen.png';

/** Options of judgeRun(). */
export interface JudgeRunOptions {
  /** `run`: right after the run (the runner); `rejudge`: vncua score --judge. */
  source: JudgesFile['source'];
  /** USD of an LLM call's usage (the CLI passes byom/pricing.ts's table). */
  price?: PriceFn;
  /** Where the LLM judges read their API keys (default process.env). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** Everything the judges look at, loaded once per run. */
interface RunView {
  dir: string;
  entries: TraceEntry[];
  partial: boolean;
  result: RunResult | null;
  task: { id?: string; goal?: string; url?: string; resolution?: string; repeat?: number };
  page: FinalPage | null;
  screens?: EntryScreens | null;
  screenshot?: { path: string; png: Uint8Array } | null;
}

type Decided = Omit<JudgeRecord, 'judge' | 'type' | 'duration_ms'>;
const decided = (verdict: Verdict, reason: string, evidence: Record<string, unknown> = {}, more: Partial<Decided> = {}): Decided => ({
  verdict,
  reason,
  evidence,
  error: null,
  skipped: false,
  cost_usd: null,
  ...more,
});

async function loadView(dir: string): Promise<RunView> {
  let entries: TraceEntry[] = [];
  let partial = true;
  try {
    const t = await readTrace(dir);
    entries = t.entries;
    partial = t.partial;
  } catch {
    // no trace: the sentinel says unknown
  }
  let result: RunResult | null = null;
  try {
    const r = runResultSchema.safeParse(JSON.parse(await readFile(join(dir, TRACE_FILES.result), 'utf8')));
    if (r.success) result = r.data;
  } catch {
    // none
  }
  let task: RunView['task'] = {};
  try {
    const t = JSON.parse(await readFile(join(dir, TASK_FILE), 'utf8')) as unknown;
    if (t && typeof t === 'object' && !Array.isArray(t)) task = t as RunView['task'];
  } catch {
    // none
  }
  return { dir, entries, partial, result, task, page: await readFinalPage(dir) };
}

function sentinelVerdict(v: RunView): Decided {
  if (v.entries.length === 0 && v.result === null) return decided('unknown', 'the run left no trace and no result.json');
  const first = firstSuccess(v.entries);
  if (first && !first.assisted) {
    const e = v.entries[first.index]!;
    const ev = v.result?.evidence ?? e.success_check ?? null;
    return decided('pass', `the success check held after entry ${first.index}`, {
      entry_index: first.index,
      ...(ev ? { url: ev.url, rule: ev.rule, pattern: ev.pattern, excerpt: ev.snippet } : {}),
    });
  }
  if (first?.assisted)
    return decided('fail', `the task was first seen complete after a person's step (entry ${first.index}): not the agent's success`, { entry_index: first.index });
  if (v.result === null && v.partial) return decided('unknown', 'the run has not ended (only partial_execution.json)');
  return decided('fail', `the success check never held in ${v.entries.length} entries`);
}

function urlVerdict(spec: Extract<JudgeSpec, { type: 'url' }>, v: RunView): Decided {
  if (!v.page || v.page.url === null)
    return decided(
      'unknown',
      "no final page URL was captured at the run's end (final_page.json)",
      {},
      { error: { code: 'JUDGE_ERR_PAGE', message: 'final_page.json holds no URL' } },
    );
  const m = matchUrl(spec, v.page.url);
  return decided(m.match ? 'pass' : 'fail', `the final URL ${m.match ? 'matches' : 'does not match'} ${m.rule}`, { url: v.page.url, rule: m.rule });
}

function pageCheckVerdict(spec: Extract<JudgeSpec, { type: 'expression' } | { type: 'dom' }>, v: RunView, source: JudgesFile['source']): Decided {
  if (spec.type === 'dom' && spec.text !== undefined) {
    if (!v.page || v.page.text === null)
      return decided('unknown', "no final page text was captured at the run's end", {}, { error: { code: 'JUDGE_ERR_PAGE', message: 'final_page.json holds no text' } });
    const ex = excerpt(v.page.text, spec.text);
    return decided(ex !== null ? 'pass' : 'fail', `the final page's text ${ex !== null ? 'contains' : 'does not contain'} ${JSON.stringify(spec.text)}`, {
      url: v.page.url,
      excerpt: ex,
    });
  }
  const c = storedCheck(v.page, spec);
  if (c) return decided(c.verdict, c.reason, c.evidence, { error: c.error });
  const what = spec.type === 'expression' ? 'expression' : 'selector';
  const message =
    source === 'rejudge'
      ? `the ${what} judge needs the live page, which is gone; this run holds no verdict of it from its end (give the judge to vncua eval)`
      : `the ${what} check was not taken at the run's end`;
  return decided('unknown', message, {}, { error: { code: source === 'rejudge' ? 'JUDGE_ERR_NEEDS_PAGE' : 'JUDGE_ERR_PAGE', message } });
}

async function heuristicVerdict(spec: Extract<JudgeSpec, { type: 'heuristic' }>, v: RunView, signal?: AbortSignal): Promise<Decided> {
  if (v.screens === undefined) v.screens = await screenHashes(v.dir, v.entries, signal);
  const signs = findSigns(v.entries, v.screens, spec);
  const evidence = { signs, screens: v.screens ? 'recording' : null };
  if (signs.length > 0) return decided('fail', signs.map((s) => `${s.kind}: ${s.detail}`).join('; '), evidence);
  return decided(
    'unknown',
    `no sign of failure (stuck, loop, repeated errors) in ${v.entries.length} entries${v.screens ? '' : ' (no recording: screens not compared)'}`,
    evidence,
  );
}

/** The final screenshot: final_page.png, else the recording's last frame written as final_screen.png; null when neither exists. */
async function finalScreenshot(v: RunView): Promise<{ path: string; png: Uint8Array } | null> {
  if (v.screenshot !== undefined) return v.screenshot;
  v.screenshot = null;
  try {
    v.screenshot = { path: FINAL_PAGE_PNG, png: await readFile(join(v.dir, FINAL_PAGE_PNG)) };
    return v.screenshot;
  } catch {
    // none: try the recording
  }
  try {
    const { Replayer } = await import('../../recorder/replay/replayer.ts');
    const replay = await Replayer.open(v.dir);
    const f = await replay.frameAt(replay.dataEnd);
    if (f) {
      const { encodePng } = await import('../../recorder/process/png.ts');
      const png = await encodePng(f);
      await writeFile(join(v.dir, FINAL_SCREEN_PNG), png);
      v.screenshot = { path: FINAL_SCREEN_PNG, png };
    }
  } catch {
    // no recording
  }
  return v.screenshot;
}

function stepLines(entries: readonly TraceEntry[]): string[] {
  return entries.map(
    (e) => `${e.index}. ${e.actor === 'human' ? '(a person) ' : ''}${e.action} ${JSON.stringify(e.params)}${'error' in e && e.error ? ` -> error ${e.error.code}` : ''}`,
  );
}

async function llmVerdict(
  spec: Pick<LlmJudgeSpec, 'model' | 'baseUrl' | 'apiKeyEnv' | 'timeoutMs' | 'maxRetries'>,
  name: string,
  v: RunView,
  o: JudgeRunOptions,
): Promise<Decided> {
  const shot = await finalScreenshot(v);
  const input: LlmJudgeInput = { goal: v.task.goal ?? '(unknown task)', url: v.task.url, steps: stepLines(v.entries), screenshot: shot?.png ?? null, status: v.result?.status };
  const a = await askLlmJudge({ ...spec, name }, input, { ...(o.signal ? { signal: o.signal } : {}), ...(o.price ? { price: o.price } : {}), ...(o.env ? { env: o.env } : {}) });
  return decided(a.verdict, a.reason, { model: a.model, screenshot: shot?.path ?? null, raw_answer: a.raw, usage: a.usage }, { error: a.error, cost_usd: a.cost_usd });
}

/** The cheap judges' verdicts do not settle the run: they disagree, or none said pass or fail. */
export function unsure(verdicts: readonly Verdict[]): boolean {
  const definite = new Set(verdicts.filter((x) => x !== 'unknown'));
  return definite.size !== 1;
}

/** A number in [0, 1) drawn from the seed and the run (the same run and seed always draw the same). */
export function sampleDraw(seed: number, runKey: string): number {
  return createHash('sha256').update(`${seed}:${runKey}`).digest().readUInt32BE(0) / 2 ** 32;
}

async function cheapVerdict(spec: CheapJudgeSpec, v: RunView, o: JudgeRunOptions): Promise<Decided> {
  switch (spec.type) {
    case 'sentinel':
      return sentinelVerdict(v);
    case 'url':
      return urlVerdict(spec, v);
    case 'expression':
    case 'dom':
      return pageCheckVerdict(spec, v, o.source);
    case 'heuristic':
      return heuristicVerdict(spec, v, o.signal);
  }
}

async function hybridVerdict(spec: HybridJudgeSpec, name: string, v: RunView, o: JudgeRunOptions): Promise<Decided> {
  const cheap = spec.judges ?? [{ type: 'sentinel' }, { type: 'heuristic' }];
  const names = judgeNames(cheap);
  const sub: Array<{ judge: string; verdict: Verdict; reason: string }> = [];
  for (const [i, s] of cheap.entries()) {
    const d = await cheapVerdict(s, v, o);
    sub.push({ judge: names[i]!, verdict: d.verdict, reason: d.reason });
  }
  const verdicts = sub.map((s) => s.verdict);
  const settled = unsure(verdicts) ? null : verdicts.find((x) => x !== 'unknown')!;
  if (settled !== null && !(spec.escalate ?? []).includes(settled)) {
    return decided(settled, `the cheap judges agree (${settled}); the LLM was not asked`, { cheap: sub, llm: null });
  }
  const why =
    settled === null
      ? new Set(verdicts.filter((x) => x !== 'unknown')).size > 1
        ? 'the cheap judges disagree'
        : 'no cheap judge is sure'
      : `the cheap judges agree on ${settled}, which escalates`;
  const d = await llmVerdict(spec.llm, `${name}.llm`, v, o);
  return { ...d, reason: `${why}; the LLM: ${d.reason}`, evidence: { cheap: sub, llm: d.evidence } };
}

/** The key a `sample` draw uses: the task id, resolution and repeat from task.json, else the directory name. */
function runKey(v: RunView): string {
  return v.task.id ? `${v.task.id}@${v.task.resolution ?? ''}#${v.task.repeat ?? 1}` : basename(v.dir);
}

/** Judge the run in `dir` with `specs` (the sentinel is added first when missing) and write judges.json; resolves to the file. */
export async function judgeRun(dir: string, specs: readonly JudgeSpec[], o: JudgeRunOptions): Promise<JudgesFile> {
  const all = withSentinel(specs);
  const names = judgeNames(all);
  const v = await loadView(dir);
  const records: Array<JudgeRecord | null> = all.map(() => null);
  // Cheap ones and hybrids first (in order), then the LLM judges, so "unsure" sees every other verdict.
  const order = [...all.keys()].sort((a, b) => Number(all[a]!.type === 'llm') - Number(all[b]!.type === 'llm'));
  for (const i of order) {
    o.signal?.throwIfAborted();
    const spec = all[i]!;
    const name = names[i]!;
    const t0 = performance.now();
    let d: Decided;
    if (spec.type === 'llm') {
      const when = spec.when ?? 'always';
      const others = records.filter((r): r is JudgeRecord => r !== null && r.type !== 'llm').map((r) => r.verdict);
      if (when === 'unsure' && !unsure(others)) d = decided('unknown', `not asked: the other judges agree (${others.find((x) => x !== 'unknown')})`, {}, { skipped: true });
      else if (when === 'sample' && sampleDraw(spec.seed ?? 0, runKey(v)) >= spec.sample!)
        d = decided('unknown', `not asked: not in the ${spec.sample} sample (seed ${spec.seed ?? 0})`, {}, { skipped: true });
      else d = await llmVerdict(spec, name, v, o);
    } else if (spec.type === 'hybrid') d = await hybridVerdict(spec, name, v, o);
    else d = await cheapVerdict(spec, v, o);
    records[i] = { judge: name, type: spec.type, ...d, duration_ms: Math.round(performance.now() - t0) };
  }
  const file: JudgesFile = { version: 1, judged_at: new Date().toISOString(), source: o.source, verdicts: records as JudgeRecord[] };
  await writeJudges(dir, file);
  return file;
}
