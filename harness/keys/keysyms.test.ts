import { describe, expect, it } from 'vitest';
import { isModifierKeysym, isOnUsKeymap, isShiftedAscii, KEYSYM, keysymForChar, keysymName, shiftedCounterpart } from './keysyms.ts';

const SHIFTED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ~!@#$%^&*()_+{}|:"<>?';
const ALL_ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));

describe('keysymForChar', () => {
  it('maps every printable ASCII character to its code (the X11 Latin-1 keysym)', () => {
    expect(ALL_ASCII).toHaveLength(95);
    for (const ch of ALL_ASCII) expect(keysymForChar(ch), ch).toBe(ch.charCodeAt(0));
  });

  it('uses legacy keysyms for Latin-1 and Unicode keysyms above U+00FF', () => {
    expect(keysymForChar('é')).toBe(0xe9);
    expect(keysymForChar('ß')).toBe(0xdf);
    expect(keysymForChar('\u00a0')).toBe(0xa0);
    expect(keysymForChar('ÿ')).toBe(0xff);
    expect(keysymForChar('Ÿ')).toBe(0x1000178);
    expect(keysymForChar('€')).toBe(0x10020ac);
    expect(keysymForChar('中')).toBe(0x1004e2d);
    expect(keysymForChar('😀')).toBe(0x101f600);
    expect(keysymForChar('\u200d')).toBe(0x100200d);
    expect(keysymForChar('\u{10fffd}')).toBe(0x110fffd);
  });

  it('gives no keysym for control characters, lone surrogates or multi-code-point strings', () => {
    for (const ch of ['\0', '\b', '\n', '\t', '\x1b', '\x7f', '\x80', '\x9f', '\ud83d', '\ude00', 'ab', '👍🏽', '']) {
      expect(keysymForChar(ch), JSON.stringify(ch)).toBeUndefined();
    }
  });
});

describe('isShiftedAscii / shiftedCounterpart', () => {
  it('is true for exactly the 47 US shifted characters', () => {
    const shifted = ALL_ASCII.filter(isShiftedAscii);
    expect(shifted.sort()).toEqual([...SHIFTED].sort());
    expect(isShiftedAscii('é')).toBe(false);
    expect(isShiftedAscii('É')).toBe(false);
  });

  it('maps each unshifted US key to its shifted character', () => {
    const pairs = '`~1!2@3#4$5%6^7&8*9(0)-_=+[{]}\\|;:\'",<.>/?aAzZ';
    for (let i = 0; i < pairs.length; i += 2) expect(shiftedCounterpart(pairs[i] ?? '')).toBe(pairs[i + 1]);
    expect(shiftedCounterpart('?')).toBe('?');
    expect(shiftedCounterpart('Q')).toBe('Q');
    expect(shiftedCounterpart(' ')).toBe(' ');
    expect(shiftedCounterpart('é')).toBe('é');
  });
});

describe('keymap facts', () => {
  it('knows which keysyms a US keymap already has', () => {
    expect(isOnUsKeymap(0x61)).toBe(true);
    expect(isOnUsKeymap(KEYSYM.Return)).toBe(true);
    expect(isOnUsKeymap(0xffc9)).toBe(true); // F12
    expect(isOnUsKeymap(0xffca)).toBe(false); // F13
    expect(isOnUsKeymap(0xe9)).toBe(false);
    expect(isOnUsKeymap(0x1004e2d)).toBe(false);
  });

  it('classifies modifiers', () => {
    for (const k of [KEYSYM.Shift_L, KEYSYM.Control_R, KEYSYM.Alt_L, KEYSYM.Super_L, KEYSYM.Meta_L, KEYSYM.ISO_Level3_Shift]) {
      expect(isModifierKeysym(k)).toBe(true);
    }
    for (const k of [KEYSYM.Caps_Lock, KEYSYM.Num_Lock, KEYSYM.Return, 0x61]) expect(isModifierKeysym(k)).toBe(false);
  });

  it('names keysyms readably', () => {
    expect(keysymName(0xff0d)).toBe('Return');
    expect(keysymName(0xffbe)).toBe('F1');
    expect(keysymName(0xffd5)).toBe('F24');
    expect(keysymName(0xffb7)).toBe('KP_7');
    expect(keysymName(0x3f)).toBe('?');
    expect(keysymName(0x101f600)).toBe('😀');
    expect(keysymName(0x12345)).toBe('0x12345');
  });
});
