/**
 * `/events`: a WebSocket of JSON text messages `{"type":"status", ...LiveStatus}`, sent once on
 * connect and on every status change. When the run ends (a status with state "ended") each socket
 * gets that final status and is closed (1000); a socket opened after that gets it and is closed too.
 */
import type WebSocket from 'ws';
import type { LiveControl, LiveStatus } from './control.ts';

/** The events streams of one endpoint. */
export class StatusStreams {
  private readonly sockets = new Set<WebSocket>();
  private readonly unsubscribe: () => void;
  private ended: LiveStatus | null = null;

  constructor(private readonly control: LiveControl) {
    this.unsubscribe = control.onStatus((s) => this.broadcast(s));
  }

  /** The open sockets (for close()). */
  get open(): ReadonlySet<WebSocket> {
    return this.sockets;
  }

  /** A new /events socket: its first message is the status now. */
  add(ws: WebSocket): void {
    ws.on('error', () => {});
    const status = this.ended ?? this.control.status();
    ws.send(message(status));
    if (status.state === 'ended') {
      ws.close(1000, 'the run ended');
      return;
    }
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
  }

  /** Stop following the control (the endpoint is closing). */
  close(): void {
    this.unsubscribe();
  }

  private broadcast(status: LiveStatus): void {
    const text = message(status);
    const end = status.state === 'ended';
    if (end) this.ended = { ...status };
    for (const ws of [...this.sockets]) {
      if (ws.readyState !== ws.OPEN) continue;
      ws.send(text);
      if (end) {
        this.sockets.delete(ws);
        ws.close(1000, 'the run ended');
      }
    }
  }
}

/** The JSON text of a status message. */
function message(s: LiveStatus): string {
  return JSON.stringify({ type: 'status', state: s.state, holder: s.holder, help: s.help, steps: s.steps });
}
