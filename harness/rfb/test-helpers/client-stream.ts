/**
 * Named builders for client → server messages the harness's writers do not cover (extensions other
 * viewers send), for the client-stream parser's fixtures.
 */
import { ByteWriter } from '../bytes.ts';
import { CLIENT_PIXEL_FORMAT, type PixelFormat, writeSetPixelFormat } from '../client-messages.ts';

/** EnableContinuousUpdates: U8 150, U8 enable, U16 x, y, width, height. */
export function enableContinuousUpdates(enable: boolean, x: number, y: number, width: number, height: number): Uint8Array {
  return new ByteWriter(10)
    .u8(150)
    .u8(enable ? 1 : 0)
    .u16(x)
    .u16(y)
    .u16(width)
    .u16(height)
    .toBytes();
}

/** ClientFence: U8 248, 3 pad, U32 flags, U8 length, payload. */
export function clientFence(flags: number, payload: number[]): Uint8Array {
  return new ByteWriter().u8(248).pad(3).u32(flags).u8(payload.length).bytes(payload).toBytes();
}

/** SetDesktopSize with one screen per { id, x, y, width, height }. */
export function setDesktopSize(width: number, height: number, screens: Array<{ id: number; x: number; y: number; width: number; height: number }>): Uint8Array {
  const w = new ByteWriter().u8(251).pad(1).u16(width).u16(height).u8(screens.length).pad(1);
  for (const s of screens) w.u32(s.id).u16(s.x).u16(s.y).u16(s.width).u16(s.height).u32(0);
  return w.toBytes();
}

/** xvp: U8 250, pad, U8 version, U8 code. */
export function xvpMessage(version: number, code: number): Uint8Array {
  return new ByteWriter(4).u8(250).pad(1).u8(version).u8(code).toBytes();
}

/** QEMU extended key event: U8 255, U8 0, U16 down, U32 keysym, U32 keycode. */
export function qemuKeyEvent(keysym: number, keycode: number, down: boolean): Uint8Array {
  return new ByteWriter(12)
    .u8(255)
    .u8(0)
    .u16(down ? 1 : 0)
    .u32(keysym)
    .u32(keycode)
    .toBytes();
}

/** ClientCutText in the Extended Clipboard form (negative length): U8 6, 3 pad, S32 -n, n bytes. */
export function extendedCutText(payload: number[]): Uint8Array {
  return new ByteWriter().u8(6).pad(3).s32(-payload.length).bytes(payload).toBytes();
}

/** SetPixelFormat with some fields changed from vncua's own format. */
export function setPixelFormatWith(changes: Partial<PixelFormat>): Uint8Array {
  return writeSetPixelFormat({ ...CLIENT_PIXEL_FORMAT, ...changes });
}

/** Concatenate byte arrays. */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  const w = new ByteWriter();
  for (const p of parts) w.bytes(p);
  return w.toBytes();
}
