/**
 * Menus, tabs, dialogs and plain pages: which untried target to act on next. An open dialog comes first (only its
 * own targets, its dismiss buttons — Cancel, Close, × — after the others, then Escape once they are all tried); then
 * targets that just appeared (a menu's items, a tab's panel), then by kind: form fields, tabs and menu items, buttons,
 * other elements, links (which leave the page) last. With nothing untried left, a tried target that opened targets
 * still untried (a dialog closed before its form was sent) is acted on again (`page.revisit`, when `revisit` says so).
 * Links to other hosts, `javascript:` and `mailto:` links are never followed. Ties are broken by the seeded generator
 * over targets sorted by key, so the choice depends only on the seed and the page.
 */
import type { SeenTarget } from '../targets.ts';

/** Rank of a kind (lower first). */
const KIND_RANK: Readonly<Record<string, number>> = {
  input: 0,
  textarea: 0,
  select: 0,
  checkbox: 0,
  radio: 0,
  tab: 1,
  menuitem: 1,
  button: 2,
  other: 3,
  canvas: 3,
  screen_region: 3,
  link: 4,
};

/** Labels of buttons that only dismiss a dialog. */
const DISMISS = /^(cancel|close|dismiss|no|no thanks|not now|later|skip|back|×|✕|✖|x)$/i;

/** True when a link's href may be followed: same host as `host` (when given), http(s) or a fragment. */
export function followable(t: Pick<SeenTarget, 'href'>, host: string | null): boolean {
  if (!t.href) return true;
  let u: URL;
  try {
    u = new URL(t.href);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== 'file:') return false;
  return host === null || u.host === host;
}

/** What pickTarget decides: a target, or "close the dialog", or nothing left. */
export type PagePick = { target: SeenTarget; strategy: string } | { closeDialog: true } | null;

/** The strategy name of acting on `t`. */
export function strategyOf(t: SeenTarget): string {
  if (t.kind === 'tab') return 'tabs.open';
  if (t.kind === 'menuitem') return 'menu.item';
  if (t.inDialog) return 'dialog.button';
  if (t.kind === 'link') return 'page.link';
  if (t.source === 'screen') return 'screen.region';
  return `page.${t.kind}`;
}

/**
 * The next target (see the file comment): `targets` sorted by key, `tried` the keys acted on, `fresh` the keys first
 * seen on the latest scan, `host` the host links must stay on (null: any), `rand` the run's generator.
 */
export function pickTarget(
  targets: readonly SeenTarget[],
  tried: ReadonlySet<string>,
  fresh: ReadonlySet<string>,
  host: string | null,
  dialogOpen: boolean,
  rand: () => number,
  revisit?: (t: SeenTarget) => boolean,
): PagePick {
  const inDialog = dialogOpen ? targets.filter((t) => t.inDialog) : [];
  const pool = (dialogOpen && inDialog.length > 0 ? inDialog : targets).filter((t) => !tried.has(t.key) && followable(t, host) && !(t.kind === 'input' && t.inputType === 'file'));
  if (pool.length === 0) {
    if (dialogOpen && inDialog.length > 0) return { closeDialog: true };
    const again = revisit ? targets.filter((t) => tried.has(t.key) && followable(t, host) && revisit(t)) : [];
    if (again.length === 0) return null;
    return { target: again[Math.min(again.length - 1, Math.floor(rand() * again.length))]!, strategy: 'page.revisit' };
  }
  const rank = (t: SeenTarget) => (KIND_RANK[t.kind] ?? 3) - (fresh.has(t.key) ? 10 : 0) + (t.inDialog && DISMISS.test(t.label.trim()) ? 5 : 0);
  let best = Number.POSITIVE_INFINITY;
  for (const t of pool) best = Math.min(best, rank(t));
  const group = pool.filter((t) => rank(t) === best);
  const target = group[Math.min(group.length - 1, Math.floor(rand() * group.length))]!;
  return { target, strategy: strategyOf(target) };
}
