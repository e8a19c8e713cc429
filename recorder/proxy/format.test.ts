/** The recording's names and 16-byte time records. */
import { describe, expect, it } from 'vitest';
import { TIME_ENCODING, TIME_RECORD_BYTES, isStreamFileName, parseTimeIndex, readTimeRecord, streamFileName, writeTimeRecord } from './format.ts';

/** A .time.bin holding `records` (built with the writer under test). */
function timeFile(records: Array<[number, number]>, extra = 0): Uint8Array {
  const out = new Uint8Array(records.length * TIME_RECORD_BYTES + extra);
  for (const [i, [t, end]] of records.entries()) writeTimeRecord(out, i * TIME_RECORD_BYTES, t, end);
  return out;
}

/** A .time.bin in an older layout: big-endian u64 integer timestamps (v1 µs, uitask ns), then u64 lengths. */
function u64TimeFile(records: Array<[bigint, number]>): Uint8Array {
  const out = new Uint8Array(records.length * TIME_RECORD_BYTES);
  const view = new DataView(out.buffer);
  records.forEach(([t, end], i) => {
    view.setBigUint64(i * TIME_RECORD_BYTES, t);
    view.setBigUint64(i * TIME_RECORD_BYTES + 8, BigInt(end));
  });
  return out;
}

/** The 8 bytes of `x` as a big-endian IEEE-754 double. */
function f64Bytes(x: number): number[] {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, x);
  return [...b];
}

describe('time records', () => {
  it('are a big-endian f64 timestamp (epoch ms), then a big-endian u64 cumulative length', () => {
    const b = timeFile([[1745000000123.456, 0x0a0b0c0d0e0f]]);
    expect(b.length).toBe(16);
    expect([...b.subarray(0, 8)]).toEqual(f64Bytes(1745000000123.456));
    expect([...b.subarray(0, 8)]).toEqual([...Buffer.from('427964a1aea7b74c', 'hex')]);
    expect([...b.subarray(8)]).toEqual([0, 0, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
    expect(TIME_ENCODING).toBe('f64-ms');
  });

  it('round-trip the exact double now() returned (fractional ms bit-identical) and lengths beyond 2^32, up to 2^53 - 1', () => {
    const records: Array<[number, number]> = [
      [1745000000123.456, 1],
      [1745000000123.457, 2 ** 32 + 5],
      [1795574049502.512, 2 ** 40 + 3],
      [1795574049502.5127, 2 ** 40 + 4],
      [0, 2 ** 41],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ];
    const file = timeFile(records);
    const { records: back, trailing } = parseTimeIndex(file);
    expect(back).toEqual(records.map(([t, end]) => ({ t, end })));
    expect(trailing).toBe(0);
    // Bit-identical, not just close: the very same double, so it compares with a trace's started_at as is.
    for (const [i, [t]] of records.entries()) {
      expect(Object.is(back[i]!.t, t)).toBe(true);
      expect([...file.subarray(i * 16, i * 16 + 8)]).toEqual(f64Bytes(t));
    }
    expect(back[2]!.t).toBe(1795574049502.512);
    expect(back[2]!.t - back[1]!.t).toBe(1795574049502.512 - 1745000000123.457);
  });

  it('read version-1 vncua records (u64 epoch µs) as epoch ms', () => {
    const file = u64TimeFile([
      [1745000000123456n, 1],
      [1795574049502512n, 2 ** 32 + 5],
    ]);
    expect(parseTimeIndex(file, 'u64-us')).toEqual({
      records: [
        { t: 1745000000123.456, end: 1 },
        { t: 1795574049502.512, end: 2 ** 32 + 5 },
      ],
      trailing: 0,
    });
  });

  it('read uitask records (u64 epoch ns) as epoch ms, to well under a µs', () => {
    const file = u64TimeFile([
      [1745000000123456789n, 7],
      [1795574049502512000n, 2 ** 33],
    ]);
    const { records, trailing } = parseTimeIndex(file, 'u64-ns');
    expect(trailing).toBe(0);
    expect(records.map((r) => r.end)).toEqual([7, 2 ** 33]);
    expect(records[0]!.t).toBeCloseTo(1745000000123.457, 3);
    expect(Math.abs(records[1]!.t - 1795574049502.512)).toBeLessThan(0.001);
  });

  it('decode the same bytes differently by encoding (the manifest decides which one applies)', () => {
    const v2 = timeFile([[1795574049502.512, 9]]);
    const view = new DataView(v2.buffer);
    expect(readTimeRecord(view, 0, 'f64-ms')).toEqual({ t: 1795574049502.512, end: 9 });
    // Read as integers, the double's bits are a huge number, nowhere near an epoch in µs.
    expect(readTimeRecord(view, 0, 'u64-us').t).toBeGreaterThan(1e15);
    expect(readTimeRecord(view, 0, 'u64-us').end).toBe(9);
  });

  it('decode damaged f64 timestamps as they are (NaN, negative, infinite) for the reader to reject', () => {
    const { records } = parseTimeIndex(
      timeFile([
        [Number.NaN, 1],
        [-1, 2],
        [Number.POSITIVE_INFINITY, 3],
      ]),
    );
    expect(records.map((r) => r.end)).toEqual([1, 2, 3]);
    expect(records[0]!.t).toBeNaN();
    expect(records[1]!.t).toBe(-1);
    expect(records[2]!.t).toBe(Number.POSITIVE_INFINITY);
  });

  it('report the bytes of an incomplete last record instead of decoding them, in every encoding', () => {
    for (let extra = 1; extra < TIME_RECORD_BYTES; extra++) {
      const { records, trailing } = parseTimeIndex(timeFile([[7.25, 9]], extra));
      expect(records).toEqual([{ t: 7.25, end: 9 }]);
      expect(trailing).toBe(extra);
      const old = new Uint8Array(TIME_RECORD_BYTES + extra);
      old.set(u64TimeFile([[7000n, 9]]));
      expect(parseTimeIndex(old, 'u64-us')).toEqual({ records: [{ t: 7, end: 9 }], trailing: extra });
      old.set(u64TimeFile([[7_000_000n, 9]]));
      expect(parseTimeIndex(old, 'u64-ns')).toEqual({ records: [{ t: 7, end: 9 }], trailing: extra });
    }
  });

  it('read from a view into a larger buffer', () => {
    const file = timeFile([
      [1.5, 10],
      [2, 20],
    ]);
    const big = new Uint8Array(file.length + 5);
    big.set(file, 5);
    expect(parseTimeIndex(big.subarray(5)).records).toEqual([
      { t: 1.5, end: 10 },
      { t: 2, end: 20 },
    ]);
  });
});

describe('file names', () => {
  it('connection 0 has no number, connection k has .k.', () => {
    expect(streamFileName('client', 0, 'rfb')).toBe('client.rfb.bin');
    expect(streamFileName('server', 0, 'time')).toBe('server.time.bin');
    expect(streamFileName('server', 3, 'rfb')).toBe('server.3.rfb.bin');
    expect(streamFileName('client', 12, 'time')).toBe('client.12.time.bin');
  });

  it('isStreamFileName accepts exactly those names', () => {
    for (const n of ['client.rfb.bin', 'server.time.bin', 'client.1.rfb.bin', 'server.42.time.bin']) expect(isStreamFileName(n)).toBe(true);
    for (const n of ['client.0.rfb.bin', 'client.01.rfb.bin', 'viewer.rfb.bin', 'client.rfb.bin.tmp', 'recording.json', 'client.x.rfb.bin'])
      expect(isStreamFileName(n)).toBe(false);
  });
});
