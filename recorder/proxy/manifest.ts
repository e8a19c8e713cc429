/**
 * recording.json: the recording's manifest, rewritten atomically (temp file + rename) whenever a
 * connection opens or closes. Saves are serialized; a save asked for while one is being written
 * waits for it and then writes the state as it is by then (several requests share one write).
 */
import { join } from 'node:path';
import { VncuaError } from '../../harness/errors.ts';
import { writeFileAtomic } from '../../harness/trace/atomic.ts';
import { FORMAT_NAME, FORMAT_VERSION, MANIFEST_FILE, type Manifest, type ManifestConnection } from './format.ts';

/** The live manifest of one recording. */
export class ManifestFile {
  readonly path: string;
  readonly connections: ManifestConnection[] = [];
  private chain: Promise<void> = Promise.resolve();
  private next: Promise<void> | null = null;

  constructor(
    dir: string,
    private readonly upstream: string,
  ) {
    this.path = join(dir, MANIFEST_FILE);
  }

  /** The manifest as it stands. */
  snapshot(): Manifest {
    return {
      format: FORMAT_NAME,
      version: FORMAT_VERSION,
      time_unit: 'ms',
      time_encoding: 'f64',
      clock: 'epoch',
      upstream: this.upstream,
      connections: this.connections.map((c) => ({ ...c, bytes: { ...c.bytes } })),
    };
  }

  /** Write the current state (atomically); rejects with RECORDER_ERR_WRITE. */
  save(): Promise<void> {
    if (this.next) return this.next;
    const next = this.chain.then(() => {
      this.next = null;
      return writeFileAtomic(this.path, `${JSON.stringify(this.snapshot(), null, 2)}\n`).catch((cause: unknown) => {
        throw new VncuaError(
          'RECORDER_ERR_WRITE',
          `could not write ${this.path}: ${cause instanceof Error ? cause.message : String(cause)}; check that the recording directory still exists and the disk is not full`,
          {
            cause,
            details: { path: this.path },
          },
        );
      });
    });
    this.next = next;
    this.chain = next.catch(() => {});
    return next;
  }
}
