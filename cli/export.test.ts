/** `vncua export`: its arguments, the exit codes and the one-line errors, over the fixture tree of eval/test-fixtures/export-runs.ts. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeExportTree } from '../eval/test-fixtures/export-runs.ts';
import { isVncuaError } from '../harness/errors.ts';
import { parseExportArgs, run as exportCli } from './export.ts';

/** run(argv) with stdout and stderr captured. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = process.stdout.write;
  const err = process.stderr.write;
  let stdout = '';
  let stderr = '';
  process.stdout.write = ((s: string) => ((stdout += s), true)) as never;
  process.stderr.write = ((s: string) => ((stderr += s), true)) as never;
  try {
    return { code: await exportCli(argv), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

let base: string;
let root: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'vncua-export-cli-'));
  root = join(base, 'runs');
  await writeExportTree(root);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('the command', () => {
  it('parses its options; --format jsonl is required', () => {
    expect(parseExportArgs([root, '--format', 'jsonl', '--agent', 'a', '--agent=b', '--group', 'g', '--resolution', '1280x800', '--successful', '--out', 'x'])).toEqual({
      root,
      successful: true,
      agents: ['a', 'b'],
      groups: ['g'],
      resolutions: ['1280x800'],
      jobs: 1,
      out: 'x',
    });
    for (const argv of [[root], [root, '--format', 'csv'], [root, '--format', 'jsonl', '--resolution', 'big'], [root, '--format', 'jsonl', '--jobs', '0']]) {
      let err: unknown;
      try {
        parseExportArgs(argv);
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'CLI_ERR_BAD_ARGS'), argv.join(' ')).toBe(true);
    }
  });

  it('exit 1 with one EXPORT_ERR_RUN_SKIPPED line per skipped run; exit 2 with one coded line on bad input; exit 0 when all went', async () => {
    const r = await cli([root, '--format', 'jsonl', '--out', join(base, 'cli-1')]);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^vncua export: EXPORT_ERR_RUN_SKIPPED: replay\/64_48\/bad-1: TRACE_ERR_INVALID: /),
      expect.stringMatching(/^vncua export: EXPORT_ERR_RUN_SKIPPED: replay\/64_48\/infra-1: DESKTOP_ERR_START_FAILED: /),
    ]);
    expect(r.stdout).toMatch(/wrote .*steps\.jsonl: 20 steps of 5 runs, 32 images in .* steps\/s\); 2 skipped/);
    const again = await cli([root, '--format', 'jsonl', '--out', join(base, 'cli-1')]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^vncua export: EXPORT_ERR_OUT_EXISTS: .*\n$/);
    const ok = await cli([root, '--format', 'jsonl', '--out', join(base, 'cli-2'), '--agent', 'chat']);
    expect([ok.code, ok.stderr]).toEqual([0, '']);
  });
});
