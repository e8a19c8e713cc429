/** The recording's names and 16-byte time records. */
import { describe, expect, it } from 'vitest';
import { TIME_RECORD_BYTES, epochMsToUs, isStreamFileName, parseTimeIndex, streamFileName, writeTimeRecord } from './format.ts';

/** A .time.bin holding `records` (built with the writer under test). */
function timeFile(records: Array<[number, number]>, extra = 0): Uint8Array {
  const out = new Uint8Array(records.length * TIME_RECORD_BYTES + extra);
  records.forEach(([t, end], i) => writeTimeRecord(out, i * TIME_RECORD_BYTES, t, end));
  return out;
}

describe('time records', () => {
  it('are big-endian u64 pairs: timestamp, then cumulative length', () => {
    const b = timeFile([[0x0102030405, 0x0a0b0c0d0e0f]]);
    expect([...b]).toEqual([0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f]);
  });

  it('round-trip epoch microseconds and lengths beyond 2^32, up to 2^53 - 1', () => {
    const records: Array<[number, number]> = [
      [epochMsToUs(1745000000123.456), 1],
      [epochMsToUs(1745000000123.457), 2 ** 32 + 5],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ];
    expect(records[0]![0]).toBe(1745000000123456);
    const { records: back, trailing } = parseTimeIndex(timeFile(records));
    expect(back).toEqual(records.map(([t, end]) => ({ t, end })));
    expect(trailing).toBe(0);
  });

  it('report the bytes of an incomplete last record instead of decoding them', () => {
    for (let extra = 1; extra < TIME_RECORD_BYTES; extra++) {
      const { records, trailing } = parseTimeIndex(timeFile([[7, 9]], extra));
      expect(records).toEqual([{ t: 7, end: 9 }]);
      expect(trailing).toBe(extra);
    }
  });

  it('read from a view into a larger buffer', () => {
    const file = timeFile([
      [1, 10],
      [2, 20],
    ]);
    const big = new Uint8Array(file.length + 5);
    big.set(file, 5);
    expect(parseTimeIndex(big.subarray(5)).records).toEqual([
      { t: 1, end: 10 },
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
    for (const n of ['client.0.rfb.bin', 'client.01.rfb.bin', 'viewer.rfb.bin', 'client.rfb.bin.tmp', 'recording.json', 'client.x.rfb.bin']) expect(isStreamFileName(n)).toBe(false);
  });
});
