import { describe, expect, it } from 'vitest';
import { ByteQueue } from '../../rfb/bytes.ts';
import { CLIENT_PIXEL_FORMAT } from '../../rfb/client-messages.ts';
import { peekPixelFormat } from '../../rfb/client-stream.ts';
import { tryReadProtocolVersion, tryReadSecurityResult, tryReadSecurityType33, tryReadSecurityTypes, tryReadServerInit } from '../../rfb/handshake.ts';
import { tryReadFramebufferUpdateHeader, tryReadRectHeader } from '../../rfb/server-messages.ts';
import { writeFramebufferUpdate, writeSecurityFailure, writeSecurityOk, writeSecurityType33, writeSecurityTypes, writeServerInit, writeServerVersion } from './messages.ts';
import { pixelWriter } from './pixel-format.ts';
import { patternFramebuffer } from './test-helpers.ts';

const queue = (b: Uint8Array) => {
  const q = new ByteQueue();
  q.push(b);
  return q;
};

describe('server message writers, read back with the client readers', () => {
  it('handshake: version, security types (3.7+ and 3.3), SecurityResult OK and failure with its reason', () => {
    expect(tryReadProtocolVersion(queue(writeServerVersion()))).toEqual({ announced: '003.008', version: '3.8' });
    expect(tryReadSecurityTypes(queue(writeSecurityTypes([1])))).toEqual({ types: [1] });
    expect(tryReadSecurityType33(queue(writeSecurityType33(1)))).toEqual({ types: [1] });
    expect(tryReadSecurityResult(queue(writeSecurityOk()), '3.8')).toEqual({ ok: true });
    expect(tryReadSecurityResult(queue(writeSecurityFailure('nope: é')), '3.8')).toEqual({ ok: false, status: 1, reason: 'nope: é' });
  });

  it('ServerInit: size, pixel format and a UTF-8 name', () => {
    const bytes = writeServerInit(1280, 800, CLIENT_PIXEL_FORMAT, 'run – täsk');
    const q = queue(bytes);
    expect(peekPixelFormat(q, 4)).toEqual(CLIENT_PIXEL_FORMAT);
    expect(tryReadServerInit(q)).toEqual({ width: 1280, height: 800, name: 'run – täsk' });
    expect(q.available).toBe(0);
  });

  it('FramebufferUpdate: header, a DesktopSize, a Raw rectangle of the pixels, a 0x0 cursor, sizes exact', () => {
    const fb = patternFramebuffer(8, 4);
    const bytes = writeFramebufferUpdate(
      [
        { kind: 'desktopSize', width: 8, height: 4 },
        { kind: 'raw', x: 2, y: 1, w: 3, h: 2 },
        { kind: 'cursor', shape: null },
      ],
      fb,
      pixelWriter(CLIENT_PIXEL_FORMAT),
    );
    const q = queue(bytes);
    q.skip(1);
    expect(q.u8()).toBe(0);
    const back = queue(bytes);
    expect(tryReadFramebufferUpdateHeader(back)).toBe(3);
    expect(tryReadRectHeader(back)).toEqual({ x: 0, y: 0, width: 8, height: 4, encoding: -223 });
    expect(tryReadRectHeader(back)).toEqual({ x: 2, y: 1, width: 3, height: 2, encoding: 0 });
    const px = back.readBytes(3 * 2 * 4);
    expect([...px.subarray(0, 4)]).toEqual(fb.pixel(2, 1));
    expect([...px.subarray(12, 16)]).toEqual(fb.pixel(2, 2));
    expect(tryReadRectHeader(back)).toEqual({ x: 0, y: 0, width: 0, height: 0, encoding: -239 });
    expect(back.available).toBe(0);
  });
});
