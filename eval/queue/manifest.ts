/**
 * What a queued suite is: its manifest (kept in Redis at `vncua:suite:<id>`), its id, and its jobs' ids.
 *
 * The suite id is a hash of everything that makes two invocations the same suite: the task file's
 * content, the selected runs, the agent (spec and module content), the options that change results,
 * and the results root. The same command gives the same id, so a restarted coordinator resumes it.
 * A worker checks a manifest against its own copies (checkManifest): the queue format and vncua
 * version (QUEUE_ERR_VERSION), the task file's and agent module's sha256 (QUEUE_ERR_MISMATCH).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';
import type { ScreenSize } from '../../harness/desktop/size.ts';
import { judgeListSchema } from '../judges/spec.ts';
import { resolutionLabel } from '../layout.ts';

/**
 * The queue's format: bumped on any change a worker of another version would misread (2: judges, maxCostUsd,
 * needsHuman in the options; 3: secretsFile).
 */
export const QUEUE_FORMAT = 3;
/** The BullMQ queue every suite's jobs go to (jobs carry their suite id). */
export const QUEUE_NAME = 'vncua-runs';
/** Redis key holding the format of the queue's first user. */
export const FORMAT_KEY = 'vncua:queue:format';
/** Redis key of a suite's manifest. */
export const manifestKey = (suiteId: string): string => `vncua:suite:${suiteId}`;
/** The directory under a results root that the queue owns (staging dirs, marker files); scoring, processing and the viewer skip it. */
export const QUEUE_DIR = '.vncua-queue';

/** This package's version (package.json). */
export const VNCUA_VERSION: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'vncua' && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) return '0.0.0';
    dir = up;
  }
})();

const manifestSchema = z.object({
  format: z.number().int(),
  vncua: z.string(),
  suiteId: z.string(),
  createdAt: z.number(),
  tasks: z.object({ file: z.string(), sha256: z.string(), baseUrl: z.string().optional(), only: z.array(z.string()).optional() }),
  agent: z.object({ spec: z.string(), name: z.string(), module: z.string().optional(), sha256: z.string().nullable() }),
  options: z.object({
    resolutions: z.array(z.string()),
    repeat: z.number().int(),
    maxSteps: z.number().int(),
    retries: z.number().int(),
    successGraceMs: z.number().int().optional(),
    live: z.boolean().optional(),
    script: z.string().optional(),
    scriptSha256: z.string().optional(),
    args: z.array(z.string()),
    shard: z.string().optional(),
    desktopTimeoutMs: z.number().int().optional(),
    allowedDomains: z.array(z.string()).optional(),
    blockedDomains: z.array(z.string()).optional(),
    judges: judgeListSchema.optional(),
    maxCostUsd: z.number().positive().optional(),
    needsHuman: z.enum(['end', 'ask']).optional(),
    // --secrets-file: the absolute path only; each worker reads its own copy there (no secret value is ever in Redis).
    secretsFile: z.string().optional(),
  }),
  out: z.string(),
  results: z.object({ marker: z.string(), upload: z.object({ url: z.string(), token: z.string() }).optional() }),
  /** --rate-limit rules (harness/agent/rate-gate.ts specs): a limit on model calls, not on results, so not in the suite id; each coordinator invocation sets them. */
  rateLimits: z.array(z.string()).optional(),
});

/** A suite's manifest. */
export type SuiteManifest = z.infer<typeof manifestSchema>;

/** The parts of a manifest its id is derived from (everything but the id, the creation time and the upload address). */
export type SuiteIdentity = Pick<SuiteManifest, 'tasks' | 'agent' | 'options' | 'out'>;

/** Canonical JSON (keys sorted), so an id does not depend on key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The suite id: 16 hex digits of the sha256 of its identity. */
export function suiteIdOf(identity: SuiteIdentity): string {
  const { tasks, agent, options, out } = identity;
  return createHash('sha256').update(canonical({ tasks, agent, options, out })).digest('hex').slice(0, 16);
}

/** sha256 (hex) of a file's content. */
export async function fileSha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/** What one job is about (BullMQ job data). */
export interface RunJobData {
  suiteId: string;
  taskId: string;
  size: ScreenSize;
  repeat: number;
  /** The infra failures of earlier attempts (task.json infra_errors), added by the workers that met them. */
  infra?: Array<{ attempt: number; code: string; message: string; agent_result?: unknown }>;
  /** started_at of the last infra-failed attempt; steps of its agent. */
  lastStartedAt?: number;
  lastSteps?: number;
  /** Epoch ms of the first attempt's start (the infra_error result's duration). */
  firstStartedAt?: number;
}

/** A run's BullMQ job id: `<suiteId>.<taskId>@<W>x<H>#<repeat>` (task ids hold no ':' nor '#'). */
export function runJobId(suiteId: string, taskId: string, size: ScreenSize, repeat: number): string {
  return `${suiteId}.${taskId}@${resolutionLabel(size)}#${repeat}`;
}

/** Parse a manifest read from Redis; QUEUE_ERR_VERSION when it is not one this version can read. */
export function parseManifest(text: string, suiteId: string): SuiteManifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const format = (data as { format?: unknown } | undefined)?.format;
  if (typeof format === 'number' && format !== QUEUE_FORMAT) throw versionError(`suite ${suiteId} was queued in queue format ${format}`, format);
  const r = manifestSchema.safeParse(data);
  if (!r.success) throw versionError(`the manifest of suite ${suiteId} is not one this vncua can read`, format);
  return r.data;
}

function versionError(what: string, format: unknown, version?: string): VncuaError {
  return new VncuaError(
    'QUEUE_ERR_VERSION',
    `${what}; this is vncua ${VNCUA_VERSION} (queue format ${QUEUE_FORMAT})${version ? `, it was queued by vncua ${version}` : ''}. Run coordinator and workers from the same vncua version.`,
    { details: { format, expected: QUEUE_FORMAT, version, ours: VNCUA_VERSION } },
  );
}

/** What a worker has: its own task file's and agent module's sha256 (null for a built-in agent). */
export interface LocalCopies {
  tasksSha256: string;
  agentSha256: string | null;
}

/** Check a manifest against this vncua and the worker's copies: QUEUE_ERR_VERSION, QUEUE_ERR_MISMATCH. */
export function checkManifest(m: SuiteManifest, local: LocalCopies, files: { tasks: string; agent?: string }): void {
  if (m.format !== QUEUE_FORMAT) throw versionError(`suite ${m.suiteId} was queued in queue format ${m.format}`, m.format, m.vncua);
  if (m.vncua !== VNCUA_VERSION) throw versionError(`suite ${m.suiteId} was queued by another vncua version`, m.format, m.vncua);
  if (m.tasks.sha256 !== local.tasksSha256)
    throw new VncuaError(
      'QUEUE_ERR_MISMATCH',
      `the task file ${files.tasks} differs from the coordinator's (sha256 ${local.tasksSha256.slice(0, 12)}… here, ${m.tasks.sha256.slice(0, 12)}… there, suite ${m.suiteId}): give this worker the same file (--tasks FILE).`,
      { details: { what: 'tasks', file: files.tasks, ours: local.tasksSha256, theirs: m.tasks.sha256 } },
    );
  if (m.agent.sha256 !== local.agentSha256)
    throw new VncuaError(
      'QUEUE_ERR_MISMATCH',
      `the agent module ${files.agent ?? m.agent.spec} differs from the coordinator's (sha256 ${local.agentSha256?.slice(0, 12) ?? 'none'}… here, ${m.agent.sha256?.slice(0, 12) ?? 'none'}… there, suite ${m.suiteId}): give this worker the same module.`,
      { details: { what: 'agent', file: files.agent ?? m.agent.spec, ours: local.agentSha256, theirs: m.agent.sha256 } },
    );
}
