/**
 * startRecordingProxy(): a local VNC proxy that records every byte it relays. It listens on
 * 127.0.0.1 twice (OS-assigned ports): raw TCP for our own client (`url`, tcp://) and WebSocket
 * for noVNC-style viewers (`wsUrl`, ws://, binary frames, any subprotocol). For each viewer it
 * dials the upstream (ws://, wss:// or tcp://) and records both directions into `dir` as
 * described in recorder/FORMAT.md.
 */
import { KeyEventRedactor, type ExpectedKey } from './redact-keys.ts';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { race } from '../../harness/cancel.ts';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import { redactUrl } from '../../harness/redact.ts';
import { parseVncUrl, type TlsOptions, type VncTarget } from '../../harness/rfb/transport.ts';
import { now } from '../../harness/trace/clock.ts';
import { type Endpoint, tcpEndpoint, wsEndpoint } from './endpoint.ts';
import { type Direction, MANIFEST_FILE, type ManifestConnection, isStreamFileName, streamFileName } from './format.ts';
import { ManifestFile } from './manifest.ts';
import { Relay } from './relay.ts';
import { StreamFile, type WriteMode } from './stream-file.ts';
import { dialUpstream, directError } from './upstream.ts';

/** Default timeout of startRecordingProxy(), ms. */
export const DEFAULT_START_TIMEOUT_MS = 10_000;
/** Default timeout of each upstream connection attempt, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Recorded bytes that may wait for the disk before the relay pauses that direction's reader. */
const MAX_PENDING_RECORD_BYTES = 8 * 1024 * 1024;

/** Options of startRecordingProxy(). */
export interface RecordingProxyOptions {
  /** The VNC endpoint to relay to: ws://, wss:// or tcp://host:port. */
  upstream: string;
  /** Directory to record into (created if missing; a previous recording there is replaced). */
  dir: string;
  /** Cancels the start (RECORDER_ERR_ABORTED); it does not stop a started proxy: call close(). */
  signal?: AbortSignal;
  /** Give up starting after this many ms (default 10 000; RECORDER_ERR_TIMEOUT). */
  timeoutMs?: number;
  /** Origin header sent to a ws:// / wss:// upstream (default http(s)://host:port of the URL; x11vnc wants one). */
  wsOrigin?: string;
  /** TLS options for a wss:// upstream. */
  tls?: TlsOptions;
  /** Give up dialing the upstream for a viewer after this many ms (default 10 000). */
  connectTimeoutMs?: number;
  /**
   * How recorded chunks reach the disk: 'sync' (default: each chunk and its time record are in the
   * kernel before the next event is handled, so a kill -9 loses at most the chunk being handled) or
   * 'async' (written by the thread pool, off the event loop; a slow disk cannot stall the relay, but
   * up to 8 MiB handed to the thread pool can be lost to a kill -9). See bench/proxy-overhead.ts.
   */
  writes?: WriteMode;
}

/** A running recording proxy. */
export interface RecordingProxy {
  /** What our client connects to: tcp://127.0.0.1:PORT. */
  readonly url: string;
  /** For WebSocket viewers (noVNC etc.): ws://127.0.0.1:PORT. */
  readonly wsUrl: string;
  /** The recording directory. */
  readonly dir: string;
  /** Viewer connections accepted so far. */
  readonly connections: number;
  /** Bytes relayed so far: `client` = viewer → server, `server` = server → viewer. */
  readonly bytes: { client: number; server: number };
  /** The last error met while running (a failed upstream dial, a failed write), or null. */
  readonly lastError: VncuaError | null;
  /**
   * When the upstream dial of the latest viewer connection failed: the error a direct connection to
   * the upstream would have given (RFB_ERR_CONNECT with the cause, or RFB_ERR_TIMEOUT, naming the
   * upstream URL), so a client can report the desktop's URL and the real cause; else null.
   */
  upstreamError(): VncuaError | null;
  /** The next KeyEvents the client sends (these, in order) type a secret: recorded redacted (redact-keys.ts). */
  redactKeyEvents(keys: readonly ExpectedKey[]): void;
  /** Stop listening, close every connection, finish the files and recording.json. Idempotent; never rejects. */
  close(): Promise<void>;
}

/** Start a recording proxy in front of `upstream`; resolves once both ports listen and recording.json exists. */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const timeoutMs = checkMs(options.timeoutMs, 'timeoutMs') ?? DEFAULT_START_TIMEOUT_MS;
  const connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs') ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (options.writes !== undefined && options.writes !== 'async' && options.writes !== 'sync') {
    throw new VncuaError('RECORDER_ERR_BAD_ARGUMENT', `writes must be 'async' or 'sync', got ${JSON.stringify(options.writes)}`, { details: { writes: options.writes } });
  }
  let target: VncTarget;
  try {
    target = parseVncUrl(options.upstream);
  } catch (cause) {
    throw new VncuaError(
      'RECORDER_ERR_BAD_UPSTREAM',
      `the recording proxy cannot relay to ${redactUrl(options.upstream)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
        details: { upstream: redactUrl(options.upstream) },
      },
    );
  }
  const signal = options.signal;
  if (signal?.aborted) throw abortedError(signal.reason);

  const proxy = new RecordingProxyServer(target, options, connectTimeoutMs);
  try {
    await race(proxy.start(), {
      signal,
      timeoutMs,
      mapError: (c) =>
        c.kind === 'timeout'
          ? new VncuaError('RECORDER_ERR_TIMEOUT', `the recording proxy did not start within ${c.timeoutMs} ms`, { details: { timeoutMs: c.timeoutMs } })
          : abortedError(c.reason),
    });
  } catch (e) {
    await proxy.close();
    throw e;
  }
  return proxy;
}

function checkMs(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && value > 0) return value;
  throw new VncuaError('RECORDER_ERR_BAD_ARGUMENT', `${name} must be a positive number of milliseconds (or Infinity), got ${String(value)}`, { details: { [name]: value } });
}

function abortedError(reason: unknown): VncuaError {
  return new VncuaError('RECORDER_ERR_ABORTED', 'starting the recording proxy was cancelled through its AbortSignal; nothing was left listening', { cause: reason });
}

function dirError(dir: string, cause: unknown): VncuaError {
  return new VncuaError(
    'RECORDER_ERR_DIR',
    `cannot record into ${dir}: ${cause instanceof Error ? cause.message : String(cause)}; pass a directory that can be created and written`,
    {
      cause,
      details: { dir },
    },
  );
}

class RecordingProxyServer implements RecordingProxy {
  url = '';
  wsUrl = '';
  readonly dir: string;
  connections = 0;
  readonly bytes = { client: 0, server: 0 };
  lastError: VncuaError | null = null;
  /** The latest failed upstream dial and its connection's index. */
  private dialFailure: { index: number; error: VncuaError } | null = null;
  private readonly manifest: ManifestFile;
  private readonly relays = new Set<Relay>();
  private readonly tcpServer = net.createServer({ noDelay: true });
  private readonly httpServer = http.createServer();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    clientTracking: false,
    // Any subprotocol the viewer offers ("binary" preferred): the bytes are the same.
    handleProtocols: (protocols) => (protocols.has('binary') ? 'binary' : (protocols.values().next().value ?? false)),
  });
  private closing: Promise<void> | null = null;
  private starting: Promise<void> | null = null;

  constructor(
    private readonly target: VncTarget,
    private readonly options: RecordingProxyOptions,
    private readonly connectTimeoutMs: number,
  ) {
    this.dir = options.dir;
    // On disk: scheme, host and port only (a desktop's URL holds its token in the path).
    this.manifest = new ManifestFile(options.dir, redactUrl(options.upstream));
    this.tcpServer.on('connection', (socket) => this.accept(tcpEndpoint(socket)));
    this.tcpServer.on('error', () => {});
    this.httpServer.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
      res.end('This is a VNC recording proxy: connect with a WebSocket (binary frames).\n');
    });
    this.httpServer.on('upgrade', (req, socket, head) => {
      if (this.closing) {
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(wsEndpoint(ws, socket)));
    });
    this.httpServer.on('error', () => {});
  }

  /** Prepare the directory, write an empty recording.json, listen on both ports. */
  start(): Promise<void> {
    this.starting ??= this.prepare();
    return this.starting;
  }

  private async prepare(): Promise<void> {
    const dir = this.options.dir;
    try {
      mkdirSync(dir, { recursive: true });
      for (const name of readdirSync(dir)) if (name === MANIFEST_FILE || isStreamFileName(name)) rmSync(join(dir, name), { force: true });
    } catch (e) {
      throw dirError(dir, e);
    }
    try {
      await this.manifest.save();
    } catch (e) {
      throw dirError(dir, e);
    }
    const listen = (server: net.Server) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
          server.off('error', reject);
          resolve((server.address() as net.AddressInfo).port);
        });
      });
    const [tcpPort, wsPort] = await Promise.all([listen(this.tcpServer), listen(this.httpServer)]);
    this.url = `tcp://127.0.0.1:${tcpPort}`;
    this.wsUrl = `ws://127.0.0.1:${wsPort}`;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.starting?.catch(() => {});
      const tcpClosed = new Promise<void>((r) => (this.tcpServer.listening ? this.tcpServer.close(() => r()) : r()));
      const httpClosed = new Promise<void>((r) => (this.httpServer.listening ? this.httpServer.close(() => r()) : r()));
      await Promise.allSettled([...this.relays].map((r) => r.stop('proxy closed')));
      this.httpServer.closeAllConnections();
      await Promise.allSettled([tcpClosed, httpClosed]);
      if (this.url) await this.manifest.save().catch((e: unknown) => this.report(e));
    })();
    return this.closing;
  }

  /** The latest connection's key redactor (the Agent's connection). */
  private redactor: KeyEventRedactor | null = null;

  /** The next KeyEvents the client sends (these, in order) type a secret: recorded redacted (redact-keys.ts). */
  redactKeyEvents(keys: readonly ExpectedKey[]): void {
    this.redactor?.expect(keys);
  }

  upstreamError(): VncuaError | null {
    const f = this.dialFailure;
    return f && f.index === this.connections - 1 ? directError(f.error, this.target) : null;
  }

  private report(e: unknown): void {
    this.lastError = isVncuaError(e) ? e : new VncuaError('RECORDER_ERR_WRITE', String(e), { cause: e });
  }

  private accept(client: Endpoint): void {
    if (this.closing) {
      client.destroy();
      return;
    }
    const index = this.connections++;
    const entry: ManifestConnection = { index, opened_at: now(), closed_at: null, client_transport: client.transport, bytes: { client: 0, server: 0 } };
    this.manifest.connections.push(entry);
    const files: Record<Direction, StreamFile | null> = { client: this.openFile('client', entry), server: this.openFile('server', entry) };
    const redactor = new KeyEventRedactor();
    this.redactor = redactor;
    const relay = new Relay(client, {
      redactor,
      dial: (signal) =>
        dialUpstream(this.target, { wsOrigin: this.options.wsOrigin, tls: this.options.tls, timeoutMs: this.connectTimeoutMs, signal }).catch((e: unknown) => {
          if (isVncuaError(e)) this.dialFailure = { index, error: e };
          throw e;
        }),
      files,
      entry,
      count: (direction, n) => {
        this.bytes[direction] += n;
      },
      report: (e) => this.report(e),
      save: () => this.manifest.save(),
    });
    this.relays.add(relay);
    void relay.done.finally(() => this.relays.delete(relay));
    this.manifest.save().catch((e: unknown) => this.report(e));
  }

  private openFile(direction: Direction, entry: ManifestConnection): StreamFile | null {
    const dataPath = join(this.dir, streamFileName(direction, entry.index, 'rfb'));
    const timePath = join(this.dir, streamFileName(direction, entry.index, 'time'));
    const onError = (e: Error) => {
      entry.write_error ??= `${direction}: ${e.message}`;
      this.report(
        new VncuaError(
          'RECORDER_ERR_WRITE',
          `could not record the ${direction} stream of connection ${entry.index} into ${this.dir}: ${e.message}; relaying goes on without recording it`,
          {
            cause: e,
            details: { dir: this.dir, index: entry.index, direction },
          },
        ),
      );
    };
    try {
      return StreamFile.open(dataPath, timePath, { mode: this.options.writes ?? 'sync', maxPendingBytes: MAX_PENDING_RECORD_BYTES, onError });
    } catch (e) {
      onError(e instanceof Error ? e : new Error(String(e)));
      return null;
    }
  }
}
