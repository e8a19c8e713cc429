/**
 * The leak scan: every byte of a set of files (or buffers) searched for a secret's plaintext and its simple encodings
 * (registry.ts encodingsOf: JSON-escaped, URL-encoded, base64), plus, in RFB client streams, the secret typed as
 * KeyEvents (its characters' keysyms pressed in order, whatever else lies between the messages).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodingsOf } from './registry.ts';

/** One place a secret was found. */
export interface LeakHit {
  /** The file (or buffer name). */
  where: string;
  /** Which form: plaintext, an encoding, or `keysyms`. */
  form: string;
  offset: number;
}

/** Every file under `dir`, recursively. */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** The characters typed by the KeyEvents (RFC 6143 §7.5.4: 4, down, 0, 0, keysym) found in `bytes`, presses only, in order. */
export function typedByKeyEvents(bytes: Uint8Array): string {
  let s = '';
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i + 8 <= b.length; i++) {
    if (b[i] !== 4 || b[i + 1] !== 1 || b[i + 2] !== 0 || b[i + 3] !== 0) continue;
    const k = b.readUInt32BE(i + 4);
    if (k >= 0x20 && k <= 0x7e) s += String.fromCharCode(k);
    else if (k > 0x1000000 && k <= 0x110ffff) s += String.fromCodePoint(k - 0x1000000);
    i += 7;
  }
  return s;
}

/** Search `bytes` (named `where`) for `secret` in every form; the keysym form for every buffer (it costs little). */
export function scanBytes(where: string, bytes: Uint8Array, secret: string): LeakHit[] {
  const hits: LeakHit[] = [];
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const form of encodingsOf(secret)) {
    const at = b.indexOf(form);
    if (at >= 0) hits.push({ where, form: form === secret ? 'plaintext' : `encoding ${form}`, offset: at });
  }
  const typed = typedByKeyEvents(b);
  const at = typed.indexOf(secret);
  if (at >= 0) hits.push({ where, form: 'keysyms', offset: at });
  return hits;
}

/** Scan every file under each of `dirs` for `secret`; returns the hits and how many files and bytes were read. */
export async function scanDirs(dirs: readonly string[], secret: string): Promise<{ hits: LeakHit[]; files: number; bytes: number }> {
  const hits: LeakHit[] = [];
  let files = 0;
  let bytes = 0;
  for (const d of dirs) {
    for (const f of await filesUnder(d)) {
      const data = await readFile(f);
      files++;
      bytes += data.byteLength;
      hits.push(...scanBytes(f, data, secret));
    }
  }
  return { hits, files, bytes };
}
