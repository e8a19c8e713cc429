/**
 * Parsers for the handshake and initialisation messages the server sends
 * (RFC 6143 §7.1–§7.3), and the version / security-type choices.
 *
 * Every `tryRead*` consumes nothing and returns null until the whole message has
 * arrived, then consumes it and returns its value, so a caller can retry with
 * more bytes at any split.
 */
import { VncuaError } from '../errors.ts';
import type { ByteQueue } from './bytes.ts';
import type { RfbVersion } from './client-messages.ts';
import { assertSaneSize } from './encodings/types.ts';

/** Longest reason string accepted (refusal, security failure): anything longer is treated as garbage. */
export const MAX_REASON_LENGTH = 64 * 1024;
/** Longest desktop name accepted in ServerInit. */
export const MAX_NAME_LENGTH = 1024 * 1024;

/** Security types this client implements. */
export const SECURITY_NONE = 1;
export const SECURITY_VNC_AUTH = 2;

const SECURITY_NAMES: Record<number, string> = {
  0: 'Invalid',
  1: 'None',
  2: 'VNC Authentication',
  5: 'RA2',
  6: 'RA2ne',
  13: 'RA2 two-step',
  16: 'Tight',
  17: 'Ultra',
  18: 'TLS',
  19: 'VeNCrypt',
  20: 'SASL',
  21: 'MD5',
  22: 'xvp',
  30: 'Apple Diffie-Hellman (ARD)',
  35: 'Apple',
  129: 'RA256',
  130: 'RA256ne',
};

/** A security type's number with its registered name, for error messages. */
export function securityTypeName(t: number): string {
  return `${t} (${SECURITY_NAMES[t] ?? 'unknown'})`;
}

/** Decode a protocol string: UTF-8 when valid (RFC 6143 recommends it), otherwise Latin-1 (what older servers send). */
export function decodeRfbString(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return Buffer.from(bytes).toString('latin1');
  }
}

/** What the server announced and what this client will speak. */
export interface NegotiatedVersion {
  /** The server's "xxx.yyy" as sent. */
  announced: string;
  /** The version this client replies with. */
  version: RfbVersion;
}

const VERSION_RE = /^RFB (\d{3})\.(\d{3})\n$/;
const RANK: Record<RfbVersion, number> = { '3.3': 0, '3.7': 1, '3.8': 2 };

/**
 * The highest version this client speaks that is ≤ the server's.
 * - 3.3 .. 3.6 → 3.3 (RFC 6143 says 3.5 is a misreported 3.3; 3.4/3.6 are UltraVNC/others' 3.3 variants)
 * - 3.7 → 3.7
 * - 3.8 and above, including Apple's 3.889 and RealVNC's 4.x / 5.x → 3.8
 * - below 3.3, or not "RFB xxx.yyy\n" → RFB_ERR_UNSUPPORTED_VERSION
 */
export function negotiateVersion(announced: string, max: RfbVersion = '3.8'): RfbVersion {
  const m = VERSION_RE.exec(announced);
  if (!m) {
    const printable = JSON.stringify(announced);
    const hint = announced.startsWith('HTTP/') ? ' (that is an HTTP server: use the ws:// URL of its WebSocket, or the VNC port with tcp://)' : '';
    throw new VncuaError(
      'RFB_ERR_UNSUPPORTED_VERSION',
      `the server did not start with an RFB ProtocolVersion ("RFB xxx.yyy\\n") but sent ${printable}${hint}; is this a VNC server?`,
      {
        details: { announced },
      },
    );
  }
  const major = Number(m[1]);
  const minor = Number(m[2]);
  let v: RfbVersion;
  if (major > 3 || (major === 3 && minor >= 8)) v = '3.8';
  else if (major === 3 && minor === 7) v = '3.7';
  else if (major === 3 && minor >= 3) v = '3.3';
  else {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_VERSION', `the server speaks RFB ${major}.${minor}, older than 3.3, the oldest version this client speaks`, {
      details: { announced },
    });
  }
  return RANK[v] <= RANK[max] ? v : max;
}

/**
 * ProtocolVersion (§7.1.1), 12 bytes of ASCII:
 *   "RFB 003.008\n"  (major and minor, zero-padded to 3 digits)
 */
export function tryReadProtocolVersion(q: ByteQueue, max: RfbVersion = '3.8'): NegotiatedVersion | null {
  if (!q.has(12)) return null;
  const text = Buffer.from(q.readBytes(12)).toString('latin1');
  return { announced: text.slice(4, 11), version: negotiateVersion(text, max) };
}

/**
 * A reason string (§7.1.2, §7.1.3):
 *   +------------------+-----------------------------+
 *   | U32 reason-length| U8 reason-string[length]    |
 *   +------------------+-----------------------------+
 * Peeks at `offset` bytes ahead; returns the string (trailing NULs removed) and the total byte count, or null until complete.
 */
function peekReason(q: ByteQueue, offset: number): { reason: string; size: number } | null {
  if (!q.has(offset + 4)) return null;
  const len = q.peekU32(offset);
  if (len > MAX_REASON_LENGTH) {
    throw new VncuaError('RFB_ERR_PROTOCOL', `the server announced a ${len}-byte reason string (limit ${MAX_REASON_LENGTH}); the stream is corrupt`, { details: { length: len } });
  }
  if (!q.has(offset + 4 + len)) return null;
  // QEMU counts the C string's NUL in the length ("Authentication failed\0"): not part of the text.
  return { reason: decodeRfbString(q.peekBytes(len, offset + 4)).replace(/\0+$/, ''), size: 4 + len };
}

/** The server's security offer: a list of types, or a refusal with its reason. */
export type SecurityOffer = { types: number[] } | { refused: string };

/**
 * Security types, version 3.7 onwards (§7.1.2):
 *   +---------------------------+--------------------------------+
 *   | U8 number-of-types (n)    | U8 security-types[n]           |
 *   +---------------------------+--------------------------------+
 *   n = 0: a reason string follows (U32 length, U8 text[length]) and the server closes.
 */
export function tryReadSecurityTypes(q: ByteQueue): SecurityOffer | null {
  if (!q.has(1)) return null;
  const n = q.peekU8(0);
  if (n === 0) {
    const r = peekReason(q, 1);
    if (!r) return null;
    q.skip(1 + r.size);
    return { refused: r.reason };
  }
  if (!q.has(1 + n)) return null;
  q.skip(1);
  return { types: Array.from(q.readBytes(n)) };
}

/**
 * Security type, version 3.3 (§7.1.2): the server decides.
 *   +---------------------+
 *   | U32 security-type   |   0 = failed (a reason string follows), 1 = None, 2 = VNC Authentication
 *   +---------------------+
 */
export function tryReadSecurityType33(q: ByteQueue): SecurityOffer | null {
  if (!q.has(4)) return null;
  const t = q.peekU32(0);
  if (t === 0) {
    const r = peekReason(q, 4);
    if (!r) return null;
    q.skip(4 + r.size);
    return { refused: r.reason };
  }
  q.skip(4);
  return { types: [t] };
}

/**
 * Pick the security type to use:
 * - with a password: VNC Authentication if offered (the caller asked to authenticate), else None;
 * - without one: None if offered; VNC Authentication alone → RFB_ERR_AUTH_REQUIRED;
 * - neither offered → RFB_ERR_UNSUPPORTED_SECURITY naming what the server offered.
 */
export function chooseSecurityType(offered: readonly number[], hasPassword: boolean): number {
  const none = offered.includes(SECURITY_NONE);
  const vnc = offered.includes(SECURITY_VNC_AUTH);
  if (hasPassword && vnc) return SECURITY_VNC_AUTH;
  if (none) return SECURITY_NONE;
  if (vnc) {
    throw new VncuaError('RFB_ERR_AUTH_REQUIRED', 'the server requires VNC Authentication: pass { password } to connectVnc()', { details: { offered: [...offered] } });
  }
  const names = offered.map(securityTypeName).join(', ');
  throw new VncuaError(
    'RFB_ERR_UNSUPPORTED_SECURITY',
    `the server offered only security types ${names}; this client supports 1 (None) and 2 (VNC Authentication): configure the server to allow one of them (TigerVNC: -SecurityTypes None or VncAuth)`,
    { details: { offered: [...offered] } },
  );
}

/**
 * VNC Authentication challenge (§7.2.2):
 *   +-------------------------+
 *   | U8 challenge[16]        |
 *   +-------------------------+
 */
export function tryReadChallenge(q: ByteQueue): Uint8Array | null {
  if (!q.has(16)) return null;
  return q.readBytes(16).slice();
}

/** The outcome of the security handshake. `reason` only exists for 3.8 failures. */
export type SecurityResult = { ok: true } | { ok: false; status: number; reason: string | null };

/**
 * SecurityResult (§7.1.3):
 *   +-------------+
 *   | U32 status  |   0 = OK, 1 = failed, 2 = failed, too many attempts (Tight)
 *   +-------------+
 *   3.8 and a failure: a reason string follows (U32 length, U8 text[length]); 3.3 / 3.7: the server just closes.
 */
export function tryReadSecurityResult(q: ByteQueue, version: RfbVersion): SecurityResult | null {
  if (!q.has(4)) return null;
  const status = q.peekU32(0);
  if (status === 0) {
    q.skip(4);
    return { ok: true };
  }
  if (version !== '3.8') {
    q.skip(4);
    return { ok: false, status, reason: null };
  }
  const r = peekReason(q, 4);
  if (!r) return null;
  q.skip(4 + r.size);
  return { ok: false, status, reason: r.reason };
}

/** The status of a SecurityResult that has begun to arrive (4 bytes), without consuming it; null before that. */
export function peekSecurityStatus(q: ByteQueue): number | null {
  return q.has(4) ? q.peekU32(0) : null;
}

/** ServerInit's size and name. Its pixel format is read by the session (`RfbSession.serverPixelFormat`, kept for recordings of clients that never send SetPixelFormat); the live client then sets its own. */
export interface ServerInit {
  width: number;
  height: number;
  name: string;
}

/**
 * ServerInit (§7.3.2):
 *   +--------------------+---------------------+------------------------+
 *   | U16 fb-width       | U16 fb-height       | PIXEL_FORMAT (16 bytes)|
 *   +--------------------+---------------------+------------------------+
 *   | U32 name-length    | U8 name-string[name-length]                  |
 *   +--------------------+----------------------------------------------+
 */
export function tryReadServerInit(q: ByteQueue): ServerInit | null {
  if (!q.has(24)) return null;
  const width = q.peekU16(0);
  const height = q.peekU16(2);
  assertSaneSize(width, height, 'ServerInit');
  const nameLength = q.peekU32(20);
  if (nameLength > MAX_NAME_LENGTH) {
    throw new VncuaError('RFB_ERR_PROTOCOL', `ServerInit announced a ${nameLength}-byte desktop name (limit ${MAX_NAME_LENGTH}); the stream is corrupt`, {
      details: { nameLength },
    });
  }
  if (!q.has(24 + nameLength)) return null;
  q.skip(24);
  const name = decodeRfbString(q.readBytes(nameLength));
  return { width, height, name };
}
