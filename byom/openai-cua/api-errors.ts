/**
 * Errors of an OpenAI SDK call → VncuaError with a MODEL_ERR_* code, so that a failed model call
 * ends the run with status `error` and a code that says what went wrong. Cancellation (the run's
 * signal) is passed through untouched: the run ends as the signal says.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { VncuaError } from '../../harness/errors.ts';

/** Where the call went, for messages. */
export interface CallContext {
  baseURL: string;
  model: string;
  /** Retries the client was allowed. */
  maxRetries: number;
  /** Request timeout in ms. */
  timeoutMs: number;
}

/** The API's own error message from an APIError body, if any. */
function apiMessage(e: APIError): string {
  const body = e.error as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : e.message;
}

/** Map what `client.responses.create()` threw to a VncuaError (or return `signal.reason` when the run was stopped). */
export function mapApiError(e: unknown, ctx: CallContext, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (e instanceof VncuaError) return e;
  const retries = ctx.maxRetries === 1 ? '1 retry' : `${ctx.maxRetries} retries`;
  if (e instanceof APIUserAbortError) return e;
  if (e instanceof APIConnectionTimeoutError) {
    return new VncuaError('MODEL_ERR_TIMEOUT', `The OpenAI API at ${ctx.baseURL} gave no answer within ${ctx.timeoutMs} ms (after ${retries}); raise requestTimeoutMs or check the endpoint.`, {
      cause: e,
      details: { baseURL: ctx.baseURL, timeoutMs: ctx.timeoutMs, maxRetries: ctx.maxRetries },
    });
  }
  if (e instanceof APIConnectionError) {
    return new VncuaError('MODEL_ERR_CONNECT', `The OpenAI API at ${ctx.baseURL} could not be reached (after ${retries}): ${e.message}. Check baseURL / OPENAI_BASE_URL and the network.`, {
      cause: e,
      details: { baseURL: ctx.baseURL },
    });
  }
  if (e instanceof APIError) {
    const status = e.status;
    const details = { status, type: e.type ?? null, api_code: e.code ?? null, request_id: e.requestID ?? null, model: ctx.model };
    const msg = apiMessage(e);
    if (status === 401 || status === 403) {
      return new VncuaError('MODEL_ERR_AUTH', `The OpenAI API refused the credentials (HTTP ${status}: ${msg}). Set OPENAI_API_KEY (or the apiKey option) to a key with access to ${ctx.model}.`, { cause: e, details });
    }
    if (status === 429) {
      return new VncuaError('MODEL_ERR_RATE_LIMITED', `The OpenAI API still answered 429 after ${retries} (${msg}); wait, lower the number of workers, or raise maxRetries.`, { cause: e, details });
    }
    if (status !== undefined && status >= 500) {
      return new VncuaError('MODEL_ERR_SERVER', `The OpenAI API still answered HTTP ${status} after ${retries} (${msg}); try again later.`, { cause: e, details });
    }
    return new VncuaError('MODEL_ERR_REQUEST', `The OpenAI API rejected the request (HTTP ${status ?? '?'}: ${msg}).`, { cause: e, details });
  }
  // The SDK parses the body itself: a body that is not JSON surfaces as a SyntaxError (JSON content
  // type) or a TypeError (text body), never as an APIError.
  const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new VncuaError('MODEL_ERR_BAD_RESPONSE', `The OpenAI API at ${ctx.baseURL} answered with a body that is not a Responses API response (${why}).`, {
    cause: e,
    details: { baseURL: ctx.baseURL },
  });
}
