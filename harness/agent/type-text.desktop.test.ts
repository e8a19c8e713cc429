/**
 * typeText never loses a character silently, on servers that drop keysyms without a word:
 * - TigerVNC's x0vncserver (serving the Xvfb display of an x11vnc desktop) drops every keysym its US
 *   keymap lacks: é, €, ÿ never reach the page as keys;
 * - Xvnc binds at most 19 new keysyms per server lifetime, then drops the others.
 * With a cdpUrl each such character is checked and, when dropped, inserted with CDP Input.insertText,
 * which the trace entry's meta records. Without one, the trace says which characters went unchecked.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExecution } from '../trace/parse.ts';
import { ScriptAgent, startX0vncserver, useEventsDesktop } from './test-helpers/desktops.ts';

async function lastEntry(dir: string) {
  return parseExecution(JSON.parse(await readFile(join(dir, 'execution.json'), 'utf8'))).at(-1)!;
}

describe('typeText on x0vncserver (keysyms missing from its keymap are dropped)', () => {
  const env = useEventsDesktop('x11vnc');
  let x0: { url: string; close(): Promise<void> };
  let out: string;
  beforeAll(async () => {
    x0 = await startX0vncserver(env.desktop.display, env.desktop.xauthority);
    out = await env.out();
  });
  afterAll(async () => {
    await x0?.close();
  });

  /** Each run writes into its own directory (a finished run is never written over); lastRun is the latest. */
  let runs = 0;
  let lastRun = '';
  async function type(text: string, cdp: boolean): Promise<void> {
    lastRun = join(out, `run-${++runs}`);
    const agent = new ScriptAgent({ outputDir: lastRun, vncUrl: x0.url, cdpUrl: cdp ? env.desktop.cdpUrl : undefined }, async (a) => {
      await a.mouseClick({ position: { x: 900, y: 150 } });
      await a.typeText(text);
    });
    const r = await agent.run({ maxSteps: 1 });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe('finished');
  }

  it('without CDP the server really drops é € ÿ, and the trace says they went unchecked', async () => {
    await type('aé€ÿb', false);
    const s = await env.desktop.settle((s) => s.text.length >= 2, 200);
    expect(s.text).toBe('ab');
    expect((await lastEntry(lastRun)).meta).toMatchObject({ unverified: ['é', '€', 'ÿ'] });
  });

  it('with CDP "é€ÿ" arrives exactly, through Input.insertText, recorded in the trace entry', async () => {
    const text = 'aé€ÿb café';
    await type(text, true);
    const s = await env.desktop.settle((s) => s.text === text, 100);
    expect(s.text).toBe(text);
    const entry = await lastEntry(lastRun);
    expect(entry).toMatchObject({ action: 'type_text', params: { text } });
    expect(entry.meta).toEqual({ typed_via: 'keys+cdp_insert_text', cdp_inserted: ['é', '€', 'ÿ', 'é'] });
  });
});

describe('typeText on Xvnc past its 19 new keysyms', () => {
  const env = useEventsDesktop('xvnc');

  it('25 distinct new keysyms arrive exactly; the ones Xvnc could not bind went through Input.insertText', async () => {
    const text = 'абвгдежзийклмнопрстуфхцчш';
    expect(new Set(text).size).toBe(25);
    const dir = await env.out();
    const agent = new ScriptAgent({ outputDir: dir, vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl }, async (a) => {
      await a.mouseClick({ position: { x: 900, y: 150 } });
      await a.typeText(text);
    });
    const r = await agent.run({ maxSteps: 1 });
    expect(r.error).toBeUndefined();
    const s = await env.desktop.settle((s) => s.text === text, 100);
    expect(s.text).toBe(text);
    const meta = (await lastEntry(dir)).meta as { typed_via?: string; cdp_inserted?: string[] };
    expect(meta.typed_via).toBe('keys+cdp_insert_text');
    // At most 19 bound: at least the last 6 were dropped by Xvnc and inserted over CDP.
    expect(meta.cdp_inserted).toEqual(expect.arrayContaining([...'фхцчш', 'у']));
    expect(meta.cdp_inserted!.length).toBeGreaterThanOrEqual(6);
  });
});
