import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEvalArgs, run as evalRun } from './eval.ts';
import { parseJudgeArgs } from './judges.ts';
import { run as scoreRun } from './score.ts';
import { runCaptured } from './test-helpers/capture.ts';

describe('--judge on the command line', () => {
  it('vncua eval takes repeated --judge; the specs are validated', () => {
    const o = parseEvalArgs(['--tasks', 't', '--agent', 'replay', '--judge', 'heuristic', '--judge', '{"type":"url","exact":"http://x/"}']);
    expect(o?.judges).toEqual([{ type: 'heuristic' }, { type: 'url', exact: 'http://x/' }]);
    expect(parseEvalArgs(['--tasks', 't', '--agent', 'replay'])?.judges).toBeUndefined();
    expect(() => parseJudgeArgs(['heuristic', 'llm'])).toThrow(expect.objectContaining({ code: 'JUDGE_ERR_BAD_SPEC', message: expect.stringContaining('--judge #2') }));
  });

  it('a bad --judge: exit 2, one coded line naming it, nothing judged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-judge-cli-'));
    try {
      for (const [run, argv] of [
        [scoreRun, [dir, '--judge', '{"type":"url","regex":"("}']],
        [evalRun, ['--tasks', join(dir, 't.json'), '--agent', 'replay', '--judge', 'nope']],
      ] as const) {
        const r = await runCaptured(run, [...argv]);
        expect(r.code).toBe(2);
        const first = r.err.split('\n')[0]!;
        expect(first).toMatch(/^vncua (score|eval): JUDGE_ERR_BAD_SPEC: Judge --judge, field "(regex|type)": /);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
