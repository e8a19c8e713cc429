/** xdotool key text → pressKeys strings: what passes through, what is translated, and what is refused. */
import { describe, expect, it } from 'vitest';
import { KEYSYM, KEYSYM_F1, KEYSYM_KP_0, parseKeys } from '../../harness/keys/index.ts';
import { XDOTOOL_NAMES, translateKeys } from './keys.ts';

/** The keysyms each pressKeys string holds down, one list per string. */
const keysyms = (text: string) => translateKeys(text).map((k) => parseKeys(k).chords.flatMap((c) => c.keysyms));

describe('translateKeys', () => {
  it('passes xdotool keysym names parseKeys already reads as X does (one chord each)', () => {
    const table: Array<[string, number[]]> = [
      ['Return', [KEYSYM.Return]],
      ['BackSpace', [KEYSYM.BackSpace]],
      ['Tab', [KEYSYM.Tab]],
      ['Escape', [KEYSYM.Escape]],
      ['Delete', [KEYSYM.Delete]],
      ['Home', [KEYSYM.Home]],
      ['End', [KEYSYM.End]],
      ['Page_Up', [KEYSYM.Page_Up]],
      ['Page_Down', [KEYSYM.Page_Down]],
      ['Prior', [KEYSYM.Page_Up]],
      ['Next', [KEYSYM.Page_Down]],
      ['Up', [KEYSYM.Up]],
      ['Left', [KEYSYM.Left]],
      ['Insert', [KEYSYM.Insert]],
      ['F1', [KEYSYM_F1]],
      ['F12', [KEYSYM_F1 + 11]],
      ['KP_0', [KEYSYM_KP_0]],
      ['KP_9', [KEYSYM_KP_0 + 9]],
      ['KP_Enter', [KEYSYM.KP_Enter]],
      ['KP_Add', [KEYSYM.KP_Add]],
      ['Super_L', [KEYSYM.Super_L]],
      ['super', [KEYSYM.Super_L]],
      ['Control_L', [KEYSYM.Control_L]],
      ['space', [0x20]],
      ['minus', [0x2d]],
      ['a', [0x61]],
      ['ctrl+a', [KEYSYM.Control_L, 0x61]],
      ['ctrl+shift+t', [KEYSYM.Control_L, KEYSYM.Shift_L, 0x54]],
      ['alt+Tab', [KEYSYM.Alt_L, KEYSYM.Tab]],
      ['alt+Left', [KEYSYM.Alt_L, KEYSYM.Left]],
      ['ctrl+plus', [KEYSYM.Control_L, KEYSYM.Shift_L, 0x2b]],
      ['shift+Tab', [KEYSYM.Shift_L, KEYSYM.Tab]],
      ['XF86AudioMute', [KEYSYM.XF86AudioMute]],
    ];
    for (const [text, expected] of table) {
      expect(translateKeys(text), text).toEqual([text]);
      expect(keysyms(text), text).toEqual([expected]);
    }
  });

  it('translates the names parseKeys reads differently from xdotool', () => {
    expect(keysyms('meta')).toEqual([[KEYSYM.Meta_L]]);
    expect(keysyms('meta+a')).toEqual([[KEYSYM.Meta_L, 0x61]]);
    expect(keysyms('ISO_Left_Tab')).toEqual([[KEYSYM.Shift_L, KEYSYM.Tab]]);
    expect(keysyms('adiaeresis')).toEqual([[0xe4]]);
    expect(keysyms('Adiaeresis')).toEqual([[0xc4]]);
    expect(keysyms('ssharp')).toEqual([[0xdf]]);
    expect(keysyms('ctrl+eacute')).toEqual([[KEYSYM.Control_L, 0xe9]]);
    expect(translateKeys('EuroSign')).toEqual(['€']);
    expect(keysyms('EuroSign')).toEqual(keysyms('€'));
    // Every table entry is something parseKeys reads.
    for (const [name, to] of XDOTOOL_NAMES) expect(() => parseKeys(to), name).not.toThrow();
    expect(XDOTOOL_NAMES.size).toBe(2 + 1 + 1 + 95);
  });

  it('presses space-separated keysequences one after another, as xdotool does', () => {
    expect(translateKeys('ctrl+a BackSpace')).toEqual(['ctrl+a', 'BackSpace']);
    expect(keysyms('ctrl+a  Delete Return')).toEqual([[KEYSYM.Control_L, 0x61], [KEYSYM.Delete], [KEYSYM.Return]]);
    expect(translateKeys(' Return ')).toEqual(['Return']);
  });

  it('refuses the whole text when any keysequence is unknown, so nothing is pressed', () => {
    for (const bad of ['Retrun', 'ctrl+a Retrun', 'ctrl+Hyperspace']) {
      let err: unknown;
      try {
        translateKeys(bad);
      } catch (e) {
        err = e;
      }
      expect((err as { code?: string }).code, bad).toBe('ACTION_ERR_UNKNOWN_KEY');
    }
    expect(() => translateKeys('ctrl+')).toThrow(expect.objectContaining({ code: 'ACTION_ERR_BAD_ARGUMENT' }));
  });
});
