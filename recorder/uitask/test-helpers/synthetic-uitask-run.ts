/**
 * Test-only: a uitask run directory whose streams are built from named fixtures instead of a live
 * server, so that its server stream holds what no server here sends: TightPNG rectangles (PNG and
 * fill), plus CopyRect, the Cursor pseudo-encoding and LastRect-terminated updates.
 *
 * Session (times relative to `t0`, epoch ms):
 *   0-7 ms   handshake (3.8, security None), SetPixelFormat, SetEncodings (TightPNG, CopyRect,
 *            Cursor, LastRect, DesktopSize), a full update request
 *   20 ms    update 1: Cursor, the whole screen as one TightPNG PNG (`initialPixel`), LastRect
 *   1000 ms  mouse_click at CLICK: motion, press, release
 *   1030 ms  update 2: a TightPNG PNG square at SQUARE (`squarePixel`), LastRect
 *   2000 ms  press_keys Return
 *   2030 ms  update 3: CopyRect of the square to COPY, a TightPNG fill of BAR, LastRect
 *   3000 ms  the last request; the recording ends
 * execution.json: mouse_click, press_keys, wait, finish (as uitask writes them: no index, no timing, nested params).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { ByteWriter } from '../../../harness/rfb/bytes.ts';
import {
  writeClientInit,
  writeFramebufferUpdateRequest,
  writeKeyEvent,
  writePointerEvent,
  writeProtocolVersion,
  writeSecurityType,
  writeSetEncodings,
  writeSetPixelFormat,
} from '../../../harness/rfb/client-messages.ts';
import { ENC } from '../../../harness/rfb/encodings/types.ts';
import { tightFill, tightPng, type Rgb } from '../../../harness/rfb/test-helpers/fixtures-tight.ts';
import {
  cursorRect,
  framebufferUpdate,
  lastRect,
  securityResult,
  securityTypes,
  serverInit,
  serverVersion,
  copyRect,
  type RectBytes,
} from '../../../harness/rfb/test-helpers/server-stream.ts';
import { KEYSYM } from '../../../harness/keys/index.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskWait } from '../../../harness/trace/test-fixtures/uitask.ts';

/** A chunk of one direction, relayed at `t` (epoch ms). */
interface Chunk {
  t: number;
  bytes: Uint8Array;
}

/** What makeSyntheticUitaskRun made, with the pixels a replay must show. */
export interface SyntheticUitaskRun {
  dir: string;
  width: number;
  height: number;
  /** Epoch ms of the recording's first chunk. */
  t0: number;
  /** The screen before the click, per pixel. */
  initialPixel: (x: number, y: number) => Rgb;
  /** The square the click draws (TightPNG PNG), and its colours. */
  square: { x: number; y: number; width: number; height: number };
  squarePixel: (px: number, py: number) => Rgb;
  /** Where update 3 copies the square (CopyRect), and the bar it fills (TightPNG fill). */
  copy: { x: number; y: number };
  bar: { x: number; y: number; width: number; height: number; rgb: Rgb };
  /** Where the click is. */
  click: { x: number; y: number };
  /** The client's input events' times: click [first, last], keys [first, last]. */
  input: { click: [number, number]; keys: [number, number] };
}

/** Encode `w`×`h` pixels as PNG. */
async function png(w: number, h: number, rgb: (px: number, py: number) => Rgb): Promise<Uint8Array> {
  const raw = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(rgb(x, y), (y * w + x) * 3);
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toBuffer();
}

function tightPngRect(x: number, y: number, width: number, height: number, payload: Uint8Array): RectBytes {
  return { header: { x, y, width, height, encoding: ENC.TIGHT_PNG }, payload };
}

/** `*.time.bin` in uitask's form: per chunk, BE u64 epoch ns, BE u64 cumulative length. */
function timeIndex(chunks: Chunk[]): Uint8Array {
  const w = new ByteWriter(chunks.length * 16);
  let end = 0;
  for (const c of chunks) {
    end += c.bytes.length;
    const ns = BigInt(Math.round(c.t * 1000)) * 1000n;
    w.u32(Number(ns >> 32n))
      .u32(Number(ns & 0xffffffffn))
      .u32(Math.floor(end / 2 ** 32))
      .u32(end >>> 0);
  }
  return w.toBytes();
}

/** Write the synthetic run into `dir` (created). */
export async function makeSyntheticUitaskRun(o: { dir: string; t0?: number }): Promise<SyntheticUitaskRun> {
  const width = 64;
  const height = 48;
  const t0 = o.t0 ?? 1_700_000_000_000;
  const initialPixel = (x: number, y: number): Rgb => [x * 4, y * 5, 128];
  const square = { x: 12, y: 12, width: 16, height: 16 };
  const squarePixel = (px: number, py: number): Rgb => [250, (px * 16) & 255, (py * 16) & 255];
  const copy = { x: 40, y: 24 };
  const bar = { x: 0, y: 40, width: 64, height: 8, rgb: [20, 40, 220] as Rgb };
  const click = { x: 20, y: 20 };

  const client: Chunk[] = [];
  const server: Chunk[] = [];
  const c = (dt: number, ...parts: Uint8Array[]) => client.push({ t: t0 + dt, bytes: Buffer.concat(parts) });
  const s = (dt: number, ...parts: Uint8Array[]) => server.push({ t: t0 + dt, bytes: Buffer.concat(parts) });
  const full = () => writeFramebufferUpdateRequest(false, 0, 0, width, height);
  const incr = () => writeFramebufferUpdateRequest(true, 0, 0, width, height);

  s(0, serverVersion('3.8'));
  c(1, writeProtocolVersion('3.8'));
  s(2, securityTypes([1]));
  c(3, writeSecurityType(1));
  s(4, securityResult('ok'));
  c(5, writeClientInit(true));
  s(6, serverInit({ width, height, name: 'uitask synthetic' }));
  c(7, writeSetPixelFormat(), writeSetEncodings([ENC.TIGHT_PNG, ENC.COPYRECT, ENC.CURSOR, ENC.LAST_RECT, ENC.DESKTOP_SIZE]), full());
  const arrow = cursorRect(
    0,
    0,
    4,
    6,
    () => [0, 0, 0],
    (px, py) => px <= py,
  );
  s(20, framebufferUpdate([arrow, tightPngRect(0, 0, width, height, tightPng(await png(width, height, initialPixel))), lastRect()], 0xffff));
  c(21, incr());

  c(1000, writePointerEvent(click.x, click.y, 0));
  c(1003, writePointerEvent(click.x, click.y, 1));
  c(1006, writePointerEvent(click.x, click.y, 0));
  const sq = await png(square.width, square.height, squarePixel);
  s(1030, framebufferUpdate([tightPngRect(square.x, square.y, square.width, square.height, tightPng(sq)), lastRect()], 0xffff));
  c(1031, incr());

  c(2000, writeKeyEvent(KEYSYM.Return, true));
  c(2002, writeKeyEvent(KEYSYM.Return, false));
  s(
    2030,
    framebufferUpdate(
      [copyRect(copy.x, copy.y, square.width, square.height, square.x, square.y), tightPngRect(bar.x, bar.y, bar.width, bar.height, tightFill(bar.rgb)), lastRect()],
      0xffff,
    ),
  );
  c(2031, incr());
  c(3000, incr());

  const rec = join(o.dir, 'recording');
  await mkdir(rec, { recursive: true });
  for (const [name, chunks] of [
    ['client', client],
    ['server', server],
  ] as const) {
    await writeFile(join(rec, `${name}.rfb.bin`), Buffer.concat(chunks.map((x) => x.bytes)));
    await writeFile(join(rec, `${name}.time.bin`), timeIndex(chunks));
  }
  const execution = [uitaskClick(click), uitaskKeys(['Return']), uitaskWait(0.5), uitaskFinish(null, { done: true })];
  await writeFile(join(o.dir, 'execution.json'), uitaskExecutionJson(execution));
  return {
    dir: o.dir,
    width,
    height,
    t0,
    initialPixel,
    square,
    squarePixel,
    copy,
    bar,
    click,
    input: { click: [t0 + 1000, t0 + 1006], keys: [t0 + 2000, t0 + 2002] },
  };
}
