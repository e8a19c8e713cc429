/**
 * Infra failures: what is the desktop's fault, not the agent's. Such a task attempt is retried, and
 * a task that still fails is written as `infra_error`, which scores list apart and never count as an
 * agent failure.
 *
 * A run result is infra when its status is `infra_error`, or `error` with one of these codes:
 * - AGENT_ERR_CONNECTION_LOST (the VNC connection dropped and the reconnection failed),
 * - RFB_ERR_* (the VNC transport or server failed),
 * - DESKTOP_ERR_* (the desktop failed to start or died),
 * - PAGE_ERR_* (the task page never became ready: refused, DNS, TLS, an HTTP status >= 400, blank,
 *   a DOM that never settles: harness/cdp/page-ready.ts),
 * - EVAL_ERR_DESKTOP_LOST (the runner found the desktop dead after the run: Chromium crashed),
 * - GUARD_ERR_START, GUARD_ERR_LOST (the navigation guard could not attach to the desktop's Chromium, or lost it),
 * - QUEUE_ERR_RATE_GATE (the rate gate's Redis answered an error: the model call was never made).
 *
 * Configuration errors are neither the agent's nor the desktop's: every run would fail the same way
 * (a wrong API key, an unknown model or endpoint, bad agent arguments). The first one stops the suite.
 */
import type { RunResult } from '../harness/trace/schema.ts';

/** True when an error code means the desktop (not the agent) failed. */
export function isInfraErrorCode(code: string | undefined): boolean {
  if (!code) return false;
  return (
    code === 'AGENT_ERR_CONNECTION_LOST' ||
    code === 'EVAL_ERR_DESKTOP_LOST' ||
    code === 'GUARD_ERR_START' ||
    code === 'GUARD_ERR_LOST' ||
    code === 'QUEUE_ERR_RATE_GATE' ||
    code.startsWith('RFB_ERR_') ||
    code.startsWith('DESKTOP_ERR_') ||
    code.startsWith('PAGE_ERR_')
  );
}

/**
 * Codes that mean the configuration is wrong, the same for every run: the model API refused the key
 * (MODEL_ERR_AUTH) or knows no such model / endpoint (MODEL_ERR_NOT_FOUND), or the agent could not be
 * built from its arguments and options (CLI_ERR_BAD_ARGS, CLI_ERR_BAD_AGENT, AGENT_ERR_BAD_OPTIONS, a malformed
 * allowedDomains / blockedDomains pattern GUARD_ERR_BAD_PATTERN, GUARD_ERR_NO_CDP).
 */
export const CONFIG_ERROR_CODES: ReadonlySet<string> = new Set([
  'MODEL_ERR_AUTH',
  'MODEL_ERR_NOT_FOUND',
  'CLI_ERR_BAD_ARGS',
  'CLI_ERR_BAD_AGENT',
  'AGENT_ERR_BAD_OPTIONS',
  'GUARD_ERR_BAD_PATTERN',
  'GUARD_ERR_NO_CDP',
]);

/** True when an error code means the configuration is wrong (the suite stops: runner.ts). */
export function isConfigErrorCode(code: string | undefined): boolean {
  return code !== undefined && CONFIG_ERROR_CODES.has(code);
}

/** The infra error of a run result, or null when the result is the agent's own. */
export function infraErrorOf(result: Pick<RunResult, 'status' | 'error'>): { code: string; message: string } | null {
  if (result.status === 'infra_error') return result.error ?? { code: 'EVAL_ERR_DESKTOP_LOST', message: 'infra error' };
  if (result.status === 'error' && result.error && isInfraErrorCode(result.error.code)) return result.error;
  return null;
}

/**
 * True when a result on disk is a finished task for the runner (skipped unless --rerun): any status
 * but `cancelled` (the runner was stopped) and infra failures (retried on the next run).
 */
export function isFinishedResult(result: Pick<RunResult, 'status' | 'error'>): boolean {
  return result.status !== 'cancelled' && infraErrorOf(result) === null;
}
