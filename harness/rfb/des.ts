/**
 * DES (FIPS 46-3), single block, ECB, for VNC Authentication (RFC 6143 §7.2.2) only.
 * Node's OpenSSL 3 no longer offers `des-ecb`, and relying on 3DES-with-repeated-keys
 * would break under FIPS builds, so this small table-driven version is used instead.
 * Speed is irrelevant: two blocks per connection.
 */

// Tables, 1-based bit positions counted from the most significant bit (FIPS 46-3).
const IP = [
  58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4, 62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32, 24, 16, 8, 57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19,
  11, 3, 61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7,
];
const FP = IP.map((_, i) => IP.indexOf(i + 1) + 1);
// Expansion: each 4-bit group with its neighbours' edge bits, wrapping around.
const E = Array.from({ length: 48 }, (_, i) => ((Math.floor(i / 6) * 4 + (i % 6) - 1 + 32) % 32) + 1);
const P = [16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10, 2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25];
const PC1 = [
  57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18, 10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36, 63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6, 61, 53,
  45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
];
const PC2 = [
  14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2, 41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36,
  29, 32,
];
const SHIFTS = [1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1];
// S-boxes: 4 rows of 16, row = outer bits, column = inner 4 bits.
const S = [
  '14 4 13 1 2 15 11 8 3 10 6 12 5 9 0 7 0 15 7 4 14 2 13 1 10 6 12 11 9 5 3 8 4 1 14 8 13 6 2 11 15 12 9 7 3 10 5 0 15 12 8 2 4 9 1 7 5 11 3 14 10 0 6 13',
  '15 1 8 14 6 11 3 4 9 7 2 13 12 0 5 10 3 13 4 7 15 2 8 14 12 0 1 10 6 9 11 5 0 14 7 11 10 4 13 1 5 8 12 6 9 3 2 15 13 8 10 1 3 15 4 2 11 6 7 12 0 5 14 9',
  '10 0 9 14 6 3 15 5 1 13 12 7 11 4 2 8 13 7 0 9 3 4 6 10 2 8 5 14 12 11 15 1 13 6 4 9 8 15 3 0 11 1 2 12 5 10 14 7 1 10 13 0 6 9 8 7 4 15 14 3 11 5 2 12',
  '7 13 14 3 0 6 9 10 1 2 8 5 11 12 4 15 13 8 11 5 6 15 0 3 4 7 2 12 1 10 14 9 10 6 9 0 12 11 7 13 15 1 3 14 5 2 8 4 3 15 0 6 10 1 13 8 9 4 5 11 12 7 2 14',
  '2 12 4 1 7 10 11 6 8 5 3 15 13 0 14 9 14 11 2 12 4 7 13 1 5 0 15 10 3 9 8 6 4 2 1 11 10 13 7 8 15 9 12 5 6 3 0 14 11 8 12 7 1 14 2 13 6 15 0 9 10 4 5 3',
  '12 1 10 15 9 2 6 8 0 13 3 4 14 7 5 11 10 15 4 2 7 12 9 5 6 1 13 14 0 11 3 8 9 14 15 5 2 8 12 3 7 0 4 10 1 13 11 6 4 3 2 12 9 5 15 10 11 14 1 7 6 0 8 13',
  '4 11 2 14 15 0 8 13 3 12 9 7 5 10 6 1 13 0 11 7 4 9 1 10 14 3 5 12 2 15 8 6 1 4 11 13 12 3 7 14 10 15 6 8 0 5 9 2 6 11 13 8 1 4 10 7 9 5 0 15 14 2 3 12',
  '13 2 8 4 6 15 11 1 10 9 3 14 5 0 12 7 1 15 13 8 10 3 7 4 12 5 6 11 0 14 9 2 7 11 4 1 9 12 14 2 0 6 10 13 15 3 5 8 2 1 14 7 4 10 8 13 15 12 9 0 3 5 6 11',
].map((row) => row.split(' ').map(Number));

type Bits = number[];

function toBits(bytes: Uint8Array): Bits {
  const out: Bits = [];
  for (const b of bytes) for (let i = 7; i >= 0; i--) out.push((b >> i) & 1);
  return out;
}

function fromBits(bits: Bits): Uint8Array {
  const out = new Uint8Array(bits.length / 8);
  bits.forEach((bit, i) => {
    out[i >> 3]! |= bit << (7 - (i & 7));
  });
  return out;
}

const permute = (bits: Bits, table: number[]): Bits => table.map((p) => bits[p - 1]!);
const rotate = (half: Bits, n: number): Bits => [...half.slice(n), ...half.slice(0, n)];

/** The 16 round keys (48 bits each) of an 8-byte DES key. */
function roundKeys(key: Uint8Array): Bits[] {
  const cd = permute(toBits(key), PC1);
  let c = cd.slice(0, 28);
  let d = cd.slice(28);
  return SHIFTS.map((n) => {
    c = rotate(c, n);
    d = rotate(d, n);
    return permute([...c, ...d], PC2);
  });
}

function feistel(r: Bits, k: Bits): Bits {
  const x = permute(r, E).map((b, i) => b ^ k[i]!);
  const out: Bits = [];
  for (let s = 0; s < 8; s++) {
    const b = x.slice(s * 6, s * 6 + 6);
    const row = (b[0]! << 1) | b[5]!;
    const col = (b[1]! << 3) | (b[2]! << 2) | (b[3]! << 1) | b[4]!;
    const v = S[s]![row * 16 + col]!;
    out.push((v >> 3) & 1, (v >> 2) & 1, (v >> 1) & 1, v & 1);
  }
  return permute(out, P);
}

/** Standard DES encryption of one 8-byte block with an 8-byte key (parity bits ignored). */
export function desEncryptBlock(key: Uint8Array, block: Uint8Array): Uint8Array {
  if (key.length !== 8 || block.length !== 8) throw new RangeError('DES needs an 8-byte key and an 8-byte block');
  const ip = permute(toBits(block), IP);
  let l = ip.slice(0, 32);
  let r = ip.slice(32);
  for (const k of roundKeys(key)) {
    const f = feistel(r, k);
    [l, r] = [r, l.map((b, i) => b ^ f[i]!)];
  }
  return fromBits(permute([...r, ...l], FP));
}

/** Reverse the bit order of a byte (VNC's DES key quirk: it takes the lowest bit of each key byte first). */
function reverseBits(b: number): number {
  let r = 0;
  for (let i = 0; i < 8; i++) r |= ((b >> i) & 1) << (7 - i);
  return r;
}

/** The DES key VNC Authentication derives from a password: its first 8 UTF-8 bytes, zero-padded, each byte bit-reversed. */
export function vncAuthKey(password: string | Uint8Array): Uint8Array {
  const raw = typeof password === 'string' ? Buffer.from(password, 'utf8') : password;
  const key = new Uint8Array(8);
  for (let i = 0; i < 8 && i < raw.length; i++) key[i] = reverseBits(raw[i]!);
  return key;
}

/** The 16-byte VNC Authentication response: each 8-byte half of the challenge DES-encrypted (ECB) with the password's key. */
export function vncAuthResponse(password: string | Uint8Array, challenge: Uint8Array): Uint8Array {
  if (challenge.length !== 16) throw new RangeError('a VNC Authentication challenge is 16 bytes');
  const key = vncAuthKey(password);
  const out = new Uint8Array(16);
  out.set(desEncryptBlock(key, challenge.subarray(0, 8)), 0);
  out.set(desEncryptBlock(key, challenge.subarray(8, 16)), 8);
  return out;
}
