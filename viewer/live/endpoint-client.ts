/**
 * `vncua serve`'s side of the live endpoint protocol (harness/live/endpoint.ts, /tmp/live-protocol.md): the
 * endpoint's URLs with its token (never shown to a browser), its `/control` op, and its `/events` stream.
 */
import WebSocket from 'ws';
import type { LiveAnnouncement, LiveStatus } from '../../harness/live/control.ts';
import { timeoutSignal } from '../../harness/cancel.ts';

/** What `/control` answered: the status, or the endpoint's refusal (LIVE_ERR_TAKEN with the holder, LIVE_ERR_NOT_HOLDER, ...), or no answer. */
export type ControlAnswer = { ok: true; status: LiveStatus } | { ok: false; http: number; code: string; message: string; holder?: string | null };

/** The endpoint's WebSocket URL of `path` (`/rfb`, `/events`) with the token and `query`. */
export function endpointWsUrl(a: LiveAnnouncement, path: string, query: Record<string, string> = {}): string {
  const u = new URL(path, a.url);
  u.protocol = 'ws:';
  u.searchParams.set('token', a.token);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.href;
}

/** The message of a run whose endpoint does not answer. */
export function unreachableMessage(dir: string, why: string): string {
  return `The live endpoint of run ${dir} does not answer (${why}): the run has just ended, or its runner crashed or hangs. Its steps so far are shown; reload once it has ended for the recorded trace.`;
}

/** POST `/control` {op, who}; never rejects (an unreachable endpoint answers SERVE_ERR_LIVE_UNREACHABLE). */
export async function endpointControl(
  a: LiveAnnouncement,
  dir: string,
  op: 'takeover' | 'handback' | 'status',
  who: string,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ControlAnswer> {
  const u = new URL('/control', a.url);
  u.searchParams.set('token', a.token);

  let res: Response;
  try {
    res = await fetch(u, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ op, who }),
      signal: timeoutSignal(opts.signal, opts.timeoutMs ?? 10_000),
    });
  } catch (e) {
    const why = (e as Error).name === 'TimeoutError' ? 'no answer in time' : ((e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message);
    return { ok: false, http: 502, code: 'SERVE_ERR_LIVE_UNREACHABLE', message: unreachableMessage(dir, why) };
  }
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // a body that is not JSON: the HTTP status speaks
  }
  if (res.ok) return { ok: true, status: body as unknown as LiveStatus };
  return {
    ok: false,
    http: res.status,
    code: typeof body.code === 'string' ? body.code : 'SERVE_ERR_LIVE_UNREACHABLE',
    message: typeof body.message === 'string' ? body.message : `the live endpoint answered HTTP ${res.status}`,
    ...('holder' in body ? { holder: (body.holder as string | null) ?? null } : {}),
  };
}

/** A subscription to an endpoint's `/events`. */
export interface EventsWatch {
  close(): void;
}

/**
 * Follow `/events`: `onStatus` for each status message; `onEnd(reason)` once, when the socket closes (after a
 * final "ended" status, or because the endpoint went away: `error` then says why), or the connection failed.
 */
export function watchEndpointEvents(
  a: LiveAnnouncement,
  handlers: { onStatus: (s: LiveStatus) => void; onEnd: (error: string | null) => void },
  opts: { timeoutMs?: number } = {},
): EventsWatch {
  const ws = new WebSocket(endpointWsUrl(a, '/events'), { handshakeTimeout: opts.timeoutMs ?? 10_000, perMessageDeflate: false });
  let ended = false;
  let sawEnded = false;
  let error: string | null = null;
  const end = () => {
    if (ended) return;
    ended = true;
    handlers.onEnd(sawEnded ? null : (error ?? 'the events stream closed before the run said it ended'));
  };
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let m: { type?: string } & Partial<LiveStatus>;
    try {
      m = JSON.parse(String(data)) as typeof m;
    } catch {
      return;
    }
    if (m.type !== 'status' || typeof m.state !== 'string') return;
    const { type: _t, ...status } = m;
    if (status.state === 'ended') sawEnded = true;
    handlers.onStatus(status as LiveStatus);
  });
  ws.on('unexpected-response', (_req, res) => {
    error = `HTTP ${res.statusCode}`;
    res.resume();
    ws.terminate();
  });
  ws.on('error', (e: Error & { code?: string }) => {
    error ??= e.code ?? e.message;
  });
  ws.on('close', end);
  return {
    close() {
      ended = true;
      ws.terminate();
    },
  };
}
