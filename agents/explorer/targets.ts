/**
 * Candidate targets: from the DOM (one Runtime.evaluate per step of TARGETS_PROBE, which lists the visible,
 * reachable interactive elements with their boxes in screen pixels), or, without CDP or on a canvas, from the screen
 * (cells of a grey grid with contrast). Parsing and ordering are pure: targets are sorted by key, so which one is
 * picked never depends on timing.
 */
import type { Target, TargetKind } from './types.ts';
import type { GreyGrid, RgbaFrame } from './progress.ts';

/** A target with what the heuristics need beyond the contract's fields. */
export interface SeenTarget extends Target {
  /** An input's type (text, email, number, checkbox...), lower-case; a select's 'select'. */
  inputType?: string;
  /** name, id, placeholder and autocomplete of a field, joined, lower-case (to guess a plausible value). */
  hint?: string;
  /** A field that already holds a value, a checked box. */
  filled?: boolean;
  /** Inside an open dialog (dialog[open], role=dialog, aria-modal). */
  inDialog?: boolean;
}

/** What the probe reports about the page beside the targets. */
export interface PageScan {
  url: string;
  title: string;
  /** Viewport size in CSS pixels. */
  viewport: { width: number; height: number };
  /** Fraction of the viewport covered by the largest visible canvas (0..1). */
  canvasCover: number;
  /** The page can scroll further down. */
  canScrollDown: boolean;
  /** Some dialog is open. */
  dialogOpen: boolean;
  /** The document has loaded (readyState 'complete': stylesheets applied, boxes final). */
  loaded: boolean;
  targets: SeenTarget[];
}

/**
 * The in-page expression: visible, enabled interactive elements (by tag and ARIA role, and elements only script makes
 * clickable, found by their pointer cursor) that are hit-testable at their centre (not covered by an overlay), with
 * their boxes mapped to screen pixels (window.screenX/Y plus the browser UI above the viewport, times
 * devicePixelRatio). Returns raw rows; parseScan() checks and normalizes them.
 */
export const TARGETS_PROBE = `(() => {
  const dpr = window.devicePixelRatio || 1;
  const ox = window.screenX + Math.max(0, (window.outerWidth - window.innerWidth) / 2);
  const oy = window.screenY + Math.max(0, window.outerHeight - window.innerHeight);
  const vw = window.innerWidth, vh = window.innerHeight;
  const sel = 'a[href],button,input,textarea,select,summary,canvas,[role=button],[role=link],[role=tab],[role=menuitem],[role=checkbox],[role=radio],[role=option],[onclick],[contenteditable=true],[tabindex]:not([tabindex="-1"])';
  const rows = [];
  let cover = 0;
  const counts = {};
  const path = (el) => { const p = []; for (let e = el; e && e.nodeType === 1 && p.length < 4; e = e.parentElement) p.unshift(e.id ? e.tagName.toLowerCase() + '#' + e.id : e.tagName.toLowerCase()); return p.join('>'); };
  const found = Array.from(document.querySelectorAll(sel));
  // Elements made clickable by script alone (a framework's listener on a div): the outermost one with a pointer
  // cursor that neither is inside an interactive element nor holds one; at most 3000 looked at.
  let looked = 0;
  for (const el of document.querySelectorAll('div,span,li,img,svg,td,tr,p,label,h1,h2,h3,h4,h5,i,section,article')) {
    if (++looked > 3000) break;
    if (el.closest(sel) || el.querySelector(sel) || getComputedStyle(el).cursor !== 'pointer') continue;
    const up = el.parentElement;
    if (up && getComputedStyle(up).cursor === 'pointer') continue;
    found.push(el);
  }
  for (const el of found) {
    if (rows.length >= 300) break;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || r.bottom <= 0 || r.right <= 0 || r.top >= vh || r.left >= vw) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || Number(cs.opacity) === 0 || cs.pointerEvents === 'none') continue;
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') continue;
    const tag = el.tagName.toLowerCase();
    if (tag === 'input' && el.type === 'hidden') continue;
    const x0 = Math.max(0, r.left), y0 = Math.max(0, r.top), x1 = Math.min(vw, r.right), y1 = Math.min(vh, r.bottom);
    const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    const hit = document.elementFromPoint(cx, cy);
    if (!hit || !(hit === el || el.contains(hit) || (hit.tagName === 'LABEL' && hit.control === el))) continue;
    if (tag === 'canvas') cover = Math.max(cover, ((x1 - x0) * (y1 - y0)) / (vw * vh));
    const role = el.getAttribute('role') || '';
    const label = (el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].innerText) || el.innerText || el.value || el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('alt') || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
    // The element's identity must not change when it is filled in: a field's value is left out of its key.
    const field = tag === 'textarea' || tag === 'select' || (tag === 'input' && !['button', 'submit', 'reset', 'image'].includes(el.type));
    const name = field ? (el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].innerText) || el.getAttribute('placeholder') || el.getAttribute('title') || '').replace(/\\s+/g, ' ').trim().slice(0, 80) : label;
    const hint = [el.getAttribute('name'), el.id, el.getAttribute('placeholder'), el.getAttribute('autocomplete'), el.getAttribute('inputmode')].filter(Boolean).join(' ').toLowerCase();
    const filled = tag === 'select' ? el.selectedIndex > 0 : (el.type === 'checkbox' || el.type === 'radio') ? el.checked : (tag === 'input' || tag === 'textarea') ? el.value !== '' : false;
    const base = [tag, role, el.type || '', name, el.getAttribute('href') || '', el.getAttribute('name') || '', path(el)].join('|');
    counts[base] = (counts[base] || 0) + 1;
    rows.push({
      tag, role, type: tag === 'select' ? 'select' : (el.type || '').toLowerCase(), label, name, hint, filled,
      href: tag === 'a' ? el.href : '',
      id: base + '|' + counts[base],
      inDialog: !!el.closest('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]'),
      box: [Math.round((ox + x0) * dpr), Math.round((oy + y0) * dpr), Math.round((x1 - x0) * dpr), Math.round((y1 - y0) * dpr)],
    });
  }
  const se = document.scrollingElement || document.documentElement;
  return {
    url: location.href, title: document.title, vw, vh, cover, ready: document.readyState === 'complete',
    down: se.scrollTop + vh < se.scrollHeight - 2,
    dialog: !!document.querySelector('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]'),
    rows,
  };
})()`;

/** The kind of a probed element, from its tag, role and type. */
export function kindOf(tag: string, role: string, type: string): TargetKind {
  if (role === 'tab') return 'tab';
  if (role === 'menuitem' || role === 'option') return 'menuitem';
  if (role === 'checkbox' || type === 'checkbox') return 'checkbox';
  if (role === 'radio' || type === 'radio') return 'radio';
  if (tag === 'canvas') return 'canvas';
  if (tag === 'select') return 'select';
  if (tag === 'textarea') return 'textarea';
  if (tag === 'input') return ['button', 'submit', 'reset', 'image'].includes(type) ? 'button' : 'input';
  if (tag === 'a' || role === 'link') return 'link';
  if (tag === 'button' || tag === 'summary' || role === 'button') return 'button';
  return 'other';
}

/** A short stable hash (FNV-1a, 8 hex digits) of a string. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Check and normalize what TARGETS_PROBE returned (null when it is not its shape); targets sorted by key, boxes clipped to the screen. */
export function parseScan(value: unknown, screen: { width: number; height: number }): PageScan | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!Array.isArray(v.rows)) return null;
  const targets: SeenTarget[] = [];
  for (const raw of v.rows as unknown[]) {
    if (typeof raw !== 'object' || raw === null) continue;
    const r = raw as Record<string, unknown>;
    const b = r.box;
    if (!Array.isArray(b) || b.length !== 4 || !b.every((n) => typeof n === 'number' && Number.isFinite(n))) continue;
    const [bx, by, bw, bh] = b as number[];
    const x = Math.max(0, Math.min(screen.width - 1, bx!));
    const y = Math.max(0, Math.min(screen.height - 1, by!));
    const width = Math.max(1, Math.min(screen.width - x, bw! - (x - bx!)));
    const height = Math.max(1, Math.min(screen.height - y, bh! - (y - by!)));
    const kind = kindOf(str(r.tag), str(r.role), str(r.type));
    const label = str(r.label);
    // Keyed by the element's name (a field's value left out: filling a field does not make it a new element).
    const name = typeof r.name === 'string' ? r.name : label;
    const t: SeenTarget = { key: `${kind}:${name.slice(0, 40)}:${shortHash(str(r.id))}`, kind, label, box: { x, y, width, height }, source: 'dom' };
    if (str(r.href)) t.href = str(r.href);
    if (str(r.type)) t.inputType = str(r.type);
    if (str(r.hint)) t.hint = str(r.hint);
    if (r.filled === true) t.filled = true;
    if (r.inDialog === true) t.inDialog = true;
    targets.push(t);
  }
  targets.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const num = (n: unknown, d: number) => (typeof n === 'number' && Number.isFinite(n) ? n : d);
  return {
    url: str(v.url),
    title: str(v.title),
    viewport: { width: num(v.vw, screen.width), height: num(v.vh, screen.height) },
    canvasCover: Math.max(0, Math.min(1, num(v.cover, 0))),
    canScrollDown: v.down === true,
    dialogOpen: v.dialog === true,
    loaded: v.ready !== false,
    targets,
  };
}

/** Default grey standard deviation above which a screen cell counts as holding something (text, an edge, a sprite). */
export const SCREEN_CONTRAST = 12;

/**
 * Where the "ink" of a box is: the centroid of its pixels (every other one) whose grey differs from the box's top-left
 * pixel (taken as the background) by more than 40; null when there is none. A region is clicked there, on its text or
 * shape, not on its empty centre.
 */
export function inkCentre(frame: RgbaFrame, box: { x: number; y: number; width: number; height: number }): { x: number; y: number } | null {
  const grey = (x: number, y: number) => {
    const i = (y * frame.width + x) * 4;
    return (frame.data[i]! * 77 + frame.data[i + 1]! * 150 + frame.data[i + 2]! * 29) >> 8;
  };
  const bg = grey(box.x, box.y);
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let y = box.y; y < Math.min(frame.height, box.y + box.height); y += 2) {
    for (let x = box.x; x < Math.min(frame.width, box.x + box.width); x += 2) {
      if (Math.abs(grey(x, y) - bg) > 40) {
        sx += x;
        sy += y;
        n++;
      }
    }
  }
  return n ? { x: Math.round(sx / n), y: Math.round(sy / n) } : null;
}

/**
 * Screen-only candidates: the cells of `grid` with contrast above `minStd`, as targets keyed by cell (sorted by key).
 * With `frame`, a cell's box shrinks to an 8-pixel square centred on its ink (inkCentre), so its centre is clicked there.
 */
export function screenTargets(grid: GreyGrid, screen: { width: number; height: number }, minStd = SCREEN_CONTRAST, frame?: RgbaFrame): SeenTarget[] {
  const out: SeenTarget[] = [];
  const cw = screen.width / grid.cols;
  const ch = screen.height / grid.rows;
  for (let r = 0; r < grid.rows; r++) {
    for (let c = 0; c < grid.cols; c++) {
      if (grid.std[r * grid.cols + c]! <= minStd) continue;
      const key = `screen:${String(r).padStart(2, '0')},${String(c).padStart(2, '0')}`;
      let box = { x: Math.round(c * cw), y: Math.round(r * ch), width: Math.round(cw), height: Math.round(ch) };
      const ink = frame ? inkCentre(frame, box) : null;
      if (frame && !ink) continue;
      if (ink) box = { x: Math.max(0, ink.x - 4), y: Math.max(0, ink.y - 4), width: 8, height: 8 };
      out.push({ key, kind: 'screen_region', label: '', box, source: 'screen' });
    }
  }
  return out;
}

/** The centre of a box, in whole pixels. */
export function centre(box: { x: number; y: number; width: number; height: number }): { x: number; y: number } {
  return { x: Math.round(box.x + box.width / 2), y: Math.round(box.y + box.height / 2) };
}
