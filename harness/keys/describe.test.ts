import { describe, expect, it } from 'vitest';
import { charOfKeysym, chordName, keyName } from './describe.ts';
import { KEYSYM, KEYSYM_F1, KEYSYM_KP_0, UNICODE_KEYSYM_BASE } from './keysyms.ts';
import { parseKeys } from './parse.ts';

/** The keysyms parseKeys holds down for `keys` (one chord). */
function pressed(keys: string): number[] {
  const c = parseKeys(keys);
  expect(c.kind, keys).toBe('chord');
  return c.chords[0]!.keysyms;
}

describe('charOfKeysym', () => {
  it('gives the character of printable ASCII, Latin-1, Unicode keysyms and the keypad', () => {
    expect(charOfKeysym(0x61)).toBe('a');
    expect(charOfKeysym(0x20)).toBe(' ');
    expect(charOfKeysym(0x7e)).toBe('~');
    expect(charOfKeysym(0xe9)).toBe('é');
    expect(charOfKeysym(UNICODE_KEYSYM_BASE + 0x4e2d)).toBe('中');
    expect(charOfKeysym(UNICODE_KEYSYM_BASE + 0x1f600)).toBe('😀');
    expect(charOfKeysym(KEYSYM_KP_0 + 7)).toBe('7');
    expect(charOfKeysym(KEYSYM.KP_Add)).toBe('+');
  });

  it('gives nothing for keys that type no character', () => {
    for (const k of [
      KEYSYM.Return,
      KEYSYM.Tab,
      KEYSYM.BackSpace,
      KEYSYM.Escape,
      KEYSYM.Left,
      KEYSYM_F1,
      KEYSYM.Control_L,
      KEYSYM.KP_Enter,
      0x7f,
      0x1f,
      UNICODE_KEYSYM_BASE + 0x0a,
    ]) {
      expect(charOfKeysym(k), k.toString(16)).toBeUndefined();
    }
  });
});

describe('keyName / chordName', () => {
  it('names keys as pressKeys takes them, and parseKeys presses the same keysyms back', () => {
    const cases: Array<[number[], number, string]> = [
      [[KEYSYM.Control_L], 0x61, 'ctrl+a'],
      [[KEYSYM.Control_L, KEYSYM.Shift_L], 0x41, 'ctrl+shift+a'],
      [[KEYSYM.Control_L, KEYSYM.Shift_L], 0x21, 'ctrl+shift+1'],
      [[KEYSYM.Control_L, KEYSYM.Shift_L], 0x2b, 'ctrl+shift+='],
      [[KEYSYM.Control_L], 0x20, 'ctrl+space'],
      [[KEYSYM.Alt_L], KEYSYM.Left, 'alt+Left'],
      [[KEYSYM.Shift_L], KEYSYM.Tab, 'shift+Tab'],
      [[KEYSYM.Super_L], 0x65, 'super+e'],
      [[KEYSYM.Control_R], KEYSYM_F1 + 4, 'Control_R+F5'],
      [[], KEYSYM.Return, 'Return'],
      [[], KEYSYM.Page_Down, 'Page_Down'],
      [[], KEYSYM_KP_0 + 3, 'KP_3'],
      [[], KEYSYM.KP_Add, 'KP_Add'],
      [[KEYSYM.Control_L], 0xe9, 'ctrl+é'],
      [[KEYSYM.Control_L], 0x2d, 'ctrl+-'],
      [[KEYSYM.Meta_L], 0x78, 'Meta_L+x'],
      [[], 0x1234, '0x1234'],
    ];
    for (const [mods, key, name] of cases) {
      expect(chordName(mods, key)).toBe(name);
      expect(pressed(name), name).toEqual([...mods, key]);
    }
    // A shifted character without Shift held (another layout): parseKeys adds the Shift a US keyboard needs.
    expect(chordName([KEYSYM.Control_L], 0x2b)).toBe('ctrl+plus');
    expect(pressed('ctrl+plus')).toEqual([KEYSYM.Control_L, KEYSYM.Shift_L, 0x2b]);
  });

  it('names modifiers tapped by themselves', () => {
    expect(chordName([KEYSYM.Super_L], null)).toBe('super');
    expect(pressed('super')).toEqual([KEYSYM.Super_L]);
    expect(chordName([KEYSYM.Control_L, KEYSYM.Shift_L], null)).toBe('ctrl+shift');
    expect(pressed('ctrl+shift')).toEqual([KEYSYM.Control_L, KEYSYM.Shift_L]);
    expect(keyName(KEYSYM.ISO_Level3_Shift)).toBe('altgr');
  });

  it('names blank characters by code point', () => {
    expect(keyName(0xa0)).toBe('U00A0');
    expect(pressed('ctrl+U00A0')).toEqual([KEYSYM.Control_L, 0xa0]);
  });
});
