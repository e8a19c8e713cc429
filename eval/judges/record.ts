/**
 * What a judge decided about one run and why: `judges.json` in the run directory (written atomically),
 * one record per judge, in the order the judges ran. Shapes are snake_case like every file vncua writes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';
import { writeFileAtomic } from '../../harness/trace/atomic.ts';

/** The file name in a run directory. */
export const JUDGES_FILE = 'judges.json';

/** A judge's verdict: unknown when it could not tell (never a guess). */
export const VERDICTS = ['pass', 'fail', 'unknown'] as const;
/** One of VERDICTS. */
export type Verdict = (typeof VERDICTS)[number];

/** Schema of one judge's record. */
export const judgeRecordSchema = z.object({
  /** The judge's name (spec.ts judgeNames). */
  judge: z.string(),
  type: z.string(),
  verdict: z.enum(VERDICTS),
  /** One line: why. */
  reason: z.string(),
  /** What it looked at: the matched URL, the DOM excerpt, the screenshot path, the model's raw answer, the cheap verdicts of a hybrid... */
  evidence: z.record(z.string(), z.unknown()),
  /** Why the verdict is unknown when a judge failed (JUDGE_ERR_*). */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** The judge did not run on this run (an LLM judge's `when` policy); its verdict is unknown and is not counted in its rate. */
  skipped: z.boolean(),
  /** USD of the judge's model calls at list prices; null when it made none or the model has no known price. */
  cost_usd: z.number().nullable(),
  /** How long the judge took, ms. */
  duration_ms: z.number(),
});

/** One judge's record. */
export type JudgeRecord = z.infer<typeof judgeRecordSchema>;

/** Schema of judges.json. */
export const judgesFileSchema = z.object({
  version: z.literal(1),
  /** When the judges ran (ISO 8601). */
  judged_at: z.string(),
  /** `run`: at the end of the run (the page judges saw the live page); `rejudge`: vncua score --judge afterwards. */
  source: z.enum(['run', 'rejudge']),
  verdicts: z.array(judgeRecordSchema),
});

/** judges.json. */
export type JudgesFile = z.infer<typeof judgesFileSchema>;

/** Write judges.json into `dir` atomically (JUDGE_ERR_WRITE). */
export async function writeJudges(dir: string, file: JudgesFile): Promise<string> {
  const path = join(dir, JUDGES_FILE);
  try {
    await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  } catch (cause) {
    throw new VncuaError('JUDGE_ERR_WRITE', `Could not write ${path}: ${(cause as Error).message}.`, { cause, details: { path } });
  }
  return path;
}

/** judges.json of `dir`: null when there is none; `{ invalid }` when it cannot be read or fails its schema. */
export async function readJudges(dir: string): Promise<JudgesFile | null | { invalid: string }> {
  let text: string;
  try {
    text = await readFile(join(dir, JUDGES_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { invalid: `unreadable: ${(e as Error).message}` };
  }
  try {
    const r = judgesFileSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : { invalid: `fails its schema at ${r.error.issues[0]!.path.join('.') || 'the top'}: ${r.error.issues[0]!.message}` };
  } catch (e) {
    return { invalid: `not JSON: ${(e as Error).message}` };
  }
}

/** Runs whose judges disagree: some said pass, some fail (unknown and skipped verdicts take no side). */
export function disagrees(verdicts: ReadonlyArray<Pick<JudgeRecord, 'verdict' | 'skipped'>>): boolean {
  const definite = verdicts.filter((v) => !v.skipped && v.verdict !== 'unknown').map((v) => v.verdict);
  return definite.includes('pass') && definite.includes('fail');
}
