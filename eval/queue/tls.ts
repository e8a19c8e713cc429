/** What the queue's TLS clients (Redis over rediss://, the upload to an https:// results receiver) share. */
import { VncuaError } from '../../harness/errors.ts';

/** Node's codes for a server certificate that does not check out (untrusted issuer, self-signed, expired, another name). */
const TLS_CERT_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether `e` says the server's certificate was refused (by its Node code, else its message). */
export function isCertificateError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return (code !== undefined && TLS_CERT_CODES.has(code)) || /certificate/i.test((e as Error | undefined)?.message ?? '');
}

/** QUEUE_ERR_TLS for `server` (e.g. "Redis at rediss://…") whose certificate `e` refused, with the way out. */
export function certificateError(server: string, url: string, e: unknown): VncuaError {
  const reason = (e as Error | undefined)?.message ?? String(e);
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return new VncuaError(
    'QUEUE_ERR_TLS',
    `${server} presented a TLS certificate this machine does not accept (${reason}): trust the CA that signed it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem in the environment of every vncua process, and use the host name the certificate names.`,
    { details: { url, reason, ...(code ? { tlsCode: code } : {}) } },
  );
}
