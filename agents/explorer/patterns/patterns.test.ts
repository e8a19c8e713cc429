import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../harness/prng.ts';
import type { SeenTarget } from '../targets.ts';
import { fieldValue, fillMoves } from './forms.ts';
import { GamePlayer } from './games.ts';
import { followable, pickTarget } from './pages.ts';

const t = (key: string, kind: SeenTarget['kind'], more: Partial<SeenTarget> = {}): SeenTarget => ({
  key,
  kind,
  label: key,
  box: { x: 10, y: 10, width: 20, height: 10 },
  source: 'dom',
  ...more,
});

describe('forms', () => {
  it('guesses a value from the type, then the hint', () => {
    expect(fieldValue({ kind: 'input', inputType: 'email' })).toBe('test@example.com');
    expect(fieldValue({ kind: 'input', inputType: 'number' })).toBe('42');
    expect(fieldValue({ kind: 'input', inputType: 'text', hint: 'phone' })).toBe('5551234567');
    expect(fieldValue({ kind: 'input', inputType: 'text', hint: 'full_name' })).toBe('Alice Example');
    expect(fieldValue({ kind: 'textarea' })).toBe('Hello from the explorer.');
    expect(fieldValue({ kind: 'input', inputType: 'text' })).toBe('test');
  });

  it('clicks then types a field, clicks a box, opens and picks in a select', () => {
    expect(fillMoves(t('e', 'input', { inputType: 'email' })).map((m) => [m.step.action, m.continues ?? false])).toEqual([
      ['mouse_click', false],
      ['type_text', true],
    ]);
    expect(fillMoves(t('f', 'input', { inputType: 'text', filled: true })).map((m) => m.step.params)).toEqual([
      { position: { x: 20, y: 15 }, button: 'left', click_type: 'single' },
      { keys: 'ctrl+a' },
      { text: 'test' },
    ]);
    expect(fillMoves(t('c', 'checkbox', { inputType: 'checkbox' })).map((m) => m.strategy)).toEqual(['form.check']);
    expect(fillMoves(t('s', 'select', { inputType: 'select' })).map((m) => m.step.params?.keys ?? 'click')).toEqual(['click', 'Down', 'Return']);
    expect(fillMoves(t('u', 'input', { inputType: 'file' }))).toEqual([]);
  });
});

describe('pickTarget', () => {
  const targets = [t('a-link', 'link', { href: 'http://app/x' }), t('b-button', 'button'), t('c-input', 'input'), t('d-ext', 'link', { href: 'http://other/' })];
  it('prefers fields, then buttons, links last; never another host; nothing when all were tried', () => {
    const r = mulberry32(1);
    const first = pickTarget(targets, new Set(), new Set(), 'app', false, r);
    expect(first).toMatchObject({ target: { key: 'c-input' } });
    expect(pickTarget(targets, new Set(['c-input']), new Set(), 'app', false, r)).toMatchObject({ target: { key: 'b-button' } });
    expect(pickTarget(targets, new Set(['c-input', 'b-button']), new Set(), 'app', false, r)).toMatchObject({ target: { key: 'a-link' }, strategy: 'page.link' });
    expect(pickTarget(targets, new Set(['c-input', 'b-button', 'a-link']), new Set(), 'app', false, r)).toBeNull();
  });

  it('puts targets that just appeared first, and in an open dialog only its own, then Escape', () => {
    const r = mulberry32(1);
    expect(pickTarget(targets, new Set(), new Set(['a-link']), 'app', false, r)).toMatchObject({ target: { key: 'a-link' } });
    const dialog = [...targets, t('z-ok', 'button', { inDialog: true })];
    expect(pickTarget(dialog, new Set(), new Set(), 'app', true, r)).toMatchObject({ target: { key: 'z-ok' }, strategy: 'dialog.button' });
    expect(pickTarget(dialog, new Set(['z-ok']), new Set(), 'app', true, r)).toEqual({ closeDialog: true });
  });

  it("tries a dialog's dismiss buttons last, and acts again on an opener whose dialog still has untried targets", () => {
    const r = mulberry32(1);
    const dialog = [t('open', 'button'), t('cancel', 'button', { inDialog: true, label: 'Cancel' }), t('send', 'button', { inDialog: true, label: 'Send' })];
    for (let seed = 0; seed < 20; seed++) expect(pickTarget(dialog, new Set(['open']), new Set(), null, true, mulberry32(seed))).toMatchObject({ target: { key: 'send' } });
    // The dialog was dismissed before Send: with nothing untried, the opener again, while revisit says so.
    const closed = [t('open', 'button')];
    expect(pickTarget(closed, new Set(['open', 'cancel']), new Set(), null, false, r, (x) => x.key === 'open')).toEqual({ target: closed[0], strategy: 'page.revisit' });
    expect(pickTarget(closed, new Set(['open', 'cancel']), new Set(), null, false, r, () => false)).toBeNull();
    expect(pickTarget(closed, new Set(['open', 'cancel']), new Set(), null, false, r)).toBeNull();
  });

  it('draws among equals from the seed only', () => {
    const same = ['k1', 'k2', 'k3', 'k4'].map((k) => t(k, 'button'));
    const draw = (seed: number) => {
      const r = mulberry32(seed);
      const tried = new Set<string>();
      const order = [];
      for (let p = pickTarget(same, tried, new Set(), null, false, r); p && 'target' in p; p = pickTarget(same, tried, new Set(), null, false, r)) {
        order.push(p.target.key);
        tried.add(p.target.key);
      }
      return order;
    };
    expect(draw(9)).toEqual(draw(9));
    expect(draw(9).sort()).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(followable({ href: 'javascript:void 0' }, null)).toBe(false);
    expect(followable({ href: 'mailto:a@b' }, null)).toBe(false);
    expect(followable({}, 'app')).toBe(true);
  });
});

describe('GamePlayer', () => {
  const box = { x: 0, y: 0, width: 1280, height: 800 };
  it('plays platformer bursts (arrows and a jump) while they make progress, then the puzzle, then the clicker', () => {
    const g = new GamePlayer(3, mulberry32(2));
    const first = Array.from({ length: 6 }, () => {
      const m = g.next(box, 32);
      g.observe(true, [{ col: 5, row: 15, box: { x: 200, y: 600, width: 40, height: 40 } }]);
      return m;
    });
    expect(first.every((m) => m.strategy === 'game.platformer')).toBe(true);
    expect(new Set(first.map((m) => m.step.params?.keys))).toEqual(new Set(['space', 'Right']));
    for (let i = 0; i < 3; i++) g.observe(false, []);
    expect(g.pattern).toBe('puzzle');
    expect([0, 1, 2, 3].map(() => g.next(box, 32).step.params?.keys)).toEqual(['Up', 'Right', 'Down', 'Left']);
    for (let i = 0; i < 3; i++) g.observe(false, []);
    expect(g.pattern).toBe('clicker');
    expect(g.next(box, 32).step).toEqual({ action: 'mouse_click', params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' } });
    for (let i = 0; i < 3; i++) g.observe(false, []);
    expect(g.exhausted).toBe(true);
    g.reset();
    expect(g.pattern).toBe('platformer');
  });
});
