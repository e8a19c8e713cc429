/**
 * `--video`: the whole session at real speed, with click markers, through recorder/video's writeVideo
 * (ffmpeg; WebM when libx264 is missing; a one-line notice, never a failure, without ffmpeg).
 */
import { join } from 'node:path';
import { iterateFrames } from '../replay/replayer.ts';
import { formatVideoNotice, writeVideo, type VideoMarker } from '../video/index.ts';

/** Video frame rate. */
export const VIDEO_FPS = 10;

type Point = { x: number; y: number };

function point(v: unknown): Point | null {
  if (typeof v !== 'object' || v === null) return null;
  const { x, y } = v as { x?: unknown; y?: unknown };
  return typeof x === 'number' && typeof y === 'number' ? { x, y } : null;
}

/** What the markers need of a trace entry. */
export interface MarkedEntry {
  action: string;
  params: unknown;
  started_at?: number | null | undefined;
}

/** Markers for the pointer actions of a trace (entries without started_at are skipped). */
export function videoMarkers(entries: readonly MarkedEntry[]): VideoMarker[] {
  const out: VideoMarker[] = [];
  let pointer: Point | null = null;
  for (const e of entries) {
    const t = e.started_at;
    const p = e.params as Record<string, unknown>;
    if (typeof t !== 'number') continue;
    switch (e.action) {
      case 'mouse_move': {
        const at = point(p.position);
        if (at) out.push({ t, ...at, kind: 'move' });
        pointer = at ?? pointer;
        break;
      }
      case 'mouse_click': {
        const at: Point | null = point(p.position) ?? pointer;
        if (!at) break;
        const kind = p.button === 'right' ? 'right_click' : p.click_type === 'double' || p.click_type === 'triple' ? 'double_click' : 'click';
        out.push({ t, ...at, kind });
        pointer = at;
        break;
      }
      case 'mouse_drag': {
        const a = point(p.start);
        const b = point(p.end);
        if (a && b) out.push({ t, ...a, kind: 'drag', x2: b.x, y2: b.y });
        pointer = b ?? pointer;
        break;
      }
      case 'mouse_scroll': {
        const at = point(p.position);
        if (at) out.push({ t, ...at, kind: 'scroll' });
        pointer = at ?? pointer;
        break;
      }
    }
  }
  return out;
}

/** Write `runDir/recording.mp4` (or .webm); returns the one-line notice to print. */
export async function writeRunVideo(runDir: string, entries: readonly MarkedEntry[], size: { width: number; height: number }, endAt: number | undefined): Promise<string> {
  const r = await writeVideo({
    out: join(runDir, 'recording.mp4'),
    width: size.width,
    height: size.height,
    frames: iterateFrames(runDir, { fps: VIDEO_FPS, cursor: true }),
    markers: videoMarkers(entries),
    fps: VIDEO_FPS,
    endAt,
  });
  return formatVideoNotice(r);
}
