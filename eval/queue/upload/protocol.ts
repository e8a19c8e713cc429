/**
 * The results upload's HTTP protocol, shared by the receiver (coordinator) and the sink (worker). Every
 * request carries `Authorization: Bearer <token>`; errors answer JSON `{ code, message }`.
 *
 *   POST   /v1/uploads                  -> 201 { id }             begin an upload (an empty incoming dir)
 *   PUT    /v1/uploads/<id>/f/<path>    -> 201 { size, sha256 }   one file, streamed; headers x-vncua-size,
 *                                                                  x-vncua-sha256 (hex): checked before it lands
 *   POST   /v1/uploads/<id>/commit      -> 200 { rel }            body CommitBody: move the upload to <out>/<rel>
 *   DELETE /v1/uploads/<id>             -> 204                    drop an upload (the worker gave up)
 *
 * Status codes: 400 bad request or path (QUEUE_ERR_BAD_PATH), 401 wrong token, 404 unknown upload, 409 the run
 * is finished already (QUEUE_ERR_ALREADY_FINISHED), 422 a file's size or sha256 did not match, or the upload
 * does not hold the files the commit lists, 507 the receiver's disk is full, 500 anything else.
 */

/** The path prefix of every route. */
export const API = '/v1/uploads';
/** Header: the file's size in bytes (decimal). */
export const SIZE_HEADER = 'x-vncua-size';
/** Header: the file's sha256, lowercase hex. */
export const SHA_HEADER = 'x-vncua-sha256';

/** One file of a commit: its path inside the run, size and sha256 (hex). */
export interface CommitFile {
  path: string;
  size: number;
  sha256: string;
}

/** The body of a commit: the run dir relative to the results root, every file, and every empty directory. */
export interface CommitBody {
  rel: string;
  files: CommitFile[];
  dirs: string[];
}

/** An upload id: 32 lowercase hex digits. */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;

/** A file path in a URL: each segment percent-encoded. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
