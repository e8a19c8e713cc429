/**
 * Waits on what the screen shows, for agents that act on what they see (the replay agent uses both):
 * - waitForEffects: the screen changed since an input began, then went quiet. On a busy machine (8 desktops
 *   on 2 cores) a page's answer can take longer to show than a quiet window, so quiet alone is no sign.
 * - waitForPainted: the screen is not blank. A browser that has loaded its page may not have painted it yet on a
 *   busy machine (a black, or a white, screen was seen); input sent before the page is on screen is lost.
 */
import { isVncuaError } from '../errors.ts';
import type { VncClient } from '../rfb/index.ts';

/** Pixels of another colour than the top-left one that a blank screen may still have: Xvnc draws the cursor into it. */
export const BLANK_SCREEN_OTHER_PIXELS = 2048;

/** True when an RGBA screen is one colour but for at most BLANK_SCREEN_OTHER_PIXELS pixels (a cursor). */
export function isBlank(rgba: Uint8Array): boolean {
  const px = new Uint32Array(rgba.buffer, rgba.byteOffset, rgba.byteLength >>> 2);
  const first = px[0];
  let other = 0;
  for (let i = 1; i < px.length; i++) if (px[i] !== first && ++other > BLANK_SCREEN_OTHER_PIXELS) return false;
  return true;
}

/** Options of waitForEffects(). */
export interface EffectsOptions {
  /** Longest wait for a change (default 1000 ms). */
  changeTimeoutMs?: number;
  /** No update for this long is quiet (default 300 ms). */
  quietMs?: number;
  /** Longest wait for quiet (default 3000 ms). */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/** Wait until the framebuffer changed after version `since` (bounded), then until it is quiet. */
export async function waitForEffects(client: VncClient, since: number, o: EffectsOptions = {}): Promise<{ changed: boolean; quiet: boolean }> {
  let changed = true;
  try {
    await client.waitForUpdate({ after: since, timeoutMs: o.changeTimeoutMs ?? 1000, signal: o.signal });
  } catch (e) {
    if (!isVncuaError(e, 'RFB_ERR_TIMEOUT')) throw e;
    changed = false;
  }
  const quiet = await client.waitForQuiet({ quietMs: o.quietMs ?? 300, timeoutMs: o.timeoutMs ?? 3000, signal: o.signal });
  return { changed, quiet };
}

/** Wait until the screen is not blank (at most `timeoutMs`, default 10 000): true once it shows something. */
export async function waitForPainted(client: VncClient, o: { timeoutMs?: number; signal?: AbortSignal | undefined } = {}): Promise<boolean> {
  const end = performance.now() + (o.timeoutMs ?? 10_000);
  for (;;) {
    if (!isBlank(client.framebuffer.data)) return true;
    const left = end - performance.now();
    if (left <= 0) return false;
    try {
      await client.waitForUpdate({ timeoutMs: left, signal: o.signal });
    } catch (e) {
      if (!isVncuaError(e, 'RFB_ERR_TIMEOUT')) throw e;
      return false;
    }
  }
}
