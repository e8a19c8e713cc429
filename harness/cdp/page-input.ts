/**
 * What the agent reads from the page over CDP to make sure no input is lost: for typeText, the focused text
 * field's content, a count of the Shift releases the page received, and `Input.insertText`; for multi-clicks,
 * a count of mouse presses and the last one's click count.
 *
 * The page's own JavaScript sees none of it: the reads and the key-release counter run in an isolated
 * world (`Page.createIsolatedWorld`, as extensions' content scripts do), which shares the DOM but not
 * the page's globals, and the counter (of Shift releases, the fence typeText sends after a key it checks)
 * and the press counter are passive capturing listeners. `Input.insertText` is the
 * fallback route: it inserts text at the caret as an input method commits it (input events, no key
 * events).
 */
import type { CDPSession } from 'playwright-core';

/** The focused text field: an <input>/<textarea> value with its selection, or a contenteditable's text. */
export interface FieldState {
  kind: 'value' | 'text';
  value: string;
  /** Selection start/end in UTF-16 units (null for contenteditable and input types without a selection). */
  start: number | null;
  end: number | null;
}

const WORLD = 'vncua-typing';

/** Reads the focused field in the isolated world; null when the focus is not in an editable field of the main frame. */
const STATE_EXPRESSION = `(() => {
  const a = document.activeElement;
  if (!a || a.tagName === 'IFRAME' || a.tagName === 'FRAME') return null;
  if (a instanceof HTMLTextAreaElement || a instanceof HTMLInputElement) {
    let start = null, end = null;
    try { start = a.selectionStart; end = a.selectionEnd; } catch (e) { /* no selection on this input type */ }
    return { kind: 'value', value: a.value, start, end };
  }
  if (a.isContentEditable) return { kind: 'text', value: a.textContent || '', start: null, end: null };
  return null;
})()`;

/**
 * Counts Shift releases (the fence typeText sends after a key it must check) and mouse presses with the last
 * press's click count (what a multi-click must end with).
 */
const INSTALL_EXPRESSION = `(() => {
  if (typeof globalThis.__vncuaFences !== 'number') {
    globalThis.__vncuaFences = 0;
    globalThis.__vncuaPresses = [0, 0];
    addEventListener('keyup', (e) => { if (e.key === 'Shift') globalThis.__vncuaFences++; }, { capture: true, passive: true });
    addEventListener('mousedown', (e) => { globalThis.__vncuaPresses = [globalThis.__vncuaPresses[0] + 1, e.detail]; }, { capture: true, passive: true });
  }
  return globalThis.__vncuaFences;
})()`;

/** The world opened on each page session (see PageInput.open). */
const opened = new WeakMap<CDPSession, PageInput>();

/** What the page received, read over its CDP session: the focused field, fences, mouse presses; and Input.insertText. */
export class PageInput {
  private constructor(
    private readonly session: CDPSession,
    private readonly contextId: number,
  ) {}

  /**
   * Open the isolated world on the page's main frame and install the Shift-release counter; null when the page does
   * not allow it. The world is reused while its document lives (one world and one listener per document).
   */
  static async open(session: CDPSession): Promise<PageInput | null> {
    const cached = opened.get(session);
    if (cached && typeof (await cached.evaluate(INSTALL_EXPRESSION).catch(() => null)) === 'number') return cached;
    opened.delete(session);
    try {
      const tree = await session.send('Page.getFrameTree');
      const world = await session.send('Page.createIsolatedWorld', { frameId: tree.frameTree.frame.id, worldName: WORLD });
      const f = new PageInput(session, world.executionContextId);
      if (typeof (await f.evaluate(INSTALL_EXPRESSION)) !== 'number') return null;
      opened.set(session, f);
      return f;
    } catch {
      return null;
    }
  }

  /** The focused field's content, or null when the focus is not in an editable field (or the page is between documents). */
  async state(): Promise<FieldState | null> {
    try {
      const v = await this.evaluate(STATE_EXPRESSION);
      return v && typeof v === 'object' ? (v as FieldState) : null;
    } catch {
      return null;
    }
  }

  /** Shift releases the page received since open() (-1 when it cannot be read: the document changed). */
  async fences(): Promise<number> {
    try {
      const v = await this.evaluate('globalThis.__vncuaFences');
      return typeof v === 'number' ? v : -1;
    } catch {
      return -1;
    }
  }

  /** Mouse presses the page received since open(), and the click count (`detail`) of the last one; null when unreadable. */
  async presses(): Promise<{ count: number; detail: number } | null> {
    try {
      const v = await this.evaluate('globalThis.__vncuaPresses');
      return Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'number' ? { count: v[0], detail: v[1] } : null;
    } catch {
      return null;
    }
  }

  /** Insert `text` at the caret of the focused field (CDP Input.insertText). */
  async insertText(text: string): Promise<void> {
    await this.session.send('Input.insertText', { text });
  }

  private async evaluate(expression: string): Promise<unknown> {
    const r = await this.session.send('Runtime.evaluate', { expression, contextId: this.contextId, returnByValue: true, silent: true });
    if (r.exceptionDetails) throw new Error(r.exceptionDetails.text);
    return r.result.value;
  }
}
