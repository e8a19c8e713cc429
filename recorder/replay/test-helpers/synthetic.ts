/**
 * Test-only: the two halves of a synthetic recorded connection, as vncua's own client and a 3.8 server
 * with security None would exchange them, built from the named fixture builders.
 */
import {
  writeClientInit,
  writeFramebufferUpdateRequest,
  writePointerEvent,
  writeProtocolVersion,
  writeSecurityType,
  writeSetEncodings,
  writeSetPixelFormat,
} from '../../../harness/rfb/client-messages.ts';
import { ENC } from '../../../harness/rfb/encodings/types.ts';
import { handshake } from '../../../harness/rfb/test-helpers/server-stream.ts';
import { concatBytes } from '../../../harness/rfb/test-helpers/client-stream.ts';
import type { Chunk, ConnectionChunks } from './recording.ts';

/** The encodings vncua's client advertises by default (CopyRect, Hextile, Raw + pseudo-encodings). */
export const VNCUA_ENCODINGS = [ENC.COPYRECT, ENC.HEXTILE, ENC.RAW, ENC.DESKTOP_SIZE, ENC.EXTENDED_DESKTOP_SIZE, ENC.LAST_RECT, ENC.CURSOR];

/** What vncua's client sends up to its first FramebufferUpdateRequest. */
export function clientHello(encodings: readonly number[] = VNCUA_ENCODINGS, width = 64, height = 48): Uint8Array {
  return concatBytes([
    writeProtocolVersion('3.8'),
    writeSecurityType(1),
    writeClientInit(true),
    writeSetPixelFormat(),
    writeSetEncodings(encodings),
    writeFramebufferUpdateRequest(false, 0, 0, width, height),
  ]);
}

/** A pointer event chunk at `t`. */
export function pointerChunk(t: number, x: number, y: number, mask = 0): Chunk {
  return { t, bytes: writePointerEvent(x, y, mask) };
}

/**
 * A connection whose handshake happens at `t0` (client hello at t0, server handshake at t0 + 0.1) followed by
 * the given server chunks and client chunks.
 */
export function syntheticConnection(opts: { t0: number; width: number; height: number; server: Chunk[]; client?: Chunk[]; encodings?: readonly number[] }): ConnectionChunks {
  return {
    client: [{ t: opts.t0, bytes: clientHello(opts.encodings, opts.width, opts.height) }, ...(opts.client ?? [])],
    server: [{ t: opts.t0 + 0.1, bytes: handshake({ version: '3.8', width: opts.width, height: opts.height }) }, ...opts.server],
  };
}

/** Split `bytes` into chunks at the given offsets, stamped with the given times (one more time than cuts). */
export function splitChunks(bytes: Uint8Array, cuts: number[], times: number[]): Chunk[] {
  const points = [0, ...cuts, bytes.length];
  return times.map((t, i) => ({ t, bytes: bytes.slice(points[i]!, points[i + 1]!) }));
}
