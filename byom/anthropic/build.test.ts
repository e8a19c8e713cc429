/** The CLI builder (environment and arguments) and the constructor's option checks. */
import { describe, expect, it } from 'vitest';
import { builderContext, codeOf, errorOf, pricesFile } from '../test-helpers/build.ts';
import { AnthropicCuaAgent, DEFAULT_ANTHROPIC_MODEL, defaultToolVersion } from './agent.ts';
import { anthropicOptions, buildAnthropicAgent } from './build.ts';

const ctx = (args: string[] = []) => builderContext('anthropic', args);

describe('buildAnthropicAgent', () => {
  it('reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and VNCUA_ANTHROPIC_MODEL', () => {
    const a = buildAnthropicAgent(ctx(), { ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1234', VNCUA_ANTHROPIC_MODEL: 'claude-opus-4-5' });
    expect(a).toBeInstanceOf(AnthropicCuaAgent);
    expect(a.modelName).toBe('claude-opus-4-5');
    expect(a.toolVersion).toBe('computer_20251124');
    expect(a.client.baseURL).toBe('http://127.0.0.1:1234');
    expect(a.client.apiKey).toBe('sk-ant-1');
    expect(a.task).toBe('Do it.');
    const d = buildAnthropicAgent(ctx(), { ANTHROPIC_API_KEY: 'k' });
    expect(d.modelName).toBe(DEFAULT_ANTHROPIC_MODEL);
  });

  it('arguments after -- win over the environment', () => {
    const o = anthropicOptions(
      ctx([
        '--model',
        'claude-sonnet-4-5',
        '--base-url',
        'http://127.0.0.1:2',
        '--display',
        '1024x640',
        '--history',
        '5',
        '--max-tokens',
        '2048',
        '--timeout-ms',
        '9000',
        '--budget-ms',
        '60000',
        '--tool-version',
        'computer_20250124',
      ]),
      { ANTHROPIC_API_KEY: 'k', VNCUA_ANTHROPIC_MODEL: 'other', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
    );
    expect(o).toMatchObject({
      apiKey: 'k',
      model: 'claude-sonnet-4-5',
      baseURL: 'http://127.0.0.1:2',
      screenshotSize: { width: 1024, height: 640 },
      historyScreens: 5,
      maxTokens: 2048,
      requestTimeoutMs: 9000,
      budgetMs: 60000,
      toolVersion: 'computer_20250124',
    });
    expect(buildAnthropicAgent(ctx(['--base-url', 'http://127.0.0.1:3']), { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' }).client.baseURL).toBe(
      'http://127.0.0.1:3',
    );
  });

  it('a bad argument is CLI_ERR_BAD_ARGS naming it', () => {
    for (const [args, argument] of [
      [['--display', 'big'], '--display'],
      [['--tool-version', 'computer_2099'], '--tool-version'],
      [['--history', '0'], '--history'],
      [['--max-tokens', 'lots'], '--max-tokens'],
      [['--base-url', 'localhost:8000'], '--base-url'],
      [['--nope'], '--nope'],
      [['positional'], 'positional'],
    ] as const) {
      const e = errorOf(() => anthropicOptions(ctx([...args]), { ANTHROPIC_API_KEY: 'k' }));
      expect(e?.code, args.join(' ')).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, args.join(' ')).toBe(argument);
      expect(e?.message).toMatch(/^anthropic agent: /);
    }
  });

  it("without a key the builder refuses naming ANTHROPIC_API_KEY; a bad option is the constructor's AGENT_ERR_BAD_OPTIONS", () => {
    const e = errorOf(() => buildAnthropicAgent(ctx(), {}));
    expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
    expect(e?.message).toContain('ANTHROPIC_API_KEY');
    expect(e?.details).toMatchObject({ argument: 'ANTHROPIC_API_KEY', env: ['ANTHROPIC_API_KEY'] });
    const base = { ...ctx().agentOptions, apiKey: 'k' };
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, toolVersion: 'computer_2099' as never }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, historyScreens: 0 }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, maxTokens: 1.5 }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, screenshotSize: { width: 0, height: 10 } }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, task: '' }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, nonsense: 1 } as never))).toBe('AGENT_ERR_BAD_OPTIONS');
  });

  it('picks the tool version from the model: computer_20250124 for the models that take only it', () => {
    for (const m of [
      'claude-sonnet-4-5',
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5',
      'claude-opus-4-1-20250805',
      'claude-sonnet-4-20250514',
      'claude-opus-4-0',
      'claude-3-7-sonnet-20250219',
    ]) {
      expect(defaultToolVersion(m), m).toBe('computer_20250124');
    }
    for (const m of ['claude-sonnet-4-6', 'claude-opus-4-5', 'claude-opus-4-6', 'claude-opus-4-7', 'my-proxy-model']) {
      expect(defaultToolVersion(m), m).toBe('computer_20251124');
    }
  });
});

describe('anthropic --prices', () => {
  it('--prices FILE (else VNCUA_PRICES) gives the prices option; a bad file is CLI_ERR_BAD_ARGS naming --prices', async () => {
    const f = await pricesFile({ 'my-model': { input: 1.5, output: 6 } });
    const bad = await pricesFile({ 'my-model': { input: 1.5 } });
    try {
      const env = { ANTHROPIC_API_KEY: 'k' };
      expect(anthropicOptions(ctx(['--prices', f.path]), env).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(anthropicOptions(ctx(), { ...env, VNCUA_PRICES: f.path }).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(anthropicOptions(ctx(), env).prices).toBeUndefined();
      const e = errorOf(() => anthropicOptions(ctx(['--prices', bad.path]), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details).toEqual({ argument: '--prices', value: bad.path });
      expect(e?.message).toContain('["my-model"] needs output');
    } finally {
      await f.remove();
      await bad.remove();
    }
  });
});
