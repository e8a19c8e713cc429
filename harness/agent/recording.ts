/**
 * The Agent's recording hook. The recording proxy lives in `recorder/`, which builds on `harness/`,
 * so the Agent cannot import it: it is handed in, as the Agent's `recorder` option (the CLI and the
 * eval runner pass `recordingProxyRecorder` from recorder/recorder-factory.ts), or as the class's
 * `defaultRecorder` (set by the package root's Agent). With a recorder, `run()` starts one recording
 * per run into `<outputDir>/recording/` and points its VNC connection at it.
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
  /**
   * The next KeyEvents the client sends (these, in order) type a secret: the recording stores them redacted
   * (recorder/FORMAT.md, "Redacted key events"). Called before they are sent.
   */
  redactKeyEvents?(keys: ReadonlyArray<{ keysym: number; down: boolean }>): void;
  /** Stop relaying and finish the recording; idempotent. */
  close(): Promise<void>;
}

/** Starts a recording of one run. */
export type RecorderFactory = (options: RecorderStartOptions) => Promise<RecordingHandle>;
