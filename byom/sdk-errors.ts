/**
 * Errors of an official model SDK call (`openai`, `@anthropic-ai/sdk`: both have the same error
 * classes) → VncuaError with a MODEL_ERR_* code, so that a failed model call ends the run with
 * status `error` and a code that says what went wrong. Cancellation (the run's signal) is passed
 * through untouched: the run ends as the signal says.
 *
 * | SDK error | code |
 * | --- | --- |
 * | 401, 403 | MODEL_ERR_AUTH |
 * | 429 (after the SDK's retries) | MODEL_ERR_RATE_LIMITED |
 * | 5xx (after retries) | MODEL_ERR_SERVER |
 * | 404 (unknown model, or not the API at that base URL) | MODEL_ERR_NOT_FOUND |
 * | other 4xx | MODEL_ERR_REQUEST |
 * | request timeout (after retries) | MODEL_ERR_TIMEOUT |
 * | connection refused / reset | MODEL_ERR_CONNECT |
 * | a body that is not JSON | MODEL_ERR_BAD_RESPONSE |
 */
import { VncuaError } from '../harness/errors.ts';

/** Where the call went, for messages. */
export interface CallContext {
  baseURL: string;
  model: string;
  /** Retries the client was allowed. */
  maxRetries: number;
  /** Request timeout in ms. */
  timeoutMs: number;
}

/** What an SDK's APIError carries that the messages use. */
export interface SdkApiError extends Error {
  status?: number | undefined;
  requestID?: string | null | undefined;
  error?: unknown;
}

type ErrorClass<T extends Error = Error> = abstract new (...args: never[]) => T;

/** One SDK's error classes and how its API is named in messages. */
export interface SdkErrors {
  /** "The OpenAI API", "The Anthropic API". */
  api: string;
  /** What a well-formed reply is: "a Responses API response". */
  replyKind: string;
  /** The environment variables of the key and the base URL, for hints. */
  keyEnv: string;
  baseUrlEnv: string;
  APIError: ErrorClass<SdkApiError>;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
  /** The API's own message from an APIError body, if any. */
  message(e: SdkApiError): string;
  /** Extra details of an APIError (the API's error type or code). */
  details(e: SdkApiError): Record<string, unknown>;
}

/** Map what a call of `sdk` threw to a VncuaError (or return `signal.reason` when the run was stopped). */
export function mapSdkError(sdk: SdkErrors, e: unknown, ctx: CallContext, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (e instanceof VncuaError || e instanceof sdk.APIUserAbortError) return e;
  const retries = ctx.maxRetries === 1 ? '1 retry' : `${ctx.maxRetries} retries`;
  if (e instanceof sdk.APIConnectionTimeoutError) {
    return new VncuaError(
      'MODEL_ERR_TIMEOUT',
      `${sdk.api} at ${ctx.baseURL} gave no answer within ${ctx.timeoutMs} ms (after ${retries}); raise requestTimeoutMs or check the endpoint.`,
      {
        cause: e,
        details: { baseURL: ctx.baseURL, timeoutMs: ctx.timeoutMs, maxRetries: ctx.maxRetries },
      },
    );
  }
  if (e instanceof sdk.APIConnectionError) {
    return new VncuaError(
      'MODEL_ERR_CONNECT',
      `${sdk.api} at ${ctx.baseURL} could not be reached (after ${retries}): ${e.message}. Check baseURL / ${sdk.baseUrlEnv} and the network.`,
      {
        cause: e,
        details: { baseURL: ctx.baseURL },
      },
    );
  }
  if (e instanceof sdk.APIError) {
    const status = e.status;
    const details = { status: status ?? null, ...sdk.details(e), request_id: e.requestID ?? null, model: ctx.model };
    const msg = sdk.message(e);
    if (status === 401 || status === 403) {
      return new VncuaError(
        'MODEL_ERR_AUTH',
        `${sdk.api} refused the credentials (HTTP ${status}: ${msg}). Set ${sdk.keyEnv} (or the apiKey option) to a key with access to ${ctx.model}.`,
        { cause: e, details },
      );
    }
    if (status === 429) {
      return new VncuaError('MODEL_ERR_RATE_LIMITED', `${sdk.api} still answered 429 after ${retries} (${msg}); wait, lower the number of workers, or raise maxRetries.`, {
        cause: e,
        details,
      });
    }
    if (status === 404) {
      return new VncuaError(
        'MODEL_ERR_NOT_FOUND',
        `${sdk.api} at ${ctx.baseURL} answered 404 (${msg}): no model "${ctx.model}" there, or that base URL is not the API's. Check the model name and baseURL / ${sdk.baseUrlEnv}.`,
        { cause: e, details },
      );
    }
    if (status !== undefined && status >= 500) {
      return new VncuaError('MODEL_ERR_SERVER', `${sdk.api} still answered HTTP ${status} after ${retries} (${msg}); try again later.`, { cause: e, details });
    }
    return new VncuaError('MODEL_ERR_REQUEST', `${sdk.api} rejected the request (HTTP ${status ?? '?'}: ${msg}).`, { cause: e, details });
  }
  // The SDKs parse the body themselves: a body that is not JSON surfaces as a SyntaxError (JSON
  // content type) or a TypeError (text body), never as an APIError.
  const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new VncuaError('MODEL_ERR_BAD_RESPONSE', `${sdk.api} at ${ctx.baseURL} answered with a body that is not ${sdk.replyKind} (${why}).`, {
    cause: e,
    details: { baseURL: ctx.baseURL },
  });
}
