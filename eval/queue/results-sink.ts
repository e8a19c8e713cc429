/** Where a queue worker puts one attempt of a run, and how a finished attempt lands in the results root. */
export interface ResultsSink {
  /** A fresh empty directory where one attempt of job `jobId` writes. */
  staging(jobId: string, token: string): Promise<string>;
  /** Put a finished attempt's staged dir at <out>/<rel>, replacing a leftover there but REFUSING (QUEUE_ERR_ALREADY_FINISHED) when <out>/<rel> already holds a finished run; then remove the staging dir. */
  commit(stagingDir: string, rel: string, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Drop an attempt's staging dir. */
  discard(stagingDir: string): Promise<void>;
}
