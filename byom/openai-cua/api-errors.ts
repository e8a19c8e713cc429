/** Errors of an OpenAI SDK call → VncuaError with a MODEL_ERR_* code (the mapping is byom/sdk-errors.ts). */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { mapSdkError, type CallContext, type SdkErrors } from '../sdk-errors.ts';

export type { CallContext } from '../sdk-errors.ts';

/** The openai SDK's error classes and the Responses API's names. */
const OPENAI: SdkErrors = {
  api: 'The OpenAI API',
  replyKind: 'a Responses API response',
  keyEnv: 'OPENAI_API_KEY',
  baseUrlEnv: 'OPENAI_BASE_URL',
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  message(e) {
    const body = e.error as { message?: unknown } | undefined;
    return typeof body?.message === 'string' ? body.message : e.message;
  },
  details(e) {
    const err = e as APIError;
    return { type: err.type ?? null, api_code: err.code ?? null };
  },
};

/** Map what `client.responses.create()` threw to a VncuaError (or return `signal.reason` when the run was stopped). */
export function mapApiError(e: unknown, ctx: CallContext, signal: AbortSignal): unknown {
  return mapSdkError(OPENAI, e, ctx, signal);
}
