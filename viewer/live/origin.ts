/**
 * Who may drive a live run through `vncua serve`: a request from the viewer's own page. Browsers let any site
 * open a WebSocket or POST a form to 127.0.0.1, so a live view's socket and its takeover need a request whose
 * Origin (when the client sends one, as browsers do) names the host it was sent to, and, on a server bound to
 * loopback without a token, a Host that is a loopback name (a DNS-rebound name is refused).
 */
import type { IncomingMessage } from 'node:http';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Null when `req` may use the live API, else why not (for SERVE_ERR_CROSS_ORIGIN). */
export function liveRequestRefusal(req: IncomingMessage, opts: { loopbackOnly: boolean }): string | null {
  const host = req.headers.host ?? '';
  if (opts.loopbackOnly) {
    let name: string;
    try {
      name = new URL(`http://${host}`).hostname;
    } catch {
      return 'a request without a valid Host header';
    }
    if (!LOOPBACK_HOSTS.has(name)) return `a request for host "${host}": this viewer answers 127.0.0.1, localhost or [::1] only`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return null;
  let from: string;
  try {
    from = new URL(origin).host;
  } catch {
    return `a request from origin "${origin}"`;
  }
  return from === host ? null : `a request from another site (origin ${origin}): the live view and takeover answer the viewer's own page only`;
}
