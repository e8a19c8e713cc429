import { describe, expect, it } from 'vitest';
import { KeyEventRedactor, REDACTED_KEYSYM, keyEventBytes, type ExpectedKey } from './redact-keys.ts';

/** A PointerEvent (RFC 6143 §7.5.5): type 5, button mask, x, y. */
function pointerEvent(x: number, y: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUInt8(5, 0);
  b.writeUInt16BE(x, 2);
  b.writeUInt16BE(y, 4);
  return b;
}

const typed = (s: string): ExpectedKey[] =>
  [...s].flatMap((c) => [
    { keysym: c.charCodeAt(0), down: true },
    { keysym: c.charCodeAt(0), down: false },
  ]);

describe('KeyEventRedactor', () => {
  const secret = typed('pw!9');
  const before = keyEventBytes({ keysym: 0x61, down: true });
  const stream = Buffer.concat([
    before,
    keyEventBytes({ keysym: 0x61, down: false }),
    pointerEvent(3, 4),
    ...secret.map(keyEventBytes),
    pointerEvent(5, 6),
    keyEventBytes({ keysym: 0x70, down: true }),
  ]);
  const expected = Buffer.from(stream);
  for (let i = 0; i < secret.length; i++) expected.writeUInt32BE(REDACTED_KEYSYM, 22 + i * 8 + 4);

  it('redacts exactly the expected KeyEvents, in order, with the stream split at every offset', () => {
    for (let a = 0; a <= stream.length; a++) {
      for (const b of [a, Math.min(stream.length, a + 3), Math.min(stream.length, a + 9)]) {
        const r = new KeyEventRedactor();
        r.expect(secret);
        const out = Buffer.concat([r.process(stream.subarray(0, a)), r.process(stream.subarray(a, b)), r.process(stream.subarray(b)), r.flush()]);
        expect(out.equals(expected), `split at ${a}, ${b}`).toBe(true);
        expect(r.pending).toBe(0);
      }
    }
  });

  it('passes a stream through untouched when nothing is expected', () => {
    const r = new KeyEventRedactor();
    expect(r.process(stream)).toBe(stream);
  });

  it('never leaves a secret keysym in order: the typed p (down) after the secret is kept', () => {
    const r = new KeyEventRedactor();
    r.expect(secret);
    const out = Buffer.concat([r.process(stream), r.flush()]);
    expect(out.subarray(out.length - 8).equals(keyEventBytes({ keysym: 0x70, down: true }))).toBe(true);
  });
});
