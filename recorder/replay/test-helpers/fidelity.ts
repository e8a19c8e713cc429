/**
 * Test-only: compare a live screenshot with the replayed frame at the same instant and, when pixels
 * differ, work out why from the recording itself (never a guess): an update in flight at that instant,
 * the cursor (position or shape), JPEG, or — if none of those explains it — the first differing pixel.
 */
import sharp from 'sharp';
import { ENC } from '../../../harness/rfb/encodings/types.ts';
import type { CursorShape } from '../../../harness/rfb/sink.ts';
import { Replayer } from '../replayer.ts';

/** What was captured live at one instant. */
export interface LiveShot {
  label: string;
  /** now() just before screenshot() was called. */
  askedAt: number;
  /** now() right after it resolved: the instant compared. */
  t: number;
  png: Buffer;
  cursor: boolean;
  /** The live client's pointer and cursor shape when the screenshot was taken. */
  pointer: { x: number; y: number } | null;
  shape: CursorShape | null;
}

/** Pixel differences between two RGB images of the same size. */
export interface Diff {
  count: number;
  box: { x0: number; y0: number; x1: number; y1: number } | null;
  maxDelta: number;
  first: { x: number; y: number; live: number[]; replay: number[] } | null;
}

/** Decode a PNG to raw RGB. */
export async function pngToRgb(png: Buffer): Promise<{ rgb: Uint8Array; width: number; height: number }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { rgb: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

/** Compare two RGB images pixel by pixel. */
export function diffRgb(live: Uint8Array, replay: Uint8Array, width: number): Diff {
  let count = 0;
  let maxDelta = 0;
  let box: Diff['box'] = null;
  let first: Diff['first'] = null;
  for (let i = 0, p = 0; i < live.length; i += 3, p++) {
    const d = Math.max(Math.abs(live[i]! - replay[i]!), Math.abs(live[i + 1]! - replay[i + 1]!), Math.abs(live[i + 2]! - replay[i + 2]!));
    if (d === 0) continue;
    count++;
    maxDelta = Math.max(maxDelta, d);
    const x = p % width;
    const y = Math.floor(p / width);
    if (!box) box = { x0: x, y0: y, x1: x, y1: y };
    else {
      box.x0 = Math.min(box.x0, x);
      box.y0 = Math.min(box.y0, y);
      box.x1 = Math.max(box.x1, x);
      box.y1 = Math.max(box.y1, y);
    }
    first ??= { x, y, live: Array.from(live.subarray(i, i + 3)), replay: Array.from(replay.subarray(i, i + 3)) };
  }
  return { count, box, maxDelta, first };
}

const sameShape = (a: CursorShape | null, b: CursorShape | null): boolean =>
  a === b ||
  (!!a && !!b && a.width === b.width && a.height === b.height && a.hotX === b.hotX && a.hotY === b.hotY && Buffer.compare(Buffer.from(a.rgba), Buffer.from(b.rgba)) === 0);

/**
 * Compare `shot` with the replay of the recording in `dir` at `shot.t`; null when pixel-identical, else a
 * message naming the cause, computed from the recording.
 */
export async function compareShot(dir: string, shot: LiveShot): Promise<string | null> {
  const live = await pngToRgb(shot.png);
  const r = await Replayer.open(dir);
  const frame = await r.frameAt(shot.t, { cursor: shot.cursor });
  const at = `${shot.label} (${shot.cursor ? 'cursor' : 'no cursor'})`;
  if (!frame) return `${at}: the recording holds no complete update by that instant`;
  if (frame.width !== live.width || frame.height !== live.height) {
    return `${at}: size differs: live ${live.width}x${live.height}, replayed ${frame.width}x${frame.height} (a resize in flight at that instant?)`;
  }
  const d = diffRgb(live.rgb, frame.rgb, live.width);
  if (d.count === 0) return null;
  const where = `${d.count} pixels differ in (${d.box!.x0},${d.box!.y0})-(${d.box!.x1},${d.box!.y1}), max Δ ${d.maxDelta}, first at (${d.first!.x},${d.first!.y}) live rgb(${d.first!.live}) vs replay rgb(${d.first!.replay})`;
  const causes: string[] = [];

  // 1. An update that completed between the screenshot's start and the instant compared: its bytes were
  //    stamped before t, but the live client had captured the screen before it applied them.
  const r2 = await Replayer.open(dir);
  const u = await r2.nextUpdateAfter(shot.askedAt);
  if (u !== null && u <= shot.t) {
    const early = await new Replayer(r2.recording).frameAt(shot.askedAt, { cursor: shot.cursor });
    const matchesEarlier = early && early.width === live.width && diffRgb(live.rgb, early.rgb, live.width).count === 0;
    causes.push(
      `update in flight at that instant: an update whose last byte was stamped ${(shot.t - u).toFixed(2)} ms before t completed after the screenshot began (${(u - shot.askedAt).toFixed(2)} ms after it was asked for) and was not yet applied by the client${matchesEarlier ? '; the live image equals the replayed frame as of the moment the screenshot was asked for' : ''}`,
    );
  }

  // 2. The cursor: position or shape differ, or the difference lies only under the cursor.
  if (shot.cursor) {
    const c = await new Replayer(r2.recording).cursorAt(shot.t);
    const rp = c?.pointer ? { x: c.pointer.x, y: c.pointer.y } : null;
    if (JSON.stringify(rp) !== JSON.stringify(shot.pointer))
      causes.push(`cursor position: live pointer ${JSON.stringify(shot.pointer)}, replayed ${JSON.stringify(rp)} (the pointer event reached the recording after t?)`);
    if (!sameShape(c?.shape ?? null, shot.shape)) causes.push(`cursor shape: live ${shapeText(shot.shape)}, replayed ${shapeText(c?.shape ?? null)}`);
    const plain = await new Replayer(r2.recording).frameAt(shot.t, { cursor: false });
    if (plain && shot.pointer && shot.shape) {
      const b = d.box!;
      const cx0 = shot.pointer.x - shot.shape.hotX;
      const cy0 = shot.pointer.y - shot.shape.hotY;
      if (b.x0 >= cx0 && b.y0 >= cy0 && b.x1 < cx0 + shot.shape.width && b.y1 < cy0 + shot.shape.height)
        causes.push('every differing pixel lies under the cursor image: cursor blending');
    }
  }

  // 3. JPEG: the connection decoded Tight JPEG rectangles (both sides decode them with sharp/libjpeg).
  const r3 = new Replayer(r2.recording);
  await r3.frameAt(shot.t);
  const tight = r3.rectStats().get(ENC.TIGHT) ?? 0;
  if (tight > 0 && d.maxDelta <= 16)
    causes.push(`JPEG: ${tight} Tight rectangles were decoded and the differences are small (max Δ ${d.maxDelta}), as from a different JPEG decode`);

  if (causes.length === 0) causes.push('no known cause (not an update in flight, not the cursor, not JPEG): a decoder or replay bug');
  return `${at}: ${where}; cause: ${causes.join('; ')}`;
}

function shapeText(s: CursorShape | null): string {
  return s ? `${s.width}x${s.height} hot ${s.hotX},${s.hotY}` : 'none';
}
