/**
 * The LLM judge: an OpenAI-compatible vision model (chat completions, through the official `openai`
 * SDK, loaded only when a judge calls it) is shown the task, the final screenshot and the step list, and
 * answers `{ "verdict": "pass" | "fail", "reason": "..." }` (parsed with zod; a ```json fence or text
 * around the object is tolerated). Anything else is JUDGE_ERR_BAD_ANSWER, a timeout JUDGE_ERR_TIMEOUT,
 * an HTTP error or a refused connection JUDGE_ERR_MODEL, a missing key JUDGE_ERR_NO_KEY: the verdict is
 * then unknown, never guessed. The key is read from the environment variable the spec names and never
 * appears in a message or a file.
 *
 * Cost: eval/ does not import byom/, so the caller passes `price(model, usage)` (the CLI passes
 * byom/pricing.ts's table); without it the judge records tokens and no cost.
 */
import { z } from 'zod';
import type { VncuaError } from '../../harness/errors.ts';
import type { Verdict } from './record.ts';
import type { LlmJudgeSpec } from './spec.ts';

/** A model's rates in USD per 1M tokens (the spec's `price`). */
export interface JudgePrice {
  input: number;
  output: number;
  cachedInput?: number | undefined;
}

/** USD of one call's usage (the API's `usage` object) for `model` at `price` when given (else the caller's table), or null when unknown. */
export type PriceFn = (model: string, usage: unknown, price?: JudgePrice) => number | null;

/** What the model is shown. */
export interface LlmJudgeInput {
  /** The task's goal. */
  goal: string;
  /** The page the task started on. */
  url?: string | undefined;
  /** One line per step (index, action, params, error). */
  steps: string[];
  /** The final screenshot, PNG bytes; null when the run has none (the model is told so). */
  screenshot: Uint8Array | null;
  /** How the run ended (result.json status), when known. */
  status?: string | undefined;
}

/** The judge's answer. */
export interface LlmJudgeAnswer {
  verdict: Verdict;
  reason: string;
  /** The model's raw answer (cut to 2000 characters), null when no answer came. */
  raw: string | null;
  model: string;
  /** The API's usage object, when it sent one. */
  usage: Record<string, unknown> | null;
  cost_usd: number | null;
  error: { code: string; message: string } | null;
}

/** Defaults of the LLM judge. */
export const LLM_DEFAULTS = { apiKeyEnv: 'OPENAI_API_KEY', timeoutMs: 60_000, maxRetries: 1 } as const;

/** The verdict the model must answer. */
export const llmVerdictSchema = z.object({ verdict: z.enum(['pass', 'fail']), reason: z.string().min(1) });

const SYSTEM = `You judge whether a computer-use agent completed a task in a web page. You are shown the task, the steps the agent took and a screenshot of the screen when it stopped. Judge from the screenshot and the steps whether the task is done as stated. Answer with one JSON object and nothing else: {"verdict": "pass" or "fail", "reason": "one sentence"}.`;

/** The model's text as a verdict, or the problem. */
export function parseLlmAnswer(text: string): { ok: z.infer<typeof llmVerdictSchema> } | { problem: string } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const body = (fenced ? fenced[1]! : text).trim();
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end < start) return { problem: 'no JSON object in the answer' };
  let data: unknown;
  try {
    data = JSON.parse(body.slice(start, end + 1));
  } catch (e) {
    return { problem: `not JSON (${(e as Error).message})` };
  }
  const r = llmVerdictSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    return { problem: `field "${i.path.join('.') || '(top)'}": ${i.message}` };
  }
  return { ok: r.data };
}

const cut = (s: string, n = 2000) => (s.length > n ? `${s.slice(0, n)}…` : s);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Ask the model (see the file comment). Never throws but on cancellation. */
export async function askLlmJudge(
  spec: Pick<LlmJudgeSpec, 'model' | 'baseUrl' | 'apiKeyEnv' | 'timeoutMs' | 'maxRetries' | 'price'> & { name?: string | undefined },
  input: LlmJudgeInput,
  opts: { signal?: AbortSignal; price?: PriceFn; env?: NodeJS.ProcessEnv } = {},
): Promise<LlmJudgeAnswer> {
  const judge = spec.name ?? 'llm';
  const base = { raw: null, model: spec.model, usage: null, cost_usd: null } as const;
  const unknown = (code: VncuaError['code'], message: string, more: Partial<LlmJudgeAnswer> = {}): LlmJudgeAnswer => ({
    ...base,
    verdict: 'unknown',
    reason: `${code}: ${message}`,
    error: { code, message },
    ...more,
  });
  const env = opts.env ?? process.env;
  const keyEnv = spec.apiKeyEnv ?? LLM_DEFAULTS.apiKeyEnv;
  const key = env[keyEnv];
  if (!key) return unknown('JUDGE_ERR_NO_KEY', `judge ${judge}: no API key in $${keyEnv}; set it (or the spec's apiKeyEnv) to call ${spec.model}`);
  const timeoutMs = spec.timeoutMs ?? LLM_DEFAULTS.timeoutMs;
  const { default: OpenAI, APIError, APIConnectionTimeoutError, APIUserAbortError } = await import('openai');
  const client = new OpenAI({ apiKey: key, ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}), maxRetries: spec.maxRetries ?? LLM_DEFAULTS.maxRetries, timeout: timeoutMs });
  const where = `${spec.model} at ${spec.baseUrl ?? 'the SDK default base URL'}`;
  const content: Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }> = [
    {
      type: 'text',
      text: [
        `Task: ${input.goal}`,
        ...(input.url ? [`Start page: ${input.url}`] : []),
        ...(input.status ? [`The run ended with status: ${input.status}`] : []),
        `Steps (${input.steps.length}):`,
        ...(input.steps.length > 0 ? input.steps : ['(none)']),
        input.screenshot ? 'The final screenshot follows.' : 'No final screenshot exists for this run.',
      ].join('\n'),
    },
  ];
  if (input.screenshot) content.push({ type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from(input.screenshot).toString('base64')}` } });
  let completion: Awaited<ReturnType<typeof client.chat.completions.create>> & { usage?: unknown; model?: string };
  try {
    completion = await client.chat.completions.create(
      {
        model: spec.model,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content },
        ],
        temperature: 0,
      },
      { ...(opts.signal ? { signal: opts.signal } : {}) },
    );
  } catch (e) {
    if (opts.signal?.aborted || e instanceof APIUserAbortError) throw opts.signal?.reason ?? e;
    if (e instanceof APIConnectionTimeoutError) return unknown('JUDGE_ERR_TIMEOUT', `judge ${judge}: ${where} did not answer within ${timeoutMs} ms`);
    if (e instanceof APIError) {
      const status = e.status;
      const what = status === undefined ? 'could not be reached' : `answered HTTP ${status}`;
      return unknown('JUDGE_ERR_MODEL', `judge ${judge}: ${where} ${what}${status === 401 || status === 403 ? ` (check $${keyEnv})` : ''}: ${oneLine(e.message).slice(0, 200)}`);
    }
    return unknown('JUDGE_ERR_MODEL', `judge ${judge}: the call to ${where} failed: ${oneLine(String((e as Error)?.message ?? e)).slice(0, 200)}`);
  }
  const usage = completion.usage && typeof completion.usage === 'object' ? (completion.usage as unknown as Record<string, unknown>) : null;
  const model = typeof completion.model === 'string' && completion.model ? completion.model : spec.model;
  const cost = usage && opts.price ? opts.price(model, usage, spec.price) : null;
  const raw = completion.choices?.[0]?.message?.content ?? null;
  const more = { raw: raw === null ? null : cut(raw), model, usage, cost_usd: cost };
  if (raw === null || raw.trim() === '') return unknown('JUDGE_ERR_BAD_ANSWER', `judge ${judge}: ${where} answered no text`, more);
  const parsed = parseLlmAnswer(raw);
  if ('problem' in parsed)
    return unknown(
      'JUDGE_ERR_BAD_ANSWER',
      `judge ${judge}: ${where} answered something that is not the verdict JSON (${parsed.problem}): ${JSON.stringify(cut(oneLine(raw), 120))}`,
      more,
    );
  return { ...more, verdict: parsed.ok.verdict, reason: oneLine(parsed.ok.reason), error: null };
}
