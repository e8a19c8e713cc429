import { describe, expect, it } from 'vitest';
import type { AgentContext } from '../harness/agent/index.ts';
import { isVncuaError } from '../harness/errors.ts';
import { parseKeys } from '../harness/keys/index.ts';
import { KEYSYM } from '../harness/keys/keysyms.ts';
import { ACTION_PARAMS, type ActionName } from '../harness/trace/schema.ts';
import buildRandomAgent, { DEFAULT_RANDOM_ACTIONS, RANDOM_KEYS, RandomActionGenerator, RandomAgent, seedFrom } from './random.ts';

const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];
const VNC = 'ws://127.0.0.1:9';
const MODIFIERS = new Set<number>([KEYSYM.Control_L, KEYSYM.Control_R, KEYSYM.Alt_L, KEYSYM.Alt_R, KEYSYM.Super_L, KEYSYM.Super_R, KEYSYM.Meta_L, KEYSYM.Meta_R]);

describe('RandomActionGenerator', () => {
  it('is deterministic for a seed (numbers and strings) and differs between seeds', () => {
    for (const size of SIZES) {
      const a = new RandomActionGenerator(1234).take(300, size);
      const b = new RandomActionGenerator(1234).take(300, size);
      expect(b).toEqual(a);
      expect(new RandomActionGenerator(1235).take(300, size)).not.toEqual(a);
      expect(new RandomActionGenerator('click-button').take(50, size)).toEqual(new RandomActionGenerator(seedFrom('click-button')).take(50, size));
      expect(new RandomActionGenerator('click-button').take(50, size)).not.toEqual(new RandomActionGenerator('click-buttons').take(50, size));
    }
    expect(seedFrom('')).toBe(0x811c9dc5);
    expect(seedFrom(-1)).toBe(0xffffffff);
  });

  it('draws only valid, on-screen, harmless actions of every allowed kind', () => {
    for (const size of SIZES) {
      const steps = new RandomActionGenerator(7).take(2000, size);
      const kinds = new Set<string>();
      for (const s of steps) {
        const parsed = ACTION_PARAMS[s.action as ActionName].safeParse(s.params);
        expect(parsed.success, JSON.stringify(s)).toBe(true);
        const p = s.params as Record<string, unknown>;
        for (const key of ['position', 'start', 'end']) {
          const pt = p[key] as { x: number; y: number } | undefined;
          if (!pt) continue;
          expect(Number.isInteger(pt.x) && pt.x >= 0 && pt.x < size.width, JSON.stringify(s)).toBe(true);
          expect(Number.isInteger(pt.y) && pt.y >= 0 && pt.y < size.height, JSON.stringify(s)).toBe(true);
        }
        if ('button' in p) expect(p.button).toBe('left');
        if (s.action === 'press_keys') {
          expect(RANDOM_KEYS).toContain(p.keys);
          const keysyms = parseKeys(p.keys as string).chords.flatMap((c) => c.keysyms);
          expect(
            keysyms.some((k) => MODIFIERS.has(k)),
            String(p.keys),
          ).toBe(false);
        }
        if (s.action === 'type_text') expect(p.text).toMatch(/^[a-z0-9]{1,12}$/);
        if (s.action === 'mouse_scroll') expect(p.repeat).toBeLessThanOrEqual(5);
        if (s.action === 'wait') expect(p.seconds).toBeLessThanOrEqual(1);
        kinds.add(s.action === 'mouse_click' ? `click:${String(p.click_type)}` : s.action);
      }
      expect([...kinds].sort()).toEqual(['click:double', 'click:single', 'click:triple', 'mouse_drag', 'mouse_move', 'mouse_scroll', 'press_keys', 'type_text', 'wait']);
    }
  });

  it('never presses a key outside the safe list (every name parses, none is a function key)', () => {
    for (const k of RANDOM_KEYS) {
      const chords = parseKeys(k).chords;
      expect(chords.length).toBe(1);
      expect(chords[0]!.keysyms.length).toBe(1);
      expect(chords[0]!.keysyms[0]! >= 0xffbe && chords[0]!.keysyms[0]! <= 0xffe0, k).toBe(false);
    }
  });
});

describe('RandomAgent options', () => {
  it('seeds from the option, else from the task, and defaults the number of actions', () => {
    const a = new RandomAgent({ outputDir: '/tmp/x', vncUrl: VNC, seed: 'abc' });
    expect(a.seed).toBe(seedFrom('abc'));
    expect(a.actions).toBe(DEFAULT_RANDOM_ACTIONS);
    expect(new RandomAgent({ outputDir: '/tmp/x', vncUrl: VNC, task: 'abc' }).seed).toBe(seedFrom('abc'));
    expect(new RandomAgent({ outputDir: '/tmp/x', vncUrl: VNC, seed: 5, actions: 3 })).toMatchObject({ seed: 5, actions: 3 });
  });

  it('rejects bad actions / seed with AGENT_ERR_BAD_OPTIONS', () => {
    for (const bad of [{ actions: -1 }, { actions: 1.5 }, { seed: Number.NaN }, { seed: {} as unknown as string }]) {
      let err: unknown;
      try {
        new RandomAgent({ outputDir: '/tmp/x', vncUrl: VNC, ...bad });
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'AGENT_ERR_BAD_OPTIONS'), JSON.stringify(bad)).toBe(true);
    }
  });

  it('the builder seeds with the task id', () => {
    const outputDir = '/tmp/x';
    const ctx: AgentContext = {
      task: 'goal text',
      outputDir,
      vncUrl: VNC,
      cdpUrl: 'http://127.0.0.1:9',
      url: undefined,
      maxSteps: 50,
      script: undefined,
      args: [],
      agentOptions: { outputDir, vncUrl: VNC, cdpUrl: 'http://127.0.0.1:9' },
      taskId: 'slider-volume',
    };
    expect(buildRandomAgent(ctx).seed).toBe(seedFrom('slider-volume'));
    expect(buildRandomAgent({ ...ctx, taskId: undefined }).seed).toBe(seedFrom('goal text'));
  });
});
