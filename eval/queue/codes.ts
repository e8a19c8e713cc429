/** The queue's codes of bad input (`vncua eval --queue`, `vncua worker`: exit 2, one line, nothing run). */
export const QUEUE_INPUT_ERROR_CODES: ReadonlySet<string> = new Set([
  'QUEUE_ERR_BAD_URL',
  'QUEUE_ERR_UNREACHABLE',
  'QUEUE_ERR_AUTH',
  'QUEUE_ERR_TLS',
  'QUEUE_ERR_VERSION',
  'QUEUE_ERR_MISMATCH',
  'QUEUE_ERR_RESULTS_UNWRITABLE',
  'QUEUE_ERR_SHARD_ENV',
  'QUEUE_ERR_SUITE_COST',
]);
