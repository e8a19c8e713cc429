import { describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { parseKeys } from './parse.ts';

// Keysyms spelled out (keysymdef.h) so the tests do not reuse the table under test.
const SHIFT = 0xffe1;
const SHIFT_R = 0xffe2;
const CTRL = 0xffe3;
const CTRL_R = 0xffe4;
const ALT = 0xffe9;
const SUPER = 0xffeb;
const ALTGR = 0xfe03;

/** The keysyms of a single-chord parse. */
function chord(keys: string): number[] {
  const combo = parseKeys(keys);
  expect(combo.kind, keys).toBe('chord');
  expect(combo.chords, keys).toHaveLength(1);
  return combo.chords[0]?.keysyms ?? [];
}

/** The error parseKeys throws for `keys`. */
function failure(keys: string): VncuaError {
  try {
    parseKeys(keys);
  } catch (e) {
    if (isVncuaError(e)) return e;
    throw e;
  }
  throw new Error(`parseKeys(${JSON.stringify(keys)}) did not throw`);
}

describe('parseKeys: chords', () => {
  it('parses + and space separated chords in any case, modifiers first', () => {
    expect(chord('Ctrl+Shift+P')).toEqual([CTRL, SHIFT, 0x50]);
    expect(chord('Ctrl + Shift + P')).toEqual([CTRL, SHIFT, 0x50]);
    expect(chord('ctrl+a')).toEqual([CTRL, 0x61]);
    expect(chord('CTRL+A')).toEqual([CTRL, 0x61]);
    expect(chord('alt f')).toEqual([ALT, 0x66]);
    expect(chord('  alt   f  ')).toEqual([ALT, 0x66]);
    expect(chord('a+ctrl')).toEqual([CTRL, 0x61]);
    expect(chord('super+shift+t')).toEqual([SUPER, SHIFT, 0x54]);
    expect(chord('shift+tab')).toEqual([SHIFT, 0xff09]);
    expect(chord('ctrl+ctrl+a')).toEqual([CTRL, 0x61]);
  });

  it('gives readable canonical names in the same order', () => {
    expect(parseKeys('ctrl + shift + p').chords[0]?.names).toEqual(['Control_L', 'Shift_L', 'P']);
    expect(parseKeys('cmd+plus').chords[0]?.names).toEqual(['Super_L', 'Shift_L', '+']);
  });

  it('treats + where a key is expected as the plus key', () => {
    expect(chord('+')).toEqual([SHIFT, 0x2b]);
    expect(chord('plus')).toEqual([SHIFT, 0x2b]);
    expect(chord('ctrl++')).toEqual([CTRL, SHIFT, 0x2b]);
    expect(chord('ctrl + +')).toEqual([CTRL, SHIFT, 0x2b]);
    expect(chord('minus')).toEqual([0x2d]);
    expect(chord('ctrl+minus')).toEqual([CTRL, 0x2d]);
  });

  it('sends the shifted keysym when the chord holds Shift', () => {
    expect(chord('shift+1')).toEqual([SHIFT, 0x21]);
    expect(chord('ctrl+shift+=')).toEqual([CTRL, SHIFT, 0x2b]);
    expect(chord('shift+a')).toEqual([SHIFT, 0x41]);
    expect(chord('Shift_R+slash')).toEqual([SHIFT_R, 0x3f]);
    expect(chord('shift+?')).toEqual([SHIFT, 0x3f]);
  });

  it('adds Shift_L for shifted characters in a chord without Shift', () => {
    expect(chord('ctrl+?')).toEqual([CTRL, SHIFT, 0x3f]);
    expect(chord('ctrl+plus')).toEqual([CTRL, SHIFT, 0x2b]);
    expect(chord('alt+@')).toEqual([ALT, SHIFT, 0x40]);
  });
});

describe('parseKeys: single keys and characters', () => {
  it('presses a single character exactly, with Shift for shifted ones', () => {
    expect(chord('a')).toEqual([0x61]);
    expect(chord('A')).toEqual([SHIFT, 0x41]);
    expect(chord('?')).toEqual([SHIFT, 0x3f]);
    expect(chord('/')).toEqual([0x2f]);
    expect(chord(' ')).toEqual([0x20]);
    expect(chord(' x ')).toEqual([0x78]);
    expect(chord('é')).toEqual([0xe9]);
    expect(chord('中')).toEqual([0x1004e2d]);
    expect(chord('😀')).toEqual([0x101f600]);
    expect(chord('\n')).toEqual([0xff0d]);
    expect(chord('\t')).toEqual([0xff09]);
  });

  it('knows the friendly names case-insensitively', () => {
    const cases: Array<[string[], number]> = [
      [['enter', 'Enter', 'ENTER', 'return', 'Return', 'RETURN'], 0xff0d],
      [['esc', 'ESC', 'escape', 'Escape'], 0xff1b],
      [['tab', 'TAB'], 0xff09],
      [['space', 'SPACE', 'Space'], 0x20],
      [['backspace', 'BackSpace', 'BACKSPACE'], 0xff08],
      [['delete', 'del', 'Delete', 'DEL'], 0xffff],
      [['insert', 'Insert'], 0xff63],
      [['home', 'HOME'], 0xff50],
      [['end', 'END'], 0xff57],
      [['page_up', 'pageup', 'Page_Up', 'PageUp', 'pgup', 'PAGEUP', 'Prior'], 0xff55],
      [['page_down', 'pagedown', 'Page_Down', 'PageDown', 'pgdn', 'PAGEDOWN', 'Next'], 0xff56],
      [['up', 'Up', 'arrowup', 'ArrowUp', 'ARROWUP'], 0xff52],
      [['down', 'ArrowDown', 'ARROWDOWN'], 0xff54],
      [['left', 'Left', 'arrowleft', 'ArrowLeft', 'ARROWLEFT'], 0xff51],
      [['right', 'ArrowRight', 'ARROWRIGHT'], 0xff53],
      [['capslock', 'CapsLock', 'Caps_Lock'], 0xffe5],
      [['numlock', 'NumLock', 'Num_Lock'], 0xff7f],
      [['printscreen', 'print', 'PrintScreen', 'Print'], 0xff61],
      [['pause', 'Pause'], 0xff13],
      [['menu', 'Menu', 'ContextMenu'], 0xff67],
      [['ctrl', 'control', 'ctl', 'CTRL', 'Control_L', 'ControlLeft'], CTRL],
      [['Control_R', 'rctrl'], CTRL_R],
      [['shift', 'SHIFT', 'Shift_L'], SHIFT],
      [['alt', 'ALT', 'Alt_L', 'option', 'OPTION'], ALT],
      [['meta', 'super', 'win', 'cmd', 'command', 'CMD', 'Super_L', 'Meta', 'MetaLeft'], SUPER],
      [['Meta_L'], 0xffe7],
      [['altgr', 'AltGr', 'ISO_Level3_Shift'], ALTGR],
      [['KP_Enter', 'kp_enter', 'NumpadEnter'], 0xff8d],
      [['KP_1', 'Numpad1'], 0xffb1],
      [['KP_0'], 0xffb0],
      [['KP_Add', 'NumpadAdd'], 0xffab],
      [['Digit_1', 'Digit1', 'digit_1'], 0x31],
      [['Digit_0', 'Digit0'], 0x30],
      [['Key_A', 'KeyA', 'key_a'], 0x61],
      [['F1', 'f1'], 0xffbe],
      [['F12'], 0xffc9],
      [['F24', 'f24'], 0xffd5],
      [['XF86AudioMute', 'VolumeMute'], 0x1008ff12],
      [['0xff0d'], 0xff0d],
      [['U20AC', 'U+20AC', 'u+20ac'], 0x10020ac],
    ];
    for (const [names, keysym] of cases) {
      for (const n of names) expect(chord(n), n).toEqual([keysym]);
    }
  });

  it('parses the key lists computer-use models emit', () => {
    expect(chord('CTRL+C')).toEqual([CTRL, 0x63]);
    expect(chord('CMD+SHIFT+T')).toEqual([SUPER, SHIFT, 0x54]);
    expect(chord('OPTION+ARROWLEFT')).toEqual([ALT, 0xff51]);
    expect(chord('ctrl+shift+Page_Down')).toEqual([CTRL, SHIFT, 0xff56]);
    expect(chord('alt+F4')).toEqual([ALT, 0xffc1]);
    expect(chord('super')).toEqual([SUPER]);
  });
});

describe('parseKeys: sequences', () => {
  it('presses a letter-free multi-character token one character at a time', () => {
    const seq = parseKeys('-12');
    expect(seq.kind).toBe('sequence');
    expect(seq.chords.map((c) => c.keysyms)).toEqual([[0x2d], [0x31], [0x32]]);
    expect(parseKeys('3.5').chords.map((c) => c.keysyms)).toEqual([[0x33], [0x2e], [0x35]]);
    expect(parseKeys('1?').chords.map((c) => c.keysyms)).toEqual([[0x31], [SHIFT, 0x3f]]);
    expect(parseKeys('中文').chords.map((c) => c.keysyms)).toEqual([[0x1004e2d], [0x1006587]]);
    expect(parseKeys('👍🏽').chords.map((c) => c.keysyms)).toEqual([[0x101f44d], [0x101f3fd]]);
  });
});

describe('parseKeys: errors', () => {
  it('rejects unknown names with suggestions and the allowed list', () => {
    const e = failure('ctrl+Retrun');
    expect(e.code).toBe('ACTION_ERR_UNKNOWN_KEY');
    expect(e.details?.argument).toBe('keys');
    expect(e.details?.value).toBe('ctrl+Retrun');
    expect(e.details?.token).toBe('Retrun');
    expect(e.details?.suggestions).toContain('Return');
    const allowed = e.details?.allowed as string[];
    for (const n of ['Return', 'enter', 'Page_Up', 'F24', 'KP_Enter', 'Super_L', 'ctrl', 'plus', 'Digit_1']) {
      expect(allowed).toContain(n);
    }
    expect(e.message).toContain('Retrun');
    expect(e.message).toContain('Return');
  });

  it('rejects a lettered word that is not a key name instead of typing it', () => {
    expect(failure('hello').code).toBe('ACTION_ERR_UNKNOWN_KEY');
    expect(failure('F36').code).toBe('ACTION_ERR_UNKNOWN_KEY');
    expect(failure('ctrl+12').code).toBe('ACTION_ERR_UNKNOWN_KEY');
    expect(failure('pagedwn').details?.suggestions).toContain('Page_Down');
    expect(failure('esacpe').details?.suggestions).toContain('Escape');
  });

  it('rejects empty strings, dangling separators and control characters', () => {
    for (const bad of ['', '   ', 'ctrl+', 'ctrl + ', '\b', '1\u00072']) {
      const e = failure(bad);
      expect(e.code, JSON.stringify(bad)).toBe('ACTION_ERR_BAD_ARGUMENT');
      expect(e.details?.argument).toBe('keys');
    }
    expect(failure('\b').details?.codePoint).toBe(8);
  });
});
