import { describe, expect, it } from 'vitest';
import { ByteQueue, ByteWriter } from './bytes.ts';

describe('ByteQueue', () => {
  it('reads big-endian values and bytes across chunk boundaries', () => {
    const q = new ByteQueue();
    const bytes = new ByteWriter().u8(7).u16(0x1234).u32(0xdeadbeef).s32(-2).bytes([1, 2, 3]).toBytes();
    for (const b of bytes) q.push(Uint8Array.of(b));
    expect(q.u8()).toBe(7);
    expect(q.peekU16()).toBe(0x1234);
    expect(q.u16()).toBe(0x1234);
    expect(q.u32()).toBe(0xdeadbeef);
    expect(q.s32()).toBe(-2);
    expect([...q.readBytes(3)]).toEqual([1, 2, 3]);
    expect(q.available).toBe(0);
    expect(q.consumed).toBe(bytes.length);
  });

  it('keeps a large payload pushed in many small chunks intact, and never writes into a chunk it adopted', () => {
    const q = new ByteQueue();
    const first = Uint8Array.from({ length: 100 }, (_, i) => i);
    const copyOfFirst = first.slice();
    q.push(first); // adopted as is
    const payload = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 31) & 255);
    for (let o = 0; o < payload.length; o += 1000) q.push(payload.subarray(o, o + 1000));
    expect(first).toEqual(copyOfFirst);
    expect([...q.readBytes(100)]).toEqual([...copyOfFirst]);
    const view = q.peekBytes(10);
    const before = [...view];
    q.push(Uint8Array.of(1, 2, 3)); // appended behind the data: earlier views stay intact
    expect([...view]).toEqual(before);
    expect(Buffer.from(q.readBytes(payload.length)).equals(Buffer.from(payload))).toBe(true);
    expect([...q.readBytes(3)]).toEqual([1, 2, 3]);
  });

  it('throws RFB_ERR_PROTOCOL for a read past what is buffered (a decoder bug, never a hang)', () => {
    const q = new ByteQueue();
    q.push(Uint8Array.of(1));
    expect(() => q.u16()).toThrow(expect.objectContaining({ code: 'RFB_ERR_PROTOCOL' }));
  });
});
