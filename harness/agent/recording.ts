/**
 * The Agent's recording hook. The recording proxy lives in `recorder/`, which builds on `harness/`,
 * so the Agent cannot import it: the package root (and the CLI, and the eval runner) register it
 * here with `registerRecorder()`. With a recorder registered, `run()` starts one recording proxy
 * per run into `<outputDir>/recording/` and points its VNC connection at the proxy.
 */
import type { VncuaError } from '../errors.ts';

/** What a recorder factory is given. */
export interface RecorderStartOptions {
  /** The desktop's VNC endpoint (ws://, wss:// or tcp://). */
  upstreamUrl: string;
  /** Directory to record into (`<outputDir>/recording`). */
  dir: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A running recording: the client connects to `url`; `close()` finishes the files. */
export interface RecordingHandle {
  /** What the VNC client connects to instead of the desktop (e.g. tcp://127.0.0.1:PORT). */
  url: string;
  /**
   * When the latest connection through the recording could not reach the desktop: the error a direct
   * connection to the desktop would have given (RFB_ERR_CONNECT / RFB_ERR_TIMEOUT naming its URL); else null.
   */
  upstreamError?(): VncuaError | null;
  /** Stop relaying and finish the recording; idempotent. */
  close(): Promise<void>;
}

/** Starts a recording of one run. */
export type RecorderFactory = (options: RecorderStartOptions) => Promise<RecordingHandle>;

let registered: RecorderFactory | null = null;

/** Make `factory` the recorder every Agent run uses when its `record` option is on (the package root registers the recording proxy). */
export function registerRecorder(factory: RecorderFactory | null): void {
  registered = factory;
}

/** The registered recorder, or null. */
export function registeredRecorder(): RecorderFactory | null {
  return registered;
}
