/**
 * `POST /control` with `{"op":"takeover"|"handback"|"status","who":NAME}`: 200 with the LiveStatus;
 * 409 `{code:"LIVE_ERR_TAKEN", message, holder}` when another person holds control; 409
 * `{code:"LIVE_ERR_NOT_HOLDER", message}` for a hand-back by someone who does not; 400
 * `{code:"LIVE_ERR_BAD_REQUEST", message}` for a malformed body; 409 with AGENT_ERR_ILLEGAL_STATE when the
 * run cannot be taken over now (it ended, or is not running); 500 with the error's code otherwise.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { VncuaError, isVncuaError } from '../errors.ts';
import type { LiveControl } from './control.ts';
import { checkWho, errorBody, readJson, sendJson } from './http.ts';

const OPS = ['takeover', 'handback', 'status'] as const;

/** Answer one /control request. Never throws. */
export async function handleControl(req: IncomingMessage, res: ServerResponse, control: LiveControl): Promise<void> {
  try {
    if (req.method !== 'POST') {
      throw new VncuaError('LIVE_ERR_BAD_REQUEST', `/control takes POST, not ${req.method}`, { details: { status: 405 } });
    }
    const body = await readJson(req);
    const op = (body as { op?: unknown } | null)?.op;
    if (!OPS.includes(op as (typeof OPS)[number])) {
      throw new VncuaError('LIVE_ERR_BAD_REQUEST', `op must be one of ${OPS.join(', ')}, got ${JSON.stringify(op)}`);
    }
    if (op === 'status') return sendJson(res, 200, control.status());
    const who = checkWho((body as { who?: unknown }).who);
    const status = op === 'takeover' ? await control.takeover(who) : await control.handback(who);
    sendJson(res, 200, status);
  } catch (e) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (isVncuaError(e, 'LIVE_ERR_TAKEN')) {
      const holder = typeof e.details?.holder === 'string' ? e.details.holder : safeHolder(control);
      return sendJson(res, 409, errorBody(e, { holder }));
    }
    if (isVncuaError(e, 'LIVE_ERR_NOT_HOLDER')) return sendJson(res, 409, errorBody(e));
    // The run is not in a state to hand over (ended, or not started): a conflict with its state, not a server fault.
    if (isVncuaError(e, 'AGENT_ERR_ILLEGAL_STATE')) return sendJson(res, 409, errorBody(e));
    if (isVncuaError(e, 'LIVE_ERR_BAD_REQUEST')) return sendJson(res, typeof e.details?.status === 'number' ? e.details.status : 400, errorBody(e));
    if (isVncuaError(e)) return sendJson(res, 500, errorBody(e));
    sendJson(res, 500, { code: 'LIVE_ERR_ILLEGAL_STATE', message: `internal error in /control: ${(e as Error)?.message ?? String(e)}` });
  }
}

function safeHolder(control: LiveControl): string | null {
  try {
    return control.status().holder;
  } catch {
    return null;
  }
}
