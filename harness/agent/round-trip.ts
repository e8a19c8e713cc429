/**
 * Round trips for input pacing: "the server has read every message this client sent so far",
 * through VncClient.sync() (a 1x1 non-incremental FramebufferUpdateRequest answered). An abort
 * of the run's signal surfaces as AGENT_ERR_CANCELLED, as for every other step of an action.
 *
 * Measured on this machine (loopback, 1280x800): Xvnc answers in ~0.6 ms (median); x11vnc in
 * ~43 ms (median) with stalls up to ~360 ms, since it answers from its polling loop.
 */
import { type MapError, sleep as cancellableSleep } from '../cancel.ts';
import { VncuaError } from '../errors.ts';
import type { VncClient } from '../rfb/index.ts';

/** Default time a round trip may take before it fails with RFB_ERR_TIMEOUT. */
export const DEFAULT_SYNC_TIMEOUT_MS = 10_000;

/** Options of RoundTrip.sync(). */
export interface SyncOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** Round trips over one VncClient. */
export class RoundTrip {
  constructor(private readonly client: VncClient) {}

  /** Resolve once the server has read everything sent before this call. */
  async sync(options: SyncOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) throw abortReason(signal);
    try {
      await this.client.sync({ signal, timeoutMs: options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS });
    } catch (e) {
      if (signal?.aborted) throw abortReason(signal);
      throw e;
    }
  }
}

/** The error a cancelled wait rejects with: the signal's reason when it is a VncuaError, else AGENT_ERR_CANCELLED wrapping it. */
export function abortReason(signal: AbortSignal): VncuaError {
  return cancelledBy(signal.reason);
}

function cancelledBy(reason: unknown): VncuaError {
  if (reason instanceof VncuaError) return reason;
  return new VncuaError('AGENT_ERR_CANCELLED', "the action was cancelled through the run's AbortSignal", { cause: reason });
}

/** The agent's error mapper for harness/cancel.ts: an abort becomes abortReason()'s error (sleep has no timeout). */
const agentCancel: MapError = (c) => cancelledBy(c.kind === 'aborted' ? c.reason : undefined);

/** Sleep `ms`, rejecting at once with abortReason(signal) if it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return cancellableSleep(ms, signal, agentCancel);
}
