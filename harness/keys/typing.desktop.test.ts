/**
 * Real-desktop check of the typing plans: TigerVNC Xvnc (US keymap) + Chromium, KeyEvents
 * sent over a raw RFB connection, the result read back from a <textarea> through CDP.
 *
 * Xvnc binds each keysym missing from its keymap to one of 19 spare keycodes and never frees
 * them, so one server can take at most 19 distinct new keysyms: the Unicode cases are split
 * over two desktops.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOnUsKeymap, KEYSYM, KEYSYM_F1, KEYSYM_KP_0 } from './keysyms.ts';
import { parseKeys } from './parse.ts';
import { isPause, keysymsToPrime, planKeyPress, planTypeText, type KeyStroke } from './plan.ts';
import { connectKeyClient, startTypingDesktop, type KeyClient, type TypingDesktop } from './test-helpers/desktop.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = promisify(execFile);

/** A desktop plus an RFB key client, tracking primed keysyms the way the Agent will. */
class Typist {
  readonly mapped = new Set<number>();
  private constructor(
    readonly desktop: TypingDesktop,
    readonly keys: KeyClient,
  ) {}

  static async start(): Promise<Typist> {
    const desktop = await startTypingDesktop();
    try {
      return new Typist(desktop, await connectKeyClient(desktop.vncUrl));
    } catch (e) {
      await desktop.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    try {
      this.keys.close();
    } catch {
      /* already closed */
    }
    await this.desktop.close();
  }

  /** Send a plan; remember which keysyms it bound on the server. */
  async send(steps: KeyStroke[]): Promise<void> {
    for (const s of steps) {
      if (isPause(s)) {
        await this.keys.flush();
        await sleep(s.pauseMs);
      } else {
        this.keys.key(s.keysym, s.down);
        if (s.down) for (const k of keysymsToPrime([s.keysym], this.mapped)) this.mapped.add(k);
      }
    }
    await this.keys.flush();
  }

  async clear(): Promise<void> {
    await this.desktop.page.evaluate(() => {
      const t = document.getElementById('t') as HTMLTextAreaElement;
      t.value = '';
      t.focus();
      (window as unknown as { keydowns: string[] }).keydowns.length = 0;
    });
  }

  value(): Promise<string> {
    return this.desktop.page.evaluate(() => (document.getElementById('t') as HTMLTextAreaElement).value);
  }

  /** Wait until the textarea holds `expected` (or 3 s pass) and return what it holds. */
  async settle(expected: string): Promise<string> {
    const end = Date.now() + 3000;
    let v = await this.value();
    while (v !== expected && Date.now() < end) {
      await sleep(20);
      v = await this.value();
    }
    return v;
  }

  /** Clear the textarea, type `text` through planTypeText and return what arrived. */
  async type(text: string, expected = text): Promise<string> {
    await this.clear();
    await this.send(planTypeText(text, { alreadyMapped: this.mapped }));
    return await this.settle(expected);
  }

  async capsLockOn(): Promise<boolean> {
    const { stdout } = await run('xset', ['-display', `:${this.desktop.display}`, 'q'], { env: { ...process.env, XAUTHORITY: this.desktop.xauthority } });
    return /Caps Lock:\s*on/.test(stdout);
  }
}

describe('typing on a real Xvnc + Chromium (first desktop)', () => {
  let t: Typist;
  beforeAll(async () => {
    t = await Typist.start();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("isOnUsKeymap matches the keysyms in Xvnc's default keymap (checked before any typing)", async () => {
    const { stdout } = await run('xmodmap', ['-display', `:${t.desktop.display}`, '-pk'], { env: { ...process.env, XAUTHORITY: t.desktop.xauthority } });
    const present = new Set([...stdout.matchAll(/0x([0-9a-f]{4,8}) \(/g)].map((m) => Number.parseInt(m[1] ?? '0', 16)));
    const candidates = [
      ...Object.values(KEYSYM),
      ...Array.from({ length: 35 }, (_, i) => KEYSYM_F1 + i),
      ...Array.from({ length: 10 }, (_, i) => KEYSYM_KP_0 + i),
      ...Array.from({ length: 95 }, (_, i) => 0x20 + i),
      0xe9,
      0xdf,
      0x10020ac,
    ];
    const wrong = candidates.filter((k) => isOnUsKeymap(k) !== present.has(k)).map((k) => k.toString(16));
    expect(wrong).toEqual([]);
  });

  it('types every printable ASCII character exactly and leaves Caps Lock off', async () => {
    const all = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    expect(await t.type(all)).toBe(all);
    expect(await t.type('Hello, World! ~`{}|:"<>?')).toBe('Hello, World! ~`{}|:"<>?');
    expect(await t.capsLockOn()).toBe(false);
  });

  it('types \\n, \\r\\n and \\r as Return and sends Tab as a Tab key', async () => {
    expect(await t.type('one\ntwo\r\nthree\rfour', 'one\ntwo\nthree\nfour')).toBe('one\ntwo\nthree\nfour');
    await t.clear();
    await t.send(planTypeText('x\t'));
    await t.settle('x');
    const keydowns = await t.desktop.page.evaluate(() => (window as unknown as { keydowns: string[] }).keydowns);
    expect(keydowns).toEqual(['x', 'Tab']);
    await t.desktop.page.focus('#t');
  });

  it('presses parsed key combinations: sequences, single characters, Shift chords, Left, Ctrl+A', async () => {
    await t.clear();
    for (const k of ['-12', 'A', '?', 'shift+1', 'space', 'a', 'c', 'Left', 'b']) await t.send(planKeyPress(parseKeys(k)));
    expect(await t.settle('-12A?! abc')).toBe('-12A?! abc');
    await t.send(planKeyPress(parseKeys('ctrl+a')));
    await t.send(planTypeText('Z'));
    expect(await t.settle('Z')).toBe('Z');
    await t.send(planKeyPress(parseKeys('BackSpace')));
    expect(await t.settle('')).toBe('');
  });

  // 19 distinct new keysyms: exactly the spare keycodes of a fresh Xvnc.
  const firstBatch = ['é', 'ß', 'ñ', 'ü', 'Å', '€', '中文', '日本語', '한국어', '😀', '👍🏽', '🇫🇷', 'åÅ'];
  for (const text of firstBatch) {
    it(`types ${JSON.stringify(text)} exactly`, async () => {
      expect(await t.type(text)).toBe(text);
    });
  }

  it('types the other case of bound letters without new keycodes (Xvnc binds é/É as one key)', async () => {
    const text = 'Éric: ÜBER-Ñ, ß 中文 😀 👍🏽 🇫🇷!';
    expect(await t.type(text)).toBe(text);
    expect(await t.capsLockOn()).toBe(false);
  });

  it("documents Xvnc's limit: once its 19 spare keycodes are used, a new keysym is dropped", async () => {
    // Every spare keycode is bound by now; ï (U+00EF) is new. Xvnc logs "Failure adding new keysym".
    expect(await t.type('aïb', 'ab')).toBe('ab');
  });
});

describe('typing on a real Xvnc + Chromium (second desktop)', () => {
  let t: Typist;
  beforeAll(async () => {
    t = await Typist.start();
  });
  afterAll(async () => {
    await t?.close();
  });

  const secondBatch = ['👨‍👩‍👧', 'e\u0301', '❤️', '🏳️‍🌈', 'naïve café 👨‍👩‍👧 ❤️'];
  for (const text of secondBatch) {
    it(`types ${JSON.stringify(text)} exactly`, async () => {
      expect(await t.type(text)).toBe(text);
    });
  }
});
