/**
 * Which page "the user sees", when the browser has several (popups, window.open, new tabs).
 *
 * The rule:
 * 1. Only web pages count: targets whose URL starts with chrome://, chrome-untrusted://,
 *    chrome-extension://, chrome-search://, devtools:// or edge:// are skipped (this drops
 *    "Omnibox Popup" and other browser-UI targets that some Chromium builds list as pages).
 * 2. Among the rest, rank by `document.visibilityState === 'visible'` (worth 2) plus
 *    `document.hasFocus()` (worth 1): a visible, focused page beats a visible one, which beats a
 *    hidden (background-tab) one.
 * 3. Ties go to the most recently opened page (the order the checker first saw them; pages that
 *    already existed when it connected keep the browser's listing order).
 *
 * A page that is mid-navigation (its state cannot be read) is assumed visible but not focused;
 * a page showing a JavaScript dialog is assumed visible and focused (dialogs only show on the
 * foreground tab).
 */

const NON_WEB_SCHEMES = ['chrome:', 'chrome-untrusted:', 'chrome-extension:', 'chrome-search:', 'devtools:', 'edge:'];

/** True for a page URL the success check may look at (not browser UI, devtools or an extension). */
export function isCheckableUrl(url: string): boolean {
  const lower = url.toLowerCase();
  return !NON_WEB_SCHEMES.some((scheme) => lower.startsWith(scheme));
}

/** What the ranking needs to know about one page. */
export interface PageView {
  /** Order in which the checker first saw the page (higher = newer). */
  readonly seq: number;
  /** `document.visibilityState === 'visible'`. */
  readonly visible: boolean;
  /** `document.hasFocus()`. */
  readonly focused: boolean;
}

/** The rank of one page: 2 for visible, plus 1 for focused. */
export function pageRank(view: Pick<PageView, 'visible' | 'focused'>): number {
  return (view.visible ? 2 : 0) + (view.focused ? 1 : 0);
}

/** The page the user sees (see the rule above), or undefined for an empty list. */
export function pickActive<T extends PageView>(views: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const v of views) {
    if (best === undefined) {
      best = v;
      continue;
    }
    const a = pageRank(v);
    const b = pageRank(best);
    if (a > b || (a === b && v.seq > best.seq)) best = v;
  }
  return best;
}
