import { describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { parseKeys } from './parse.ts';
import { isPause, keysymsToPrime, planKeyPress, planTypeText, PRIME_SETTLE_MS, type KeyStroke } from './plan.ts';

// Keysyms spelled out (keysymdef.h) so the tests do not reuse the table under test.
const SHIFT = 0xffe1;
const CTRL = 0xffe3;
const ALT = 0xffe9;
const RETURN = 0xff0d;
const TAB = 0xff09;

/** Compact notation: +k = press, -k = release, {p: ms} = pause. */
function compact(steps: KeyStroke[]): Array<number | string> {
  return steps.map((s) => (isPause(s) ? `pause${s.pauseMs}` : s.down ? `+${s.keysym.toString(16)}` : `-${s.keysym.toString(16)}`));
}
const tap = (k: number) => [`+${k.toString(16)}`, `-${k.toString(16)}`];
const shifted = (k: number) => [`+${SHIFT.toString(16)}`, ...tap(k), `-${SHIFT.toString(16)}`];
const primed = (k: number, mod = CTRL) => [`+${mod.toString(16)}`, ...tap(k), `-${mod.toString(16)}`];

function failure(fn: () => unknown): VncuaError {
  try {
    fn();
  } catch (e) {
    if (isVncuaError(e)) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('planTypeText: ASCII', () => {
  const SHIFTED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ~!@#$%^&*()_+{}|:"<>?';

  it('plans every printable ASCII character exactly, Shift only around the 47 shifted ones', () => {
    for (let code = 0x20; code <= 0x7e; code++) {
      const ch = String.fromCharCode(code);
      const expected = SHIFTED.includes(ch) ? shifted(code) : tap(code);
      expect(compact(planTypeText(ch)), JSON.stringify(ch)).toEqual(expected);
    }
  });

  it('spot-checks literal sequences', () => {
    expect(planTypeText('aA?')).toEqual([
      { keysym: 0x61, down: true },
      { keysym: 0x61, down: false },
      { keysym: 0xffe1, down: true },
      { keysym: 0x41, down: true },
      { keysym: 0x41, down: false },
      { keysym: 0xffe1, down: false },
      { keysym: 0xffe1, down: true },
      { keysym: 0x3f, down: true },
      { keysym: 0x3f, down: false },
      { keysym: 0xffe1, down: false },
    ]);
    expect(compact(planTypeText('Hi!'))).toEqual([...shifted(0x48), ...tap(0x69), ...shifted(0x21)]);
  });

  it('plans all of printable ASCII in one string without priming', () => {
    const all = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    const plan = planTypeText(all);
    expect(plan.some(isPause)).toBe(false);
    expect(plan).toHaveLength(95 * 2 + 47 * 2);
  });

  it('types newline, CRLF, CR and tab as Return / Tab', () => {
    expect(compact(planTypeText('a\nb'))).toEqual([...tap(0x61), ...tap(RETURN), ...tap(0x62)]);
    expect(compact(planTypeText('a\r\nb'))).toEqual([...tap(0x61), ...tap(RETURN), ...tap(0x62)]);
    expect(compact(planTypeText('a\rb'))).toEqual([...tap(0x61), ...tap(RETURN), ...tap(0x62)]);
    expect(compact(planTypeText('\n\n'))).toEqual([...tap(RETURN), ...tap(RETURN)]);
    expect(compact(planTypeText('\r\r\n'))).toEqual([...tap(RETURN), ...tap(RETURN)]);
    expect(compact(planTypeText('\t'))).toEqual(tap(TAB));
    expect(planTypeText('')).toEqual([]);
  });
});

describe('planTypeText: Unicode', () => {
  it('uses legacy keysyms for Latin-1 and primes them once with Ctrl, then pauses', () => {
    expect(compact(planTypeText('éé'))).toEqual([...primed(0xe9), `pause${PRIME_SETTLE_MS}`, ...tap(0xe9), ...tap(0xe9)]);
  });

  it('iterates code points, not UTF-16 units, for astral characters', () => {
    const plan = planTypeText('😀', { prime: false });
    expect(compact(plan)).toEqual(tap(0x101f600));
  });

  it('types ZWJ sequences, skin tones, flags and combining marks one keysym per code point', () => {
    const cases: Array<[string, number[]]> = [
      ['👨‍👩‍👧', [0x101f468, 0x100200d, 0x101f469, 0x100200d, 0x101f467]],
      ['👍🏽', [0x101f44d, 0x101f3fd]],
      ['🇫🇷', [0x101f1eb, 0x101f1f7]],
      ['e\u0301', [0x65, 0x1000301]],
      ['❤️', [0x1002764, 0x100fe0f]],
      ['中文', [0x1004e2d, 0x1006587]],
    ];
    for (const [text, keysyms] of cases) {
      expect(compact(planTypeText(text, { prime: false })), text).toEqual(keysyms.flatMap(tap));
    }
  });

  it('primes each distinct non-US keysym once, in first-use order, before typing', () => {
    const plan = planTypeText('a👨‍👩‍👧é');
    const head = [0x101f468, 0x100200d, 0x101f469, 0x101f467, 0xe9].flatMap((k) => primed(k));
    const body = [0x61, 0x101f468, 0x100200d, 0x101f469, 0x100200d, 0x101f467, 0xe9].flatMap(tap);
    expect(compact(plan)).toEqual([...head, `pause${PRIME_SETTLE_MS}`, ...body]);
  });

  it('skips keysyms the caller already primed, and honours settleMs', () => {
    expect(compact(planTypeText('éü', { alreadyMapped: new Set([0xe9]), settleMs: 7 }))).toEqual([...primed(0xfc), 'pause7', ...tap(0xe9), ...tap(0xfc)]);
    expect(compact(planTypeText('é', { alreadyMapped: new Set([0xe9]) }))).toEqual(tap(0xe9));
    expect(compact(planTypeText('é', { settleMs: 0 }))).toEqual([...primed(0xe9), ...tap(0xe9)]);
    expect(failure(() => planTypeText('é', { settleMs: -1 })).code).toBe('ACTION_ERR_BAD_ARGUMENT');
  });

  it('keysymsToPrime keeps only keysyms missing from the US keymap', () => {
    expect(keysymsToPrime([0x61, 0xff0d, 0xe9, 0xffca, 0xe9, 0x1004e2d], new Set([0x1004e2d]))).toEqual([0xe9, 0xffca]);
  });
});

describe('planTypeText: errors', () => {
  it('rejects control characters other than \\n \\r \\t, naming the code point and index', () => {
    for (const [text, cp, index] of [
      ['ab\bc', 8, 2],
      ['\0', 0, 0],
      ['x\x1b', 0x1b, 1],
      ['\x7f', 0x7f, 0],
      ['😀\x85', 0x85, 2],
    ] as const) {
      const e = failure(() => planTypeText(text));
      expect(e.code, JSON.stringify(text)).toBe('ACTION_ERR_BAD_ARGUMENT');
      expect(e.details?.argument).toBe('text');
      expect(e.details?.codePoint).toBe(cp);
      expect(e.details?.index).toBe(index);
    }
  });

  it('rejects lone surrogates', () => {
    const e = failure(() => planTypeText('a\ud83d'));
    expect(e.code).toBe('ACTION_ERR_BAD_ARGUMENT');
    expect(e.details?.codePoint).toBe(0xd83d);
  });
});

describe('planKeyPress', () => {
  it('presses a chord in order and releases it in reverse', () => {
    expect(compact(planKeyPress(parseKeys('ctrl+shift+p')))).toEqual([
      `+${CTRL.toString(16)}`,
      `+${SHIFT.toString(16)}`,
      '+50',
      '-50',
      `-${SHIFT.toString(16)}`,
      `-${CTRL.toString(16)}`,
    ]);
  });

  it('presses a sequence one chord after another', () => {
    expect(compact(planKeyPress(parseKeys('-1?')))).toEqual([...tap(0x2d), ...tap(0x31), ...shifted(0x3f)]);
  });

  it('primes non-US keys with a modifier the combo does not use', () => {
    expect(compact(planKeyPress(parseKeys('é')))).toEqual([...primed(0xe9), `pause${PRIME_SETTLE_MS}`, ...tap(0xe9)]);
    expect(compact(planKeyPress(parseKeys('ctrl+é')))).toEqual([...primed(0xe9, ALT), `pause${PRIME_SETTLE_MS}`, `+${CTRL.toString(16)}`, '+e9', '-e9', `-${CTRL.toString(16)}`]);
    expect(compact(planKeyPress(parseKeys('F13')))).toEqual([...primed(0xffca), `pause${PRIME_SETTLE_MS}`, ...tap(0xffca)]);
    expect(planKeyPress(parseKeys('F12')).some(isPause)).toBe(false);
  });
});
