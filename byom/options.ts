/**
 * Validation of byom options with zod: `parseOptions(schema, input, who)` turns the first issue into
 * AGENT_ERR_BAD_OPTIONS naming the field (the top-level key) and `who` (secrets not shown, URLs
 * redacted), and the schemas the adapters' options share.
 */
import { z } from 'zod';
import { VncuaError } from '../harness/errors.ts';
import { redactUrl } from '../harness/redact.ts';

/** The message of a bad screenshotSize. */
const SIZE_WHY = 'must be { width, height } in whole pixels, 1..16384 each';
const side = z.number({ error: SIZE_WHY }).int(SIZE_WHY).min(1, SIZE_WHY).max(16384, SIZE_WHY);

/** Schema of a screenshot size: `{ width, height }`, whole pixels 1..16384. */
export const screenshotSizeSchema = z.object({ width: side, height: side }, { error: SIZE_WHY });

/** A zod whole number in min..max (no upper bound by default), with a message naming the range. */
export function wholeNumber(min: number, max = Infinity): z.ZodNumber {
  const why = max === Infinity ? `must be a whole number >= ${min}` : `must be a whole number ${min}..${max}`;
  const n = z.number({ error: why }).int(why).min(min, why);
  return max === Infinity ? n : n.max(max, why);
}

/** A zod number > 0 of milliseconds. */
export const positiveMs = z.number({ error: 'must be a positive number of ms' }).positive('must be a positive number of ms');

/** A task the model can work on: required and not blank. */
export const requiredTask = z.string({ error: 'the task for the model is required' }).refine((t) => t.trim() !== '', 'the task for the model is required');

/** A superRefine check: an apiKey option, or the environment variable `envName`, is required. */
export function requireApiKey(envName: string): (o: { apiKey?: string | undefined }, ctx: z.RefinementCtx) => void {
  return (o, ctx) => {
    if (!(o.apiKey ?? process.env[envName])) {
      ctx.addIssue({ code: 'custom', path: ['apiKey'], message: `no API key: pass apiKey or set ${envName} (any non-empty string for a server that needs none)` });
    }
  };
}

/** A zod number >= 0. */
export const nonNegative = z.number({ error: 'must be a non-negative number' }).min(0, 'must be a non-negative number');

/** An http:// or https:// URL. */
export function httpUrl(why: string): z.ZodString {
  return z.string({ error: why }).refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), why);
}

/** Options whose values never go into an error's details. */
const SECRET_KEYS = new Set(['password', 'apiKey', 'token', 'clientSecret']);

/** Validate `input` with `schema`; AGENT_ERR_BAD_OPTIONS naming the first bad field (top-level key) and `who`, secrets not shown. */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown, who: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const field = issue.path.length > 0 ? String(issue.path[0]) : (unknownKey ?? '(options)');
  const raw = field !== '(options)' && typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : input;
  const value = SECRET_KEYS.has(field) ? (raw === undefined ? undefined : '(not shown)') : typeof raw === 'string' && /url|host|endpoint/i.test(field) ? redactUrl(raw) : raw;
  const why = unknownKey === undefined ? issue.message : issue.path.length > 0 ? `has an unknown key ${JSON.stringify(unknownKey)}` : `is not a known ${who} option`;
  throw new VncuaError('AGENT_ERR_BAD_OPTIONS', `${who} option ${field}: ${why}.`, { details: { field, value } });
}
