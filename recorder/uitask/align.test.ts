import { describe, expect, it } from 'vitest';
import { KEYSYM, UNICODE_KEYSYM_BASE } from '../../harness/keys/index.ts';
import { parseUitaskExecution } from '../../harness/trace/parse.ts';
import type { TraceEntry } from '../../harness/trace/schema.ts';
import {
  uitaskClick,
  uitaskDrag,
  uitaskFinish,
  uitaskKeys,
  uitaskMove,
  uitaskNavigate,
  uitaskScroll,
  uitaskType,
  uitaskWait,
  type UitaskJsonEntry,
} from '../../harness/trace/test-fixtures/uitask.ts';
import { mulberry32 } from '../../harness/prng.ts';
import { alignUitaskTrace, type AlignResult } from './index.ts';
import { InputScript, type Span } from './test-helpers/input-script.ts';

/** Entries the way readTrace gives them for a uitask execution.json (built with uitask's shapes). */
function trace(steps: UitaskJsonEntry[]): TraceEntry[] {
  return parseUitaskExecution(steps);
}

const THINK = 1200;
const codes = (r: AlignResult) => r.warnings.map((w) => w.code);
const timesOf = (r: AlignResult) => r.entries.map((e) => [e.started_at, e.ended_at]);

describe('alignUitaskTrace', () => {
  it('times every action type from its own input, a wait between its neighbours and finish at the end', () => {
    const s = new InputScript();
    const spans: Span[] = [];
    const act = (build: () => void) => {
      spans.push(s.span(build));
      s.pause(THINK);
    };
    act(() => s.move(100, 100));
    act(() => s.click(200, 150));
    act(() => s.click(210, 160, { count: 2 }));
    act(() => s.click(220, 170, { count: 3 }));
    act(() => s.click(230, 180, { button: 'right' }));
    act(() => s.drag([10, 20], [300, 400]));
    act(() => s.scroll(640, 400, 'down', 3));
    act(() => s.scroll(640, 400, 'left', 2));
    act(() => s.type('Hello, World!'));
    act(() => s.keys('ctrl+a'));
    act(() => s.keys('alt+Left'));
    const waitFrom = s.t - THINK;
    s.pause(1000);
    act(() => s.keys('Return'));
    const endAt = s.t + 500;
    const steps: UitaskJsonEntry[] = [
      uitaskMove({ x: 100, y: 100 }),
      uitaskClick({ x: 200, y: 150 }),
      uitaskClick({ x: 210.4, y: 159.6 }, { clickType: 'double' }),
      uitaskClick({ x: 220, y: 170 }, { clickType: 'triple' }),
      uitaskClick({ x: 230, y: 180 }, { button: 'right' }),
      uitaskDrag({ x: 10, y: 20 }, { x: 300, y: 400 }),
      uitaskScroll({ x: 640, y: 400 }, 'down', 3),
      uitaskScroll({ x: 640, y: 400 }, 'left', 2),
      uitaskType('Hello, World!'),
      uitaskKeys(['ctrl+a']),
      uitaskNavigate('back'),
      uitaskWait(1),
      uitaskKeys(['Return']),
      uitaskFinish(),
    ];
    const r = alignUitaskTrace(trace(steps), s.events, { endAt });
    expect(r.warnings).toEqual([]);
    const expected = [...spans.slice(0, 11).map((x) => [x.t0, x.t1]), [spans[10]!.t1, spans[11]!.t0], [spans[11]!.t0, spans[11]!.t1], [endAt, endAt]];
    expect(timesOf(r)).toEqual(expected);
    expect(r.matches.map((m) => m.placement)).toEqual([...Array(11).fill('input'), 'between', 'input', 'end']);
    expect(waitFrom).toBe(spans[10]!.t1 + 3);
    for (const e of r.entries) expect(e.duration_ms).toBeCloseTo(e.ended_at - e.started_at, 6);
    // Entry fields stay as read, with timing in execution.json order.
    expect(Object.keys(r.entries[1]!)).toEqual(['index', 'action', 'params', 'task_marked_complete', 'started_at', 'ended_at', 'duration_ms']);
    expect(r.entries[1]!.params).toEqual({ position: { x: 200, y: 150 }, button: 'left', click_type: 'single' });
    expect(r.matches[3]!.events).toBe(7); // motion + 3 press/release pairs
  });

  it("accepts other clients' forms of the same input without warnings", () => {
    const s = new InputScript();
    const spans: Span[] = [];
    const act = (build: () => void) => {
      spans.push(s.span(build));
      s.pause(THINK);
    };
    act(() => s.type('Go Home', { shift: false })); // capitals without Shift
    act(() => {
      for (const ch of 'né') s.tap(UNICODE_KEYSYM_BASE + ch.codePointAt(0)!); // Unicode keysyms for everything
    });
    act(() => s.scroll(50, 60, 'right', 2, { style: 'buttons67' })); // X buttons 6/7
    act(() => s.tap(KEYSYM.XF86Back)); // the browser's Back key
    act(() => s.click(70, 80, { lead: false })); // no motion before the press
    const r = alignUitaskTrace(
      trace([uitaskType('Go Home'), uitaskType('né'), uitaskScroll({ x: 50, y: 60 }, 'right', 2), uitaskNavigate('back'), uitaskClick({ x: 70, y: 80 })]),
      s.events,
    );
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual(spans.map((x) => [x.t0, x.t1]));
  });

  it('leaves motion the client sent on its own out of the actions, and keeps an animated move whole', () => {
    const s = new InputScript();
    s.move(5, 5).pause(THINK); // the client parks the pointer
    const move = s.span(() =>
      s.move(400, 300, {
        path: [
          [100, 100],
          [200, 180],
          [300, 250],
        ],
      }),
    );
    s.pause(THINK).move(401, 301).pause(400).move(0, 0).pause(THINK); // stray motion
    const click = s.span(() => s.click(500, 500));
    s.pause(50).move(510, 520).pause(THINK); // motion right after the click
    const typed = s.span(() => s.type('abc'));
    s.pause(20).move(600, 600).pause(20);
    const enter = s.span(() => s.keys('Enter'));
    s.pause(THINK);
    const scroll = s.span(() => s.scroll(100, 100, 'up', 2));
    s.pause(30).move(120, 100).pause(30).move(140, 100);
    const r = alignUitaskTrace(
      trace([uitaskMove({ x: 400, y: 300 }), uitaskClick({ x: 500, y: 500 }), uitaskType('abc'), uitaskKeys(['Enter']), uitaskScroll({ x: 100, y: 100 }, 'up', 2)]),
      s.events,
    );
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual([move, click, typed, enter, scroll].map((x) => [x.t0, x.t1]));
  });

  it('places an action whose input is missing between its neighbours, and warns', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(10, 10));
    s.pause(THINK * 3); // the second click's events were never recorded
    const c = s.span(() => s.type('x'));
    const r = alignUitaskTrace(trace([uitaskClick({ x: 10, y: 10 }), uitaskClick({ x: 900, y: 700 }), uitaskType('x')]), s.events);
    expect(codes(r)).toEqual(['UITASK_ALIGN_MISSING']);
    expect(r.warnings[0]!.message).toContain('entry 1');
    expect(timesOf(r)).toEqual([
      [a.t0, a.t1],
      [a.t1, c.t0],
      [c.t0, c.t1],
    ]);
    expect(r.matches.map((m) => m.placement)).toEqual(['input', 'between', 'input']);
  });

  it("does not take part of a neighbour's input for an action whose own input is missing", () => {
    const s = new InputScript();
    const typed = s.span(() => s.type('hello'));
    s.pause(THINK * 2); // press_keys Tab: not recorded
    const scroll = s.span(() => s.scroll(300, 300, 'down', 5));
    s.pause(THINK * 2); // a second scroll: not recorded
    const dbl = s.span(() => s.click(40, 40, { count: 2 }));
    s.pause(THINK * 2); // a single click at the same place: not recorded
    const r = alignUitaskTrace(
      trace([
        uitaskType('hello'),
        uitaskKeys(['Tab']),
        uitaskScroll({ x: 300, y: 300 }, 'down', 5),
        uitaskScroll({ x: 300, y: 300 }, 'down', 2),
        uitaskClick({ x: 40, y: 40 }, { clickType: 'double' }),
        uitaskClick({ x: 40, y: 40 }),
      ]),
      s.events,
    );
    expect(codes(r)).toEqual(['UITASK_ALIGN_MISSING', 'UITASK_ALIGN_MISSING', 'UITASK_ALIGN_MISSING']);
    expect(r.matches.map((m) => m.placement)).toEqual(['input', 'between', 'input', 'between', 'input', 'between']);
    expect([0, 2, 4].map((i) => timesOf(r)[i])).toEqual([typed, scroll, dbl].map((x) => [x.t0, x.t1]));
  });

  it('splits a gap evenly between consecutive actions without input', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(10, 10));
    s.pause(3000);
    const b = s.span(() => s.click(20, 20));
    const r = alignUitaskTrace(trace([uitaskClick({ x: 10, y: 10 }), uitaskWait(1), uitaskWait(1), uitaskClick({ x: 20, y: 20 })]), s.events);
    expect(r.warnings).toEqual([]);
    const mid = a.t1 + (b.t0 - a.t1) / 2;
    expect(timesOf(r)).toEqual([
      [a.t0, a.t1],
      [a.t1, mid],
      [mid, b.t0],
      [b.t0, b.t1],
    ]);
  });

  it('gives repeated identical clicks one press each, in order', () => {
    const s = new InputScript();
    const spans: Span[] = [];
    for (let i = 0; i < 4; i++) {
      spans.push(s.span(() => s.click(300, 300)));
      s.pause(THINK);
    }
    const click = uitaskClick({ x: 300, y: 300 });
    const r = alignUitaskTrace(trace([click, click, click, click]), s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual(spans.map((x) => [x.t0, x.t1]));
  });

  it('says which identical click lost its input when one is missing, and gives the input to the earlier ones', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(300, 300));
    s.pause(THINK);
    const b = s.span(() => s.click(300, 300));
    s.pause(THINK);
    const end = s.t;
    const click = uitaskClick({ x: 300, y: 300 });
    const r = alignUitaskTrace(trace([click, click, click, uitaskFinish()]), s.events, { endAt: end });
    expect(codes(r)).toEqual(['UITASK_ALIGN_MISSING', 'UITASK_ALIGN_AMBIGUOUS']);
    expect(r.warnings.every((w) => w.message.includes('entry 2'))).toBe(true);
    expect(timesOf(r)).toEqual([
      [a.t0, a.t1],
      [b.t0, b.t1],
      [b.t1, end],
      [end, end],
    ]);
  });

  it('tells a double click from two single clicks at the same place', () => {
    const s = new InputScript();
    const one = s.span(() => s.click(50, 50));
    s.pause(THINK);
    const dbl = s.span(() => s.click(50, 50, { count: 2 }));
    s.pause(THINK);
    const two = s.span(() => s.click(50, 50));
    const at = { x: 50, y: 50 };
    const r = alignUitaskTrace(trace([uitaskClick(at), uitaskClick(at, { clickType: 'double' }), uitaskClick(at)]), s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual([one, dbl, two].map((x) => [x.t0, x.t1]));
    expect(r.matches.map((m) => m.events)).toEqual([3, 5, 3]);
  });

  it('splits back-to-back keyboard actions by what each one types', () => {
    const s = new InputScript();
    const t1 = s.span(() => s.type('ab'));
    const t2 = s.span(() => s.type('ab'));
    const k = s.span(() => s.keys('ctrl+shift+p'));
    const t3 = s.span(() => s.type('Zz\n'));
    const r = alignUitaskTrace(trace([uitaskType('ab'), uitaskType('ab'), uitaskKeys(['ctrl+shift+p']), uitaskType('Zz\n')]), s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual([t1, t2, k, t3].map((x) => [x.t0, x.t1]));
  });

  it('matches loosely and warns when the input differs from the params', () => {
    const s = new InputScript();
    const click = s.span(() => s.click(150, 150));
    s.pause(THINK);
    const typed = s.span(() => s.type('hellp'));
    s.pause(THINK);
    const scroll = s.span(() => s.scroll(10, 10, 'down', 2));
    const r = alignUitaskTrace(trace([uitaskClick({ x: 100, y: 100 }), uitaskType('hello'), uitaskScroll({ x: 10, y: 10 }, 'down', 5)]), s.events);
    expect(codes(r)).toEqual(['UITASK_ALIGN_POSITION_MISMATCH', 'UITASK_ALIGN_INPUT_MISMATCH', 'UITASK_ALIGN_PARTIAL']);
    expect(timesOf(r)).toEqual([click, typed, scroll].map((x) => [x.t0, x.t1]));
  });

  it('reports key strokes and presses that no action sent, and still times the actions', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(10, 10));
    s.pause(THINK).tap(KEYSYM.Escape).pause(THINK).click(700, 700).pause(THINK);
    const b = s.span(() => s.type('ok'));
    const r = alignUitaskTrace(trace([uitaskClick({ x: 10, y: 10 }), uitaskType('ok')]), s.events);
    expect(codes(r)).toEqual(['UITASK_ALIGN_EXTRA_INPUT']);
    expect(timesOf(r)).toEqual([a, b].map((x) => [x.t0, x.t1]));
  });

  it('gives the same result whatever order the events come in', () => {
    const s = new InputScript();
    s.click(1, 1).pause(THINK).type('Hi').pause(THINK).drag([5, 5], [50, 50]);
    const steps = trace([uitaskClick({ x: 1, y: 1 }), uitaskType('Hi'), uitaskDrag({ x: 5, y: 5 }, { x: 50, y: 50 })]);
    const shuffled = s.events
      .map((e, i) => ({ e, k: (i * 7919) % 101 }))
      .sort((x, y) => x.k - y.k)
      .map((x) => x.e);
    expect(alignUitaskTrace(steps, shuffled)).toEqual(alignUitaskTrace(steps, s.events));
  });

  it('does not warn about failed attempts without input, and places them like waits', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(10, 10));
    s.pause(THINK);
    const b = s.span(() => s.click(20, 20));
    // uitask marks no entry as failed; alignment takes any TraceEntry, and one with `error` is a failed attempt.
    const entries = trace([uitaskClick({ x: 10, y: 10 }), uitaskClick({ x: 900, y: 10 }), uitaskClick({ x: 20, y: 20 })]);
    const error = { code: 'ACTION_ERR_OFF_SCREEN', message: 'position off screen' };
    entries[1] = { ...entries[1]!, error } as TraceEntry;
    const r = alignUitaskTrace(entries, s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual([
      [a.t0, a.t1],
      [a.t1, b.t0],
      [b.t0, b.t1],
    ]);
    expect((r.entries[1] as { error?: unknown }).error).toEqual(error);
  });

  it('expects no input from press_keys whose keys name no key (uitask skips "none")', () => {
    const s = new InputScript();
    const a = s.span(() => s.click(10, 10));
    s.pause(THINK);
    const b = s.span(() => s.click(20, 20));
    const r = alignUitaskTrace(trace([uitaskClick({ x: 10, y: 10 }), uitaskKeys(['none']), uitaskClick({ x: 20, y: 20 })]), s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual([
      [a.t0, a.t1],
      [a.t1, b.t0],
      [b.t0, b.t1],
    ]);
  });

  it('spreads actions over the recording when the client sent no input, and says so', () => {
    const steps = trace([uitaskWait(1), uitaskWait(1), uitaskFinish()]);
    const placed = alignUitaskTrace(steps, [], { startAt: 1000, endAt: 3000 });
    expect(codes(placed)).toEqual(['UITASK_ALIGN_NO_INPUT']);
    expect(timesOf(placed)).toEqual([
      [1000, 2000],
      [2000, 3000],
      [3000, 3000],
    ]);
    const unknown = alignUitaskTrace(steps, []);
    expect(codes(unknown)).toEqual(['UITASK_ALIGN_NO_INPUT']);
    expect(unknown.matches.map((m) => m.placement)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(timesOf(unknown)).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
  });

  it('gives every action of a long session with a chatty client its own input', () => {
    const rnd = mulberry32(20240611);
    const pick = (n: number) => Math.floor(rnd() * n);
    const s = new InputScript();
    const steps: UitaskJsonEntry[] = [];
    const spans: Span[] = [];
    for (let i = 0; i < 80; i++) {
      for (let m = pick(6); m > 0; m--) s.move(pick(1280), pick(800)).pause(20 + pick(400)); // motion of the client's own
      s.pause(THINK);
      const x = pick(1280);
      const y = pick(800);
      const kind = pick(6);
      if (kind === 0) {
        const n = 1 + pick(3);
        spans.push(s.span(() => s.click(x, y, { count: n })));
        steps.push(uitaskClick({ x, y }, { clickType: (['single', 'double', 'triple'] as const)[n - 1] }));
      } else if (kind === 1) {
        const text = Array.from({ length: 1 + pick(40) }, () => 'aAb B,c.Zz!'[pick(11)]).join('');
        spans.push(s.span(() => s.type(text)));
        steps.push(uitaskType(text));
      } else if (kind === 2) {
        const dir = (['up', 'down', 'left', 'right'] as const)[pick(4)]!;
        const repeat = 1 + pick(5);
        spans.push(s.span(() => s.scroll(x, y, dir, repeat)));
        steps.push(uitaskScroll({ x, y }, dir, repeat));
      } else if (kind === 3) {
        spans.push(s.span(() => s.drag([x, y], [pick(1280), pick(800)], { steps: 3 + pick(10) })));
        const last = s.events[s.events.length - 1] as { x: number; y: number };
        steps.push(uitaskDrag({ x, y }, { x: last.x, y: last.y }));
      } else if (kind === 4) {
        const keys = ['Return', 'ctrl+a', 'Tab', 'ctrl+shift+p', 'BackSpace'][pick(5)]!;
        spans.push(s.span(() => s.keys(keys)));
        steps.push(uitaskKeys([keys]));
      } else {
        spans.push(s.span(() => s.move(x, y)));
        steps.push(uitaskMove({ x, y }));
      }
    }
    const r = alignUitaskTrace(trace(steps), s.events);
    expect(r.warnings).toEqual([]);
    expect(timesOf(r)).toEqual(spans.map((x) => [x.t0, x.t1]));
  });
});
