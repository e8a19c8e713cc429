/**
 * Errors of the `openai` SDK as VncuaErrors with stable codes, so a run that dies on the API ends
 * with a clear `error.code` in result.json (status `error`):
 * 401/403 → MODEL_ERR_AUTH, 429 → MODEL_ERR_RATE_LIMITED, 5xx → MODEL_ERR_SERVER (each after the
 * SDK's own retries), 404 → MODEL_ERR_NOT_FOUND, other 4xx → MODEL_ERR_REQUEST, timeout → MODEL_ERR_TIMEOUT, unreachable →
 * MODEL_ERR_CONNECT, a body that is not JSON → MODEL_ERR_BAD_RESPONSE. A cancelled call is passed
 * through unchanged (the run is ending anyway).
 */
import OpenAI from 'openai';
import { VncuaError, isVncuaError, type ErrorCode } from '../../harness/errors.ts';

/** The code for an HTTP status the API answered with. */
export function codeForStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return 'MODEL_ERR_AUTH';
  if (status === 404) return 'MODEL_ERR_NOT_FOUND';
  if (status === 429) return 'MODEL_ERR_RATE_LIMITED';
  if (status >= 500) return 'MODEL_ERR_SERVER';
  return 'MODEL_ERR_REQUEST';
}

/** What to do about each code, for the message. */
export const MODEL_ERROR_HINTS: Partial<Record<ErrorCode, string>> = {
  MODEL_ERR_AUTH: 'check the API key (or token) and that it may use this model',
  MODEL_ERR_RATE_LIMITED: 'the API kept rate-limiting after every retry; lower the request rate or raise the retry budget',
  MODEL_ERR_SERVER: 'the API kept failing after every retry; try again later',
  MODEL_ERR_NOT_FOUND: "no such model there, or baseURL is not the API's (it should end with /v1); check the model name and baseURL",
  MODEL_ERR_REQUEST: 'the API rejected the request; check the model name and that it accepts image input',
  MODEL_ERR_TIMEOUT: 'raise requestTimeoutMs or check that the server is answering',
  MODEL_ERR_CONNECT: 'check baseURL and that the server is running',
  MODEL_ERR_BAD_RESPONSE: 'check that baseURL points at an OpenAI-compatible chat completions API',
};

/** `e` (thrown by an SDK call to `url`) as a VncuaError; cancellations and VncuaErrors are returned unchanged. */
export function chatApiError(e: unknown, url: string): unknown {
  if (isVncuaError(e) || e instanceof OpenAI.APIUserAbortError) return e;
  let code: ErrorCode;
  let status: number | undefined;
  if (e instanceof OpenAI.APIConnectionTimeoutError) code = 'MODEL_ERR_TIMEOUT';
  else if (e instanceof OpenAI.APIConnectionError) code = 'MODEL_ERR_CONNECT';
  else if (e instanceof OpenAI.APIError && typeof e.status === 'number') {
    status = e.status;
    code = codeForStatus(e.status);
  } else if (e instanceof SyntaxError) code = 'MODEL_ERR_BAD_RESPONSE';
  else return e;
  const said = String((e as Error).message ?? '').slice(0, 300);
  const what = status !== undefined ? `HTTP ${status} (${said})` : code === 'MODEL_ERR_BAD_RESPONSE' ? 'a body that is not valid JSON' : `nothing usable (${said})`;
  return new VncuaError(code, `The chat completions API at ${url} answered ${what}: ${MODEL_ERROR_HINTS[code]}.`, {
    cause: e,
    details: { url, status },
  });
}
