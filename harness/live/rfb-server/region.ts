/**
 * A dirty region: the rectangles of a framebuffer changed since a watcher last got them. Rectangles
 * are merged as they come (one inside another disappears; two whose union is exactly their bounding box,
 * such as neighbouring tiles of one row, become one), the count is bounded (past it, a new rectangle
 * joins the one whose bounding box with it adds the least unchanged area), and take() hands out the
 * part inside a requested area, keeping the rest. Pure data: no I/O.
 */

/** A rectangle in framebuffer pixels. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Default bound on the number of rectangles a region keeps. */
export const MAX_REGION_RECTS = 16;

const area = (r: Rect): number => r.w * r.h;

/** True when `outer` contains `inner`. */
export function contains(outer: Rect, inner: Rect): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;
}

/** The intersection of two rectangles, or null when they do not overlap. */
export function intersect(a: Rect, b: Rect): Rect | null {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const r = Math.min(a.x + a.w, b.x + b.w);
  const btm = Math.min(a.y + a.h, b.y + b.h);
  return r > x && btm > y ? { x, y, w: r - x, h: btm - y } : null;
}

/** The bounding box of two rectangles. */
export function union(a: Rect, b: Rect): Rect {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
}

/** `r` less `cut`, as up to four disjoint rectangles (bands above and below, then left and right). */
export function subtract(r: Rect, cut: Rect): Rect[] {
  const i = intersect(r, cut);
  if (!i) return [r];
  const out: Rect[] = [];
  if (i.y > r.y) out.push({ x: r.x, y: r.y, w: r.w, h: i.y - r.y });
  if (i.y + i.h < r.y + r.h) out.push({ x: r.x, y: i.y + i.h, w: r.w, h: r.y + r.h - (i.y + i.h) });
  if (i.x > r.x) out.push({ x: r.x, y: i.y, w: i.x - r.x, h: i.h });
  if (i.x + i.w < r.x + r.w) out.push({ x: i.x + i.w, y: i.y, w: r.x + r.w - (i.x + i.w), h: i.h });
  return out;
}

/** Two rectangles merge when their bounding box holds nothing but them (aligned neighbours or overlaps). */
function mergeable(a: Rect, b: Rect): boolean {
  const u = union(a, b);
  const i = intersect(a, b);
  // Touching edges count too: the union of [0,16) and [16,32) in one row is their bounding box.
  return area(u) === area(a) + area(b) - (i ? area(i) : 0);
}

/** The changed rectangles of one framebuffer (see the file comment). */
export class DirtyRegion {
  private list: Rect[] = [];

  constructor(readonly maxRects: number = MAX_REGION_RECTS) {}

  /** The rectangles now (do not modify). */
  get rects(): readonly Rect[] {
    return this.list;
  }

  /** True when nothing is dirty. */
  get empty(): boolean {
    return this.list.length === 0;
  }

  /** Forget everything. */
  clear(): void {
    this.list = [];
  }

  /** Mark (x, y, w, h) dirty, merging it with what is there. */
  add(x: number, y: number, w: number, h: number): void {
    if (w <= 0 || h <= 0) return;
    const list = this.list;
    // Fast path: most damage lands inside the last rectangle added (a tile's subrectangles after its background).
    const last = list[list.length - 1];
    if (last && x >= last.x && y >= last.y && x + w <= last.x + last.w && y + h <= last.y + last.h) return;
    let r: Rect = { x, y, w, h };
    for (let i = 0; i < list.length; ) {
      const e = list[i]!;
      if (contains(e, r)) return;
      if (contains(r, e) || mergeable(e, r)) {
        r = contains(r, e) ? r : union(e, r);
        list.splice(i, 1);
        i = 0; // r grew: it may now merge with rectangles already passed
        continue;
      }
      i++;
    }
    if (list.length < this.maxRects) {
      list.push(r);
      return;
    }
    // Full: join the rectangle that grows least (O(n); collapsing everything would send whole screens for scattered changes).
    let best = 0;
    let bestWaste = Infinity;
    for (let i = 0; i < list.length; i++) {
      const e = list[i]!;
      const waste = area(union(e, r)) - area(e);
      if (waste < bestWaste) {
        bestWaste = waste;
        best = i;
      }
    }
    list[best] = union(list[best]!, r);
  }

  /** Take the dirty parts inside `within` (clipped to it); what lies outside stays dirty. */
  take(within: Rect): Rect[] {
    const out: Rect[] = [];
    const keep: Rect[] = [];
    for (const e of this.list) {
      const i = intersect(e, within);
      if (!i) {
        keep.push(e);
        continue;
      }
      out.push(i);
      if (!contains(within, e)) keep.push(...subtract(e, within));
    }
    this.list = [];
    if (keep.length <= this.maxRects) this.list = keep;
    else for (const k of keep) this.add(k.x, k.y, k.w, k.h);
    return out;
  }

  /** Keep only what lies inside a `width` x `height` framebuffer. */
  clip(width: number, height: number): void {
    const inside = { x: 0, y: 0, w: width, h: height };
    this.list = this.list.flatMap((e) => intersect(e, inside) ?? []);
  }
}
