/**
 * The final page, read over CDP when a run ends (before its desktop goes): `final_page.json` (the active
 * page's URL, title, visible text and HTML, cut short, and the verdicts of the expression and selector
 * judges, which need the live page) and `final_page.png` (the page's screenshot). The url and dom-text
 * judges then decide from the stored snapshot, so `vncua score --judge` can ask them again later.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { isVncuaError } from '../../harness/errors.ts';
import { SuccessChecker, type Sentinel } from '../../harness/cdp/success.ts';
import { writeFileAtomic } from '../../harness/trace/atomic.ts';
import type { Verdict } from './record.ts';
import { pageCheckKey, type JudgeSpec } from './spec.ts';

/** Files in the run directory. */
export const FINAL_PAGE_FILE = 'final_page.json';
/** The page's screenshot at the run's end. */
export const FINAL_PAGE_PNG = 'final_page.png';
/** Characters of visible text and of HTML kept. */
export const PAGE_TEXT_MAX = 200_000;

/** One live page check's result. */
const pageCheckSchema = z.object({
  verdict: z.enum(['pass', 'fail', 'unknown']),
  reason: z.string(),
  evidence: z.record(z.string(), z.unknown()),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

/** Schema of final_page.json. */
export const finalPageSchema = z.object({
  captured_at: z.number(),
  /** Null when CDP gave no answer. */
  url: z.string().nullable(),
  title: z.string().nullable(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  /** Verdicts of the page checks (expression, selector), keyed by spec.ts pageCheckKey. */
  checks: z.record(z.string(), pageCheckSchema),
});

/** final_page.json. */
export type FinalPage = z.infer<typeof finalPageSchema>;
/** One page check. */
export type PageCheck = z.infer<typeof pageCheckSchema>;

const SNAPSHOT = `(() => ({ url: location.href, title: document.title, text: (document.body ? document.body.innerText : '').slice(0, ${PAGE_TEXT_MAX}), html: document.documentElement.outerHTML.slice(0, ${PAGE_TEXT_MAX}) }))()`;

/** The page checks (expression, selector) among specs, a hybrid's cheap judges included. */
function pageChecks(specs: readonly JudgeSpec[]): Array<Extract<JudgeSpec, { type: 'expression' } | { type: 'dom' }>> {
  return specs.flatMap((s) => {
    if (s.type === 'expression' || (s.type === 'dom' && s.selector !== undefined)) return [s];
    if (s.type === 'hybrid') return pageChecks(s.judges ?? []);
    return [];
  });
}

/** Run one expression/selector check on the live page. */
async function check(cdpUrl: string, spec: Extract<JudgeSpec, { type: 'expression' } | { type: 'dom' }>, opts: { signal?: AbortSignal; timeoutMs: number }): Promise<PageCheck> {
  const sentinel: Sentinel = spec.type === 'expression' ? { expression: spec.expression } : { selector: spec.selector!, ...(spec.visible ? { visible: true } : {}) };
  const what = spec.type === 'expression' ? `the expression ${spec.expression}` : `the selector ${spec.selector}`;
  const checker = new SuccessChecker(cdpUrl, sentinel, { timeoutMs: opts.timeoutMs, connectTimeoutMs: opts.timeoutMs });
  try {
    const a = await checker.inspect({ signal: opts.signal, timeoutMs: opts.timeoutMs });
    if (a.ok === null) {
      const message = `CDP gave no answer for ${what} (${checker.lastFailure?.reason ?? 'unreachable'})`;
      return { verdict: 'unknown', reason: message, evidence: {}, error: { code: 'JUDGE_ERR_PAGE', message } };
    }
    if (a.ok) return { verdict: 'pass', reason: `${what} held on the final page`, evidence: { url: a.evidence?.url ?? null, excerpt: a.evidence?.snippet ?? null }, error: null };
    return { verdict: 'fail', reason: `${what} did not hold on the final page`, evidence: {}, error: null };
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    const message = `${what} could not run in the final page: ${isVncuaError(e) ? e.message : String(e)}`;
    return { verdict: 'unknown', reason: message, evidence: {}, error: { code: 'JUDGE_ERR_PAGE', message } };
  } finally {
    await checker.close().catch(() => {});
  }
}

/**
 * Read the final page of a run that just ended (its desktop still up) and write final_page.json and
 * final_page.png into `dir`. Never throws but on cancellation: what could not be read is null.
 */
export async function captureFinalPage(dir: string, cdpUrl: string, specs: readonly JudgeSpec[], opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<FinalPage> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const page: FinalPage = { captured_at: Date.now(), url: null, title: null, text: null, html: null, checks: {} };
  const checker = new SuccessChecker(cdpUrl, { sentinel: 'x' }, { timeoutMs, connectTimeoutMs: timeoutMs });
  try {
    const session = await checker.activeSession({ signal: opts.signal, timeoutMs });
    if (session) {
      const snap = (await session.send('Runtime.evaluate', { expression: SNAPSHOT, returnByValue: true }).catch(() => null)) as { result?: { value?: Partial<FinalPage> } } | null;
      const v = snap?.result?.value;
      if (v && typeof v === 'object') Object.assign(page, { url: v.url ?? null, title: v.title ?? null, text: v.text ?? null, html: v.html ?? null });
      const shot = (await session.send('Page.captureScreenshot', { format: 'png' }).catch(() => null)) as { data?: string } | null;
      if (shot?.data) await writeFile(join(dir, FINAL_PAGE_PNG), Buffer.from(shot.data, 'base64'));
    }
  } finally {
    await checker.close().catch(() => {});
  }
  for (const s of pageChecks(specs)) {
    opts.signal?.throwIfAborted();
    const key = pageCheckKey(s);
    if (!(key in page.checks)) page.checks[key] = await check(cdpUrl, s, { ...(opts.signal ? { signal: opts.signal } : {}), timeoutMs });
  }
  await writeFileAtomic(join(dir, FINAL_PAGE_FILE), `${JSON.stringify(page, null, 2)}\n`);
  return page;
}

/** final_page.json of `dir`, or null when there is none (or it cannot be read). */
export async function readFinalPage(dir: string): Promise<FinalPage | null> {
  try {
    const r = finalPageSchema.safeParse(JSON.parse(await readFile(join(dir, FINAL_PAGE_FILE), 'utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** The verdict a stored page check gives (or null when the run holds none for that spec). */
export function storedCheck(page: FinalPage | null, spec: Extract<JudgeSpec, { type: 'expression' } | { type: 'dom' }>): PageCheck | null {
  return page?.checks[pageCheckKey(spec)] ?? null;
}

/** The text around the first occurrence of `needle` in `text` (40 characters each side). */
export function excerpt(text: string, needle: string): string | null {
  const i = text.indexOf(needle);
  if (i < 0) return null;
  return text.slice(Math.max(0, i - 40), i + needle.length + 40);
}

/** Verdict helper for the snapshot judges. */
export function snapshotVerdict(ok: boolean): Verdict {
  return ok ? 'pass' : 'fail';
}
