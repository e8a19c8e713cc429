import { describe, expect, it } from 'vitest';
import { type ConnectionState, assertState, isFinalState, transition } from './state.ts';

const ALL: ConnectionState[] = ['awaitingVersion', 'awaitingSecurity', 'awaitingChallenge', 'awaitingSecurityResult', 'awaitingServerInit', 'connected', 'failed', 'closed'];
const illegal = expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' });

describe('connection state transitions', () => {
  it('allows the handshake paths of RFC 6143 and nothing else', () => {
    const legal = new Set([
      'awaitingVersion>awaitingSecurity',
      'awaitingSecurity>awaitingChallenge',
      'awaitingSecurity>awaitingSecurityResult',
      'awaitingSecurity>awaitingServerInit',
      'awaitingChallenge>awaitingSecurityResult',
      'awaitingSecurityResult>awaitingServerInit',
      'awaitingServerInit>connected',
    ]);
    for (const from of ALL) {
      for (const to of ALL) {
        const ok = legal.has(`${from}>${to}`) || (!isFinalState(from) && isFinalState(to));
        if (ok) expect(transition(from, to), `${from} → ${to}`).toBe(to);
        else expect(() => transition(from, to), `${from} → ${to}`).toThrow(illegal);
      }
    }
  });

  it('failed and closed are final', () => {
    expect(isFinalState('failed')).toBe(true);
    expect(isFinalState('closed')).toBe(true);
    expect(isFinalState('connected')).toBe(false);
    expect(() => transition('closed', 'failed')).toThrow(illegal);
  });

  it('assertState gates actions on the expected state', () => {
    expect(() => assertState('connected', 'connected', 'x')).not.toThrow();
    expect(() => assertState('awaitingVersion', 'connected', 'send a key event')).toThrow(illegal);
  });
});
