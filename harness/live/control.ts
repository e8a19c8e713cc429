/**
 * The contract between a running Agent and its live endpoint (harness/live/endpoint.ts): what a
 * watcher sees (the agent's own framebuffer, its status) and what a person taking over may do.
 * The Agent implements LiveControl; the endpoint serves it over WebSocket/HTTP on 127.0.0.1 and
 * announces itself in `<outputDir>/live.json` (LiveAnnouncement), which `vncua serve` reads.
 *
 * Nothing here opens a connection to the VNC server: a watcher is fed from the framebuffer the
 * agent's client already decodes, and a person's input goes through the agent's own connection.
 */
import type { Framebuffer } from '../rfb/framebuffer.ts';

/** What a live run is doing: acting, paused (by pause() or a person's takeover), asking for help, or over. */
export type LiveState = 'running' | 'paused' | 'help' | 'ended';

/** A live run's status, as the endpoint's events stream and `status` op report it. */
export interface LiveStatus {
  state: LiveState;
  /** Who holds mouse and keyboard (a takeover), else null. */
  holder: string | null;
  /** The agent's reason when it asked for help (state 'help'), else null. */
  help: string | null;
  /** act() calls made so far. */
  steps: number;
}

/** A person's input, as an RFB PointerEvent or KeyEvent carries it (RFC 6143 §7.5.4, §7.5.5). */
export type HumanInput = { type: 'pointer'; x: number; y: number; buttonMask: number } | { type: 'key'; keysym: number; down: boolean };

/** What a live endpoint needs from the run it serves. */
export interface LiveControl {
  /** The status now. */
  status(): LiveStatus;
  /** Calls `listener` on every status change; returns the unsubscribe function. */
  onStatus(listener: (status: LiveStatus) => void): () => void;
  /** The framebuffer of the agent's current VNC connection (null before the first connection or after the run). */
  framebuffer(): Framebuffer | null;
  /** Calls `listener` when the connection (so the framebuffer) changes, e.g. after a re-connection; returns the unsubscribe function. */
  onFramebuffer(listener: (fb: Framebuffer | null) => void): () => void;
  /** Pause the agent after its current step and give `who` mouse and keyboard; rejects with LIVE_ERR_TAKEN when another person holds them. */
  takeover(who: string): Promise<LiveStatus>;
  /** `who` gives control back and the agent's loop resumes; rejects with LIVE_ERR_NOT_HOLDER when `who` does not hold it. */
  handback(who: string): Promise<LiveStatus>;
  /** A person's input: sent to the desktop and recorded (actor "human") when `who` holds control, else dropped. */
  input(who: string, event: HumanInput): void;
}

/** `<outputDir>/live.json` (mode 0600) while a run is live; removed when it ends. */
export interface LiveAnnouncement {
  version: 1;
  /** The endpoint's base URL, e.g. `http://127.0.0.1:PORT` (WebSocket paths use the ws: scheme on the same port). */
  url: string;
  /** Required as `?token=` on every request. */
  token: string;
  pid: number;
  /** Epoch ms. */
  started_at: number;
}

/** Options of startLiveEndpoint(). */
export interface LiveEndpointOptions {
  /** The run's output directory: live.json goes there. */
  dir: string;
  control: LiveControl;
  /** Shown as the RFB desktop name. */
  title?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A started live endpoint. */
export interface LiveEndpoint {
  readonly url: string;
  readonly token: string;
  /** Stop serving, close every watcher, remove live.json. Never rejects. */
  close(): Promise<void>;
}
