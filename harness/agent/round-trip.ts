/**
 * Round trips for input pacing: "the server has read every message this client sent so far",
 * through VncClient.sync() (a 1x1 non-incremental FramebufferUpdateRequest answered). An abort
 * of the run's signal surfaces as AGENT_ERR_CANCELLED, as for every other step of an action.
 *
 * Measured on this machine (loopback, 1280x800): Xvnc answers in ~0.6 ms (median); x11vnc in
 * ~43 ms (median) with stalls up to ~360 ms, since it answers from its polling loop.
 */
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

  /** Always true: VncClient.sync() is a real round trip. */
  get exact(): boolean {
    return true;
  }

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
  const r: unknown = signal.reason;
  if (r instanceof VncuaError) return r;
  return new VncuaError('AGENT_ERR_CANCELLED', 'the action was cancelled through the run\'s AbortSignal', { cause: r });
}

/** Sleep `ms`, rejecting at once with the signal's reason if it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
