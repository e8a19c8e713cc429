import { createCipheriv, getCiphers } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { desEncryptBlock, vncAuthKey, vncAuthResponse } from './des.ts';

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A seeded xorshift PRNG so the random cross-check is reproducible. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** TigerVNC's fixed key for obfuscating stored passwords (vncpasswd -f encrypts the password with it, VNC-style). */
const VNCPASSWD_FIXED_KEY = Uint8Array.from([23, 82, 107, 6, 35, 78, 88, 7]);

describe('DES', () => {
  it('matches the classic FIPS worked example', () => {
    expect(toHex(desEncryptBlock(hex('133457799bbcdff1'), hex('0123456789abcdef')))).toBe('85e813540f0ab405');
  });

  it('matches the NBS variable-plaintext known-answer vectors', () => {
    const key = hex('0101010101010101');
    expect(toHex(desEncryptBlock(key, hex('8000000000000000')))).toBe('95f8a5e5dd31d900');
    expect(toHex(desEncryptBlock(key, hex('4000000000000000')))).toBe('dd7f121ca5015619');
    expect(toHex(desEncryptBlock(key, hex('0000000000000001')))).toBe('166b40b44aba4bd6');
  });

  it.skipIf(!getCiphers().includes('des-ede3-ecb'))('agrees with OpenSSL 3DES (K1=K2=K3 is single DES) on 200 random key/block pairs', () => {
    const rand = prng(0xdec0de);
    for (let i = 0; i < 200; i++) {
      const key = Uint8Array.from({ length: 8 }, () => rand() & 0xff);
      const block = Uint8Array.from({ length: 8 }, () => rand() & 0xff);
      const c = createCipheriv('des-ede3-ecb', Buffer.concat([key, key, key]), null);
      c.setAutoPadding(false);
      const want = Buffer.concat([c.update(block), c.final()]);
      expect(toHex(desEncryptBlock(key, block)), `key ${toHex(key)} block ${toHex(block)}`).toBe(want.toString('hex'));
    }
  });
});

describe('VNC Authentication', () => {
  it('bit-reverses each key byte and zero-pads / truncates the password to 8 bytes', () => {
    expect(toHex(vncAuthKey('a'))).toBe('8600000000000000'); // 'a' = 0x61 = 01100001 -> 10000110
    expect(toHex(vncAuthKey('abcdefghijk'))).toBe(toHex(vncAuthKey('abcdefgh')));
    expect(toHex(vncAuthKey(''))).toBe('0000000000000000');
  });

  it('reproduces what TigerVNC vncpasswd -f stores (its own VNC-style DES with a fixed key)', () => {
    for (const password of ['secret12', 'ab', 'abcdefghij']) {
      const stored = execFileSync('vncpasswd', ['-f'], { input: `${password}\n` });
      const block = new Uint8Array(8);
      block.set(Buffer.from(password, 'latin1').subarray(0, 8));
      expect(toHex(desEncryptBlock(vncAuthKey(VNCPASSWD_FIXED_KEY), block)), password).toBe(stored.toString('hex'));
    }
  });

  it('encrypts both halves of the challenge independently (ECB)', () => {
    const challenge = hex('00112233445566778899aabbccddeeff');
    const response = vncAuthResponse('secret12', challenge);
    const key = vncAuthKey('secret12');
    expect(toHex(response.subarray(0, 8))).toBe(toHex(desEncryptBlock(key, challenge.subarray(0, 8))));
    expect(toHex(response.subarray(8))).toBe(toHex(desEncryptBlock(key, challenge.subarray(8))));
    expect(toHex(response.subarray(0, 8))).not.toBe(toHex(response.subarray(8)));
  });
});
