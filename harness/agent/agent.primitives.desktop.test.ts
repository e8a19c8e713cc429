/**
 * Each primitive on a real desktop, against both VNC servers: Xvnc (launchDesktop, over
 * WebSocket) and x11vnc (Xvfb + x11vnc, over TCP). The events page logs every pointer,
 * wheel, keyboard and drag event it receives; each test runs one agent step and checks the
 * page saw exactly the expected events (coordinates, buttons, click counts, modifiers, text).
 * One desktop per server for the whole describe block; the page is reset before each test.
 *
 * Xvnc binds at most 19 new keysyms per server lifetime (see harness/keys/plan.ts): the
 * non-ASCII text below uses 9.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseExecution } from '../trace/parse.ts';
import { ScriptAgent, useEventsDesktop, type PageEvent, type PageState, type ServerKind } from './test-helpers/desktops.ts';

const POINTER_TYPES = new Set(['mousedown', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu']);

/** The pointer events except moves, as compact tuples. */
function clicks(s: PageState): Array<[string, number, number, number, number]> {
  return s.events.filter((e) => POINTER_TYPES.has(e.type)).map((e) => [e.type, e.x, e.y, e.button, e.detail]);
}

function count(s: PageState, type: string): number {
  return s.events.filter((e) => e.type === type).length;
}

describe.each<ServerKind>(['xvnc', 'x11vnc'])('Agent primitives on %s', (kind) => {
  const env = useEventsDesktop(kind);
  let out: string;
  beforeAll(async () => {
    out = await env.out();
  });

  /** Each step's own output directory (a finished run is never written over). */
  let runs = 0;
  const runDir = () => join(out, String(runs));

  /** Run one agent step that performs `script`; fail the test if the run did not finish. */
  async function step(script: (a: ScriptAgent) => Promise<unknown>): Promise<void> {
    runs++;
    const agent = new ScriptAgent({ outputDir: runDir(), vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl }, script);
    const result = await agent.run({ maxSteps: 1 });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('finished');
  }

  async function trace() {
    return parseExecution(JSON.parse(await readFile(join(runDir(), 'execution.json'), 'utf8')));
  }

  it('mouseMove: the page sees the pointer at exactly that position and no button event', async () => {
    await step((a) => a.mouseMove({ x: 123, y: 45 }));
    const s = await env.desktop.settle((s) => s.events.some((e) => e.type === 'mousemove' && e.x === 123 && e.y === 45));
    const moves = s.events.filter((e) => e.type === 'mousemove');
    expect(moves.at(-1)).toMatchObject({ x: 123, y: 45, buttons: 0 });
    expect(clicks(s)).toEqual([]);
    const t = await trace();
    expect(t).toHaveLength(1);
    expect(t[0]).toMatchObject({ index: 0, action: 'mouse_move', params: { position: { x: 123, y: 45 } } });
    expect(t[0]!.task_marked_complete).toBe(false);
  });

  it('mouseClick single left: one mousedown/mouseup/click at the position, click count 1', async () => {
    await step((a) => a.mouseClick({ position: { x: 101, y: 102 }, button: 'left', clickType: 'single' }));
    const s = await env.desktop.settle((s) => count(s, 'click') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 101, 102, 0, 1],
      ['mouseup', 101, 102, 0, 1],
      ['click', 101, 102, 0, 1],
    ]);
    expect(s.events.find((e) => e.type === 'mousedown')?.buttons).toBe(1);
    expect((await trace())[0]).toMatchObject({ action: 'mouse_click', params: { position: { x: 101, y: 102 }, button: 'left', click_type: 'single' } });
  });

  it('mouseClick double: click counts 1 and 2 and exactly one dblclick', async () => {
    await step((a) => a.mouseClick({ position: { x: 150, y: 60 }, clickType: 'double' }));
    const s = await env.desktop.settle((s) => count(s, 'dblclick') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 150, 60, 0, 1],
      ['mouseup', 150, 60, 0, 1],
      ['click', 150, 60, 0, 1],
      ['mousedown', 150, 60, 0, 2],
      ['mouseup', 150, 60, 0, 2],
      ['click', 150, 60, 0, 2],
      ['dblclick', 150, 60, 0, 2],
    ]);
  });

  it('mouseClick triple: click counts 1, 2, 3 and one dblclick', async () => {
    await step((a) => a.mouseClick({ position: { x: 250, y: 200 }, clickType: 'triple' }));
    const s = await env.desktop.settle((s) => s.events.some((e) => e.type === 'click' && e.detail === 3));
    expect(s.events.filter((e) => e.type === 'click').map((e) => e.detail)).toEqual([1, 2, 3]);
    expect(s.events.filter((e) => e.type === 'mousedown').map((e) => e.detail)).toEqual([1, 2, 3]);
    expect(count(s, 'dblclick')).toBe(1);
    expect(s.events.filter((e) => POINTER_TYPES.has(e.type)).every((e) => e.x === 250 && e.y === 200)).toBe(true);
  });

  it('mouseClick right: button 2 with a contextmenu, no click; middle: button 1 with an auxclick, no click', async () => {
    await step((a) => a.mouseClick({ position: { x: 200, y: 100 }, button: 'right' }));
    let s = await env.desktop.settle((s) => count(s, 'mouseup') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 200, 100, 2, 1],
      ['contextmenu', 200, 100, 2, 0],
      ['mouseup', 200, 100, 2, 1],
      ['auxclick', 200, 100, 2, 1],
    ]);
    expect(s.events.find((e) => e.type === 'mousedown')?.buttons).toBe(2);

    await env.desktop.reset();
    await step((a) => a.mouseClick({ position: { x: 300, y: 110 }, button: 'middle' }));
    s = await env.desktop.settle((s) => count(s, 'auxclick') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 300, 110, 1, 1],
      ['mouseup', 300, 110, 1, 1],
      ['auxclick', 300, 110, 1, 1],
    ]);
    expect(s.events.find((e) => e.type === 'mousedown')?.buttons).toBe(4);
  });

  it('mouseClick without a position clicks where the pointer is; fractional positions round to the nearest pixel', async () => {
    await step(async (a) => {
      await a.mouseMove({ x: 333.4, y: 77.6 });
      await a.mouseClick({});
    });
    const s = await env.desktop.settle((s) => count(s, 'click') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 333, 78, 0, 1],
      ['mouseup', 333, 78, 0, 1],
      ['click', 333, 78, 0, 1],
    ]);
    const t = await trace();
    expect(t.map((e) => e.action)).toEqual(['mouse_move', 'mouse_click']);
    expect(t[1]!.params).toEqual({ button: 'left', click_type: 'single' });
  });

  it('actions called without await run one at a time, in call order, each landing exactly once', async () => {
    await step(async (a) => {
      await Promise.all([
        a.mouseClick({ position: { x: 40, y: 40 } }),
        a.mouseClick({ position: { x: 80, y: 40 }, clickType: 'double' }),
        a.mouseClick({ position: { x: 120, y: 40 }, button: 'right' }),
      ]);
    });
    const s = await env.desktop.settle((s) => count(s, 'auxclick') >= 1);
    expect(clicks(s)).toEqual([
      ['mousedown', 40, 40, 0, 1],
      ['mouseup', 40, 40, 0, 1],
      ['click', 40, 40, 0, 1],
      ['mousedown', 80, 40, 0, 1],
      ['mouseup', 80, 40, 0, 1],
      ['click', 80, 40, 0, 1],
      ['mousedown', 80, 40, 0, 2],
      ['mouseup', 80, 40, 0, 2],
      ['click', 80, 40, 0, 2],
      ['dblclick', 80, 40, 0, 2],
      ['mousedown', 120, 40, 2, 1],
      ['contextmenu', 120, 40, 2, 0],
      ['mouseup', 120, 40, 2, 1],
      ['auxclick', 120, 40, 2, 1],
    ]);
    expect((await trace()).map((e) => e.index)).toEqual([0, 1, 2]);
  });

  it('pressKeys("ctrl+shift+p"): keydowns in order with the modifier flags, keyups in reverse', async () => {
    await step((a) => a.pressKeys('ctrl+shift+p'));
    const s = await env.desktop.settle((s) => count(s, 'keyup') >= 3);
    const keys = s.events.filter((e) => e.type === 'keydown' || e.type === 'keyup').map((e: PageEvent) => [e.type, e.key, e.ctrl, e.shift, e.alt, e.meta]);
    expect(keys).toEqual([
      ['keydown', 'Control', true, false, false, false],
      ['keydown', 'Shift', true, true, false, false],
      ['keydown', 'P', true, true, false, false],
      ['keyup', 'P', true, true, false, false],
      ['keyup', 'Shift', true, false, false, false],
      ['keyup', 'Control', false, false, false, false],
    ]);
    expect(s.events.find((e) => e.key === 'P')?.code).toBe('KeyP');
  });

  it('typeText: every printable ASCII character, accented letters, CJK and emoji arrive exactly', async () => {
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    const text = `${ascii}\nnaïve café Ümlaut ß ñ 中文 😀 👍`;
    await step(async (a) => {
      await a.mouseClick({ position: { x: 900, y: 150 } });
      await a.typeText(text);
    });
    const s = await env.desktop.settle((s) => s.text === text, 100);
    expect(s.text).toBe(text);
    expect((await trace())[1]).toMatchObject({ action: 'type_text', params: { text } });
  });

  it('mouseScroll: one wheel event per notch with the right sign (left/right are Shift + wheel)', async () => {
    const at = { x: 150, y: 420 };
    await step(async (a) => {
      await a.mouseScroll({ position: at, direction: 'down', repeat: 3 });
      await a.mouseScroll({ position: at, direction: 'up', repeat: 1 });
      await a.mouseScroll({ position: at, direction: 'right', repeat: 2 });
      await a.mouseScroll({ position: at, direction: 'left', repeat: 1 });
    });
    const s = await env.desktop.settle((s) => count(s, 'wheel') >= 7);
    const wheels = s.events.filter((e) => e.type === 'wheel').map((e) => [Math.sign(e.deltaY!), e.shift, e.x, e.y]);
    expect(wheels).toEqual([
      [1, false, 150, 420],
      [1, false, 150, 420],
      [1, false, 150, 420],
      [-1, false, 150, 420],
      [1, true, 150, 420],
      [1, true, 150, 420],
      [-1, true, 150, 420],
    ]);
    // The scroller moved down 3 - 1 notches and right 2 - 1 notches.
    expect(s.scroll.top).toBeGreaterThan(0);
    expect(s.scroll.left).toBeGreaterThan(0);
    expect(s.scroll.top).toBe(s.scroll.left * 2);
    const t = await trace();
    expect(t.map((e) => e.params)).toEqual([
      { position: at, direction: 'down', repeat: 3 },
      { position: at, direction: 'up', repeat: 1 },
      { position: at, direction: 'right', repeat: 2 },
      { position: at, direction: 'left', repeat: 1 },
    ]);
  });

  it('mouseDrag: a native HTML5 drag-and-drop reaches the drop target', async () => {
    await step((a) => a.mouseDrag({ start: { x: 380, y: 380 }, end: { x: 630, y: 410 }, button: 'left' }));
    const s = await env.desktop.settle((s) => count(s, 'drop') >= 1);
    expect(count(s, 'dragstart')).toBe(1);
    expect(s.events.filter((e) => e.type === 'drop')).toEqual([expect.objectContaining({ target: 'dst', data: 'src' })]);
    expect((await trace())[0]).toMatchObject({ action: 'mouse_drag', params: { start: { x: 380, y: 380 }, end: { x: 630, y: 410 }, button: 'left' } });
  });

  it('mouseDrag: an <input type=range> follows the pointer through intermediate values', async () => {
    // The 400 px slider starts at x = 760; its thumb (value 0) is near the left end.
    await step((a) => a.mouseDrag({ start: { x: 767, y: 392 }, end: { x: 960, y: 392 } }));
    const s = await env.desktop.settle((s) => count(s, 'mouseup') >= 1);
    const values = s.events.filter((e) => e.type === 'input' && e.target === 'slider').map((e) => Number(e.value));
    expect(values.length).toBeGreaterThan(3);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(s.slider).toBeGreaterThanOrEqual(45);
    expect(s.slider).toBeLessThanOrEqual(55);
    expect(count(s, 'mousedown')).toBe(1);
    expect(count(s, 'mouseup')).toBe(1);
  });

  it('pageNavigation: back and forward move through the browser history (Alt+Left / Alt+Right)', async () => {
    await env.desktop.page.goto(`${env.desktop.pageUrl}?p=1`);
    await env.desktop.page.goto(`${env.desktop.pageUrl}?p=2`);
    await step((a) => a.pageNavigation('back'));
    await env.desktop.page.waitForURL(/\?p=1$/);
    await step((a) => a.pageNavigation('forward'));
    await env.desktop.page.waitForURL(/\?p=2$/);
    expect(env.desktop.page.url()).toBe(`${env.desktop.pageUrl}?p=2`);
    expect((await trace())[0]).toMatchObject({ action: 'page_navigation', params: { direction: 'forward' } });
  });

  it('screenshot and clientResolution report the desktop (not recorded as actions)', async () => {
    let png = '';
    let size = { width: 0, height: 0 };
    await step(async (a) => {
      png = await a.screenshot();
      size = await a.clientResolution();
      await a.wait(0);
    });
    expect(size).toEqual({ width: 1280, height: 800 });
    const bytes = Buffer.from(png, 'base64');
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(bytes.readUInt32BE(16)).toBe(1280);
    expect(bytes.readUInt32BE(20)).toBe(800);
    expect((await trace()).map((e) => e.action)).toEqual(['wait']);
  });
});
