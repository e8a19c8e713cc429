/** The CLI builder of the explorer: its flags after `--`, and the model it adds with --model. Nothing connects. */
import { describe, expect, it } from 'vitest';
import { ExplorerAgent } from '../agents/explorer/agent.ts';
import { builderContext, codeOf, errorOf } from '../byom/test-helpers/build.ts';
import { buildExplorerFromArgs } from './explorer.ts';
import { AGENTS } from './agents.ts';

const ctx = (args: string[] = []) => ({ ...builderContext('explorer', args), url: 'http://127.0.0.1:9/app/', maxSteps: 50 });

describe('vncua run --agent explorer', () => {
  it('is a built-in agent; its flags set the options; the start page sets the seed and the allowed host', () => {
    expect(Object.keys(AGENTS)).toContain('explorer');
    const a = buildExplorerFromArgs(ctx(['--seed', '7', '--budget-ms', '5000', '--stuck-after', '3', '--max-model-cost', '0.5']), {});
    expect(a).toBeInstanceOf(ExplorerAgent);
    expect(a.seed).toBe(7);
    expect(a.explorer).toMatchObject({ url: 'http://127.0.0.1:9/app/', budgetMs: 5000, stuckAfter: 3, maxModelCostUsd: 0.5, maxSteps: 49 });
    expect(a.options.allowedDomains).toEqual([['http://127.0.0.1:9']]);
    expect(buildExplorerFromArgs(ctx(), {}).seed).toBe(buildExplorerFromArgs(ctx(), {}).seed);
  });

  it('refuses a bad flag value, and model flags without --model (CLI_ERR_BAD_ARGS)', () => {
    expect(codeOf(() => buildExplorerFromArgs(ctx(['--steps', 'many']), {}))).toBe('CLI_ERR_BAD_ARGS');
    expect(codeOf(() => buildExplorerFromArgs(ctx(['--max-model-cost', '-1']), {}))).toBe('CLI_ERR_BAD_ARGS');
    expect(errorOf(() => buildExplorerFromArgs(ctx(['--base-url', 'http://127.0.0.1:1/v1']), {}))?.message).toMatch(/--model/);
    expect(codeOf(() => buildExplorerFromArgs(ctx(['--nope', '1']), {}))).toBe('CLI_ERR_BAD_ARGS');
    expect(codeOf(() => buildExplorerFromArgs(ctx(['--model', 'm', '--base-url', 'ftp://x']), {}))).toBe('CLI_ERR_BAD_ARGS');
  });
});
