/**
 * One relayed connection: the viewer's endpoint on one side, the upstream dialed for it on the
 * other. Each chunk is stamped on arrival, forwarded at once, then recorded. A congested writer
 * (or a recording that fell behind the disk) pauses the reader feeding it. Whichever side ends
 * first, the other is closed after flushing; once both are closed the files are finished and
 * the manifest entry gets `closed_at` and `close_reason`.
 */
import type { KeyEventRedactor } from './redact-keys.ts';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import { now } from '../../harness/trace/clock.ts';
import { HIGH_WATER_BYTES, type Endpoint } from './endpoint.ts';
import type { Direction, ManifestConnection } from './format.ts';
import type { StreamFile } from './stream-file.ts';

/** How long a side may take to close politely before it is cut. */
export const CLOSE_GRACE_MS = 1000;

/** What a relay needs from the proxy. */
export interface RelayContext {
  /** Connect the upstream for this client (rejects with RECORDER_ERR_UPSTREAM_CONNECT). */
  dial(signal: AbortSignal): Promise<Endpoint>;
  /** Open files per direction (null when they could not be created). */
  files: Record<Direction, StreamFile | null>;
  /** This connection's manifest entry (updated in place). */
  entry: ManifestConnection;
  /** Count relayed bytes into the proxy's totals. */
  count(direction: Direction, bytes: number): void;
  /** Report an error (kept as the proxy's lastError). */
  report(error: VncuaError): void;
  /** Rewrite the manifest. */
  save(): Promise<void>;
  /** Redacts a secret's KeyEvents in the recorded client stream (redact-keys.ts). */
  redactor?: KeyEventRedactor;
}

/** Pauses an endpoint's reading while any reason holds. */
class Gate {
  private reasons = new Set<string>();
  constructor(private readonly ep: Endpoint) {}
  has(reason: string): boolean {
    return this.reasons.has(reason);
  }
  hold(reason: string): void {
    if (this.reasons.size === 0) this.ep.pause();
    this.reasons.add(reason);
  }
  release(reason: string): void {
    if (!this.reasons.delete(reason)) return;
    if (this.reasons.size === 0) this.ep.resume();
  }
}

/** A live relay; `done` resolves once both sides are closed and the recording is finished. */
export class Relay {
  readonly done: Promise<void>;
  private upstream: Endpoint | null = null;
  private reason: string | null = null;
  private errorCode: string | undefined;
  private readonly dialAbort = new AbortController();

  constructor(
    private readonly client: Endpoint,
    private readonly ctx: RelayContext,
  ) {
    this.done = this.run();
  }

  /** End the connection (the proxy is closing); resolves when done. */
  stop(reason = 'proxy closed'): Promise<void> {
    this.end(reason);
    return this.done;
  }

  private async run(): Promise<void> {
    const clientClosed = this.client.closed;
    // Read the viewer from the start, to notice it leaving while the upstream is dialed; RFB
    // viewers send nothing before the server's greeting, but keep whatever comes, in order.
    const early: Array<{ chunk: Buffer; t: number }> = [];
    let earlyBytes = 0;
    const clientGate = new Gate(this.client);
    let clientData = (chunk: Buffer) => {
      early.push({ chunk, t: now() });
      earlyBytes += chunk.byteLength;
      if (earlyBytes > HIGH_WATER_BYTES) clientGate.hold('dial');
    };
    this.client.start({ onData: (c) => clientData(c), onEnd: (e) => this.end(e ? `client error: ${e.message}` : 'client closed') });
    try {
      this.upstream = await this.ctx.dial(this.dialAbort.signal);
    } catch (e) {
      const err = isVncuaError(e) ? e : new VncuaError('RECORDER_ERR_UPSTREAM_CONNECT', String(e), { cause: e });
      if (this.reason === null) {
        this.ctx.report(err);
        this.end(err.message, err.code);
      }
    }
    const upstream = this.upstream;
    if (upstream && this.reason !== null) upstream.destroy();
    if (upstream && this.reason === null) {
      const toUpstream = this.pipe(clientGate, upstream, 'client');
      clientData = toUpstream;
      for (const { chunk, t } of early.splice(0)) toUpstream(chunk, t);
      clientGate.release('dial');
      const toClient = this.pipe(new Gate(upstream), this.client, 'server');
      upstream.start({ onData: (c) => toClient(c), onEnd: (e) => this.end(e ? `upstream error: ${e.message}` : 'upstream closed') });
    }
    await Promise.allSettled([clientClosed, upstream?.closed]);
    await this.finish();
  }

  /** A handler relaying chunks read through `gate` to `to` (stamped on arrival), recording them as `direction`. */
  private pipe(gate: Gate, to: Endpoint, direction: Direction): (chunk: Buffer, receivedAt?: number) => void {
    const file = this.ctx.files[direction];
    const entry = this.ctx.entry;
    return (chunk: Buffer, receivedAt?: number) => {
      if (this.reason !== null) return;
      const t = receivedAt ?? now();
      const ok = to.send(chunk);
      entry.bytes[direction] += chunk.byteLength;
      this.ctx.count(direction, chunk.byteLength);
      if (file) {
        const rec = direction === 'client' && this.ctx.redactor ? this.ctx.redactor.process(chunk) : chunk;
        if (rec.byteLength > 0) file.append(rec, t);
        if (file.congested && !gate.has('disk')) {
          gate.hold('disk');
          void file.whenDrained().then(() => gate.release('disk'));
        }
      }
      if (!ok && !gate.has('peer')) {
        gate.hold('peer');
        to.onDrain(() => gate.release('peer'));
      }
    };
  }

  private end(reason: string, code?: string): void {
    if (this.reason !== null) return;
    this.reason = reason;
    this.errorCode = code;
    this.dialAbort.abort();
    this.client.end(CLOSE_GRACE_MS);
    this.upstream?.end(CLOSE_GRACE_MS);
  }

  private async finish(): Promise<void> {
    const { files, entry } = this.ctx;
    const held = this.ctx.redactor?.flush();
    if (held && held.byteLength > 0) files.client?.append(held, now());
    await Promise.allSettled([files.client?.close(), files.server?.close()]);
    entry.closed_at = now();
    entry.close_reason = this.reason ?? 'closed';
    if (this.errorCode) entry.error_code = this.errorCode;
    await this.ctx.save().catch((e: unknown) => {
      if (isVncuaError(e)) this.ctx.report(e);
    });
  }
}
