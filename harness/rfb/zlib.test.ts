import { describe, expect, it } from 'vitest';
import { Deflate, Z_SYNC_FLUSH } from 'pako';
import { InflateStream } from './zlib.ts';

/** One persistent deflate stream, sync-flushed per chunk, as VNC servers send. */
function deflater() {
  const d = new Deflate();
  let parts: Uint8Array[] = [];
  d.onData = (c: Uint8Array) => parts.push(c);
  return (data: Uint8Array) => {
    parts = [];
    d.push(data, Z_SYNC_FLUSH);
    return Buffer.concat(parts);
  };
}

describe('InflateStream', () => {
  it('keeps its dictionary across chunks until reset', () => {
    const deflate = deflater();
    const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog '.repeat(20));
    const a = deflate(text);
    const b = deflate(text); // refers back into the first chunk's window
    const s = new InflateStream('test');
    expect(Buffer.from(s.inflate(a))).toEqual(Buffer.from(text));
    expect(Buffer.from(s.inflate(b, text.length))).toEqual(Buffer.from(text));
    s.reset();
    expect(() => s.inflate(b)).toThrow(expect.objectContaining({ code: 'RFB_ERR_DECODE' }));
  });

  it('stops a zip bomb at its output limit with RFB_ERR_DECODE', () => {
    const bomb = deflater()(new Uint8Array(8 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const s = new InflateStream('test');
    expect(() => s.inflate(bomb, undefined, 1024 * 1024)).toThrow(expect.objectContaining({ code: 'RFB_ERR_DECODE' }));
    expect(() => s.inflate(bomb, 1000)).toThrow(expect.objectContaining({ code: 'RFB_ERR_DECODE' }));
  });

  it('reports a wrong output size with RFB_ERR_DECODE', () => {
    const s = new InflateStream('test');
    expect(() => s.inflate(deflater()(new Uint8Array(100)), 99, 200)).toThrow(expect.objectContaining({ code: 'RFB_ERR_DECODE' }));
  });
});
