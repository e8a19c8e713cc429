/**
 * Redacted key events in the client stream (recorder/FORMAT.md, "Redacted key events"). The Agent tells the proxy,
 * before it sends them, which KeyEvents type a secret (`redactKeyEvents`); the proxy finds exactly those messages, in
 * order, in the client bytes it records and writes each with its keysym replaced by REDACTED_KEYSYM (X11's
 * VoidSymbol), its down flag kept. What is relayed to the desktop is untouched. Bytes that may be the start of an
 * expected KeyEvent split across two reads are held back until the next read (or the end), so a split message is
 * redacted too.
 *
 * KeyEvent (RFC 6143 §7.5.4):
 *   offset  size  field
 *   0       1     message-type = 4
 *   1       1     down-flag (0 or 1)
 *   2       2     padding
 *   4       4     key (keysym), big-endian
 */

/** The keysym a redacted KeyEvent is recorded with (X11 VoidSymbol). */
export const REDACTED_KEYSYM = 0xffffff;

/** One KeyEvent the client is about to send. */
export interface ExpectedKey {
  keysym: number;
  down: boolean;
}

/** The 8 bytes of a KeyEvent. */
export function keyEventBytes(k: ExpectedKey): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt8(4, 0);
  b.writeUInt8(k.down ? 1 : 0, 1);
  b.writeUInt32BE(k.keysym >>> 0, 4);
  return b;
}

/** Finds expected KeyEvents in a byte stream and redacts them (see the file comment). Pure: bytes in, bytes out. */
export class KeyEventRedactor {
  #queue: Buffer[] = [];
  #held: Buffer = Buffer.alloc(0);

  /** KeyEvents still expected. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Expect `keys` (in the order they will be sent) after those already expected. */
  expect(keys: readonly ExpectedKey[]): void {
    for (const k of keys) this.#queue.push(keyEventBytes(k));
  }

  /** The bytes to record for `chunk` (possibly fewer: a tail that may start an expected KeyEvent is held back). */
  process(chunk: Buffer): Buffer {
    if (this.#queue.length === 0 && this.#held.length === 0) return chunk;
    const data = this.#held.length ? Buffer.concat([this.#held, chunk]) : Buffer.from(chunk);
    this.#held = Buffer.alloc(0);
    let from = 0;
    while (this.#queue.length > 0) {
      const want = this.#queue[0]!;
      const at = data.indexOf(want, from);
      if (at < 0) break;
      data.writeUInt32BE(REDACTED_KEYSYM, at + 4);
      this.#queue.shift();
      from = at + 8;
    }
    if (this.#queue.length === 0) return data;
    // Hold back the longest tail that is a proper prefix of the next expected KeyEvent.
    const want = this.#queue[0]!;
    for (let n = Math.min(7, data.length - from); n > 0; n--) {
      if (data.subarray(data.length - n).equals(want.subarray(0, n))) {
        this.#held = Buffer.from(data.subarray(data.length - n));
        return data.subarray(0, data.length - n);
      }
    }
    return data;
  }

  /** The bytes still held back (at the end of the stream); stops expecting. */
  flush(): Buffer {
    const h = this.#held;
    this.#held = Buffer.alloc(0);
    this.#queue = [];
    return h;
  }
}
