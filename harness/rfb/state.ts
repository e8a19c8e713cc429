/**
 * The RFB connection's states and the ONE function that moves between them.
 * Every state change of a session goes through `transition()`; a move the table
 * does not list throws RFB_ERR_ILLEGAL_STATE.
 *
 *   awaitingVersion ─► awaitingSecurity ─┬─► awaitingChallenge ─► awaitingSecurityResult ─┐
 *                                        ├─► awaitingSecurityResult (3.8 + None) ─────────┤
 *                                        └─► awaitingServerInit (3.3/3.7 + None) ◄────────┘
 *   awaitingServerInit ─► connected
 *   any non-final state ─► failed | closed
 */
import { VncuaError } from '../errors.ts';

/** Where a connection is in its life. `failed` and `closed` are final. */
export type ConnectionState = 'awaitingVersion' | 'awaitingSecurity' | 'awaitingChallenge' | 'awaitingSecurityResult' | 'awaitingServerInit' | 'connected' | 'failed' | 'closed';

const ENDINGS = ['failed', 'closed'] as const;

/** Allowed moves, from each state. */
const ALLOWED: Readonly<Record<ConnectionState, readonly ConnectionState[]>> = {
  awaitingVersion: ['awaitingSecurity', ...ENDINGS],
  awaitingSecurity: ['awaitingChallenge', 'awaitingSecurityResult', 'awaitingServerInit', ...ENDINGS],
  awaitingChallenge: ['awaitingSecurityResult', ...ENDINGS],
  awaitingSecurityResult: ['awaitingServerInit', ...ENDINGS],
  awaitingServerInit: ['connected', ...ENDINGS],
  connected: [...ENDINGS],
  failed: [],
  closed: [],
};

/** True for the states a connection never leaves. */
export function isFinalState(s: ConnectionState): boolean {
  return s === 'failed' || s === 'closed';
}

/** The one transition function: returns `to`, or throws RFB_ERR_ILLEGAL_STATE when `from → to` is not allowed. */
export function transition(from: ConnectionState, to: ConnectionState): ConnectionState {
  if (!ALLOWED[from].includes(to)) {
    throw new VncuaError('RFB_ERR_ILLEGAL_STATE', `internal: the RFB connection cannot go from '${from}' to '${to}'`, { details: { from, to } });
  }
  return to;
}

/** Throw RFB_ERR_ILLEGAL_STATE unless the connection is in `expected` (used to gate client messages). */
export function assertState(current: ConnectionState, expected: ConnectionState, action: string): void {
  if (current !== expected) {
    const hint = isFinalState(current) ? 'the connection is over; connect again' : 'wait until connectVnc() has resolved';
    throw new VncuaError('RFB_ERR_ILLEGAL_STATE', `cannot ${action} while the connection is '${current}': ${hint}`, { details: { state: current, expected } });
  }
}
