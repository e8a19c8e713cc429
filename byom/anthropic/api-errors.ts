/**
 * Errors of an Anthropic SDK call → VncuaError with a MODEL_ERR_* code (the mapping is
 * byom/sdk-errors.ts; 529 "overloaded" is a 5xx: MODEL_ERR_SERVER).
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { mapSdkError, type CallContext, type SdkErrors } from '../sdk-errors.ts';

export type { CallContext } from '../sdk-errors.ts';

/** The Anthropic SDK's error classes and the Messages API's names. */
const ANTHROPIC: SdkErrors = {
  api: 'The Anthropic API',
  replyKind: 'a Messages API response',
  keyEnv: 'ANTHROPIC_API_KEY',
  baseUrlEnv: 'ANTHROPIC_BASE_URL',
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  // The body is `{ type: "error", error: { type, message } }`.
  message(e) {
    const body = e.error as { error?: { message?: unknown }; message?: unknown } | undefined;
    if (typeof body?.error?.message === 'string') return body.error.message;
    if (typeof body?.message === 'string') return body.message;
    return e.message;
  },
  // authentication_error, rate_limit_error, overloaded_error, …
  details(e) {
    const body = e.error as { error?: { type?: unknown } } | undefined;
    return { type: typeof body?.error?.type === 'string' ? body.error.type : null };
  },
};

/** Map what `client.beta.messages.create()` threw to a VncuaError (or return `signal.reason` when the run was stopped). */
export function mapApiError(e: unknown, ctx: CallContext, signal: AbortSignal): unknown {
  return mapSdkError(ANTHROPIC, e, ctx, signal);
}
