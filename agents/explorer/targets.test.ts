import { describe, expect, it } from 'vitest';
import { greyGrid } from './progress.ts';
import { centre, inkCentre, kindOf, parseScan, screenTargets } from './targets.ts';

const row = (over: Record<string, unknown> = {}) => ({
  tag: 'button',
  role: '',
  type: 'submit',
  label: 'Send',
  hint: '',
  filled: false,
  href: '',
  id: 'button||submit|Send||',
  inDialog: false,
  box: [10, 20, 100, 30],
  ...over,
});

describe('kindOf', () => {
  it('reads roles before tags and input types', () => {
    expect(kindOf('button', 'tab', '')).toBe('tab');
    expect(kindOf('li', 'menuitem', '')).toBe('menuitem');
    expect(kindOf('input', '', 'checkbox')).toBe('checkbox');
    expect(kindOf('input', '', 'submit')).toBe('button');
    expect(kindOf('input', '', 'email')).toBe('input');
    expect(kindOf('a', '', '')).toBe('link');
    expect(kindOf('canvas', '', '')).toBe('canvas');
    expect(kindOf('div', '', '')).toBe('other');
  });
});

describe('parseScan', () => {
  it('keys, clips and sorts the rows, and keeps the page facts', () => {
    const scan = parseScan(
      {
        url: 'http://x/',
        title: 'T',
        vw: 1280,
        vh: 800,
        cover: 0.9,
        down: true,
        dialog: false,
        rows: [row({ label: 'Zeta', id: 'z' }), row({ tag: 'a', type: '', label: 'Alpha', href: 'http://x/a', id: 'a', box: [1270, 790, 50, 50] }), 'junk', row({ box: [1, 2] })],
      },
      { width: 1280, height: 800 },
    );
    expect(scan).not.toBeNull();
    expect(scan!.targets.map((t) => t.key)).toEqual([...scan!.targets.map((t) => t.key)].sort());
    expect(scan!.targets).toHaveLength(2);
    const link = scan!.targets.find((t) => t.kind === 'link')!;
    expect(link).toMatchObject({ label: 'Alpha', href: 'http://x/a', box: { x: 1270, y: 790, width: 10, height: 10 }, source: 'dom' });
    expect(link.key).toMatch(/^link:Alpha:[0-9a-f]{8}$/);
    expect(scan).toMatchObject({ url: 'http://x/', canvasCover: 0.9, canScrollDown: true, dialogOpen: false, loaded: true });
    // The same rows give the same keys (a key never depends on the order the page listed them in).
    const again = parseScan({ rows: [row({ tag: 'a', type: '', label: 'Alpha', href: 'http://x/a', id: 'a' }), row({ label: 'Zeta', id: 'z' })] }, { width: 1280, height: 800 });
    expect(again!.targets.map((t) => t.key)).toEqual(scan!.targets.map((t) => t.key));
  });

  it('keys a field by its name, not its value: filling it in leaves the same element', () => {
    const field = (label: string) => row({ tag: 'input', type: 'email', label, name: 'E-mail', id: 'input||email|E-mail||email|form>input' });
    const empty = parseScan({ rows: [field('E-mail')] }, { width: 1280, height: 800 })!;
    const filled = parseScan({ rows: [field('ann@example.com')] }, { width: 1280, height: 800 })!;
    expect(filled.targets[0]!.key).toBe(empty.targets[0]!.key);
    expect(filled.targets[0]!.label).toBe('ann@example.com');
  });

  it('is null for an answer of another shape', () => {
    expect(parseScan(null, { width: 10, height: 10 })).toBeNull();
    expect(parseScan({ rows: 3 }, { width: 10, height: 10 })).toBeNull();
  });
});

describe('screenTargets', () => {
  it('keeps the contrasted cells of the grid as screen regions, sorted by key', () => {
    const w = 160;
    const h = 100;
    const data = new Uint8Array(w * h * 4).fill(255);
    for (let y = 60; y < 90; y++) for (let x = 120; x < 150; x += 2) data.set([0, 0, 0, 255], (y * w + x) * 4);
    const t = screenTargets(greyGrid({ width: w, height: h, data }, 4, 2), { width: w, height: h });
    expect(t.map((x) => x.key)).toEqual(['screen:01,03']);
    expect(t[0]).toMatchObject({ kind: 'screen_region', source: 'screen', box: { x: 120, y: 50, width: 40, height: 50 } });
    expect(centre(t[0]!.box)).toEqual({ x: 140, y: 75 });
    // With the frame, the region is clicked on its ink: the bar's centre, not the cell's.
    const inked = screenTargets(greyGrid({ width: w, height: h, data }, 4, 2), { width: w, height: h }, 12, { width: w, height: h, data });
    expect(inked.map((x) => x.key)).toEqual(['screen:01,03']);
    expect(centre(inked[0]!.box)).toEqual({ x: 134, y: 74 });
    expect(inkCentre({ width: w, height: h, data }, { x: 0, y: 0, width: 40, height: 40 })).toBeNull();
  });
});
