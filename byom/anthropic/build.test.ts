/** The CLI builder (environment and arguments) and the constructor's option checks. */
import { describe, expect, it } from 'vitest';
import type { AgentContext } from '../../harness/agent/index.ts';
import { AnthropicCuaAgent, DEFAULT_ANTHROPIC_MODEL, defaultToolVersion } from './agent.ts';
import { anthropicOptions, buildAnthropicAgent } from './build.ts';

const ctx = (args: string[] = []): AgentContext => ({
  task: 'Do it.',
  outputDir: '/tmp/vncua-anthropic-build',
  vncUrl: 'ws://127.0.0.1:5999',
  cdpUrl: 'http://127.0.0.1:9999',
  url: undefined,
  maxSteps: 10,
  script: undefined,
  args,
  agentOptions: { task: 'Do it.', outputDir: '/tmp/vncua-anthropic-build', vncUrl: 'ws://127.0.0.1:5999', cdpUrl: 'http://127.0.0.1:9999' },
});

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return 'no error';
};

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
    const o = anthropicOptions(ctx(['--model', 'claude-sonnet-4-5', '--display', '1024x640', '--history', '5', '--max-tokens', '2048', '--budget-ms', '60000', '--tool-version', 'computer_20250124']), {
      ANTHROPIC_API_KEY: 'k',
      VNCUA_ANTHROPIC_MODEL: 'other',
    });
    expect(o).toMatchObject({ model: 'claude-sonnet-4-5', screenshotSize: { width: 1024, height: 640 }, historyScreens: 5, maxTokens: 2048, budgetMs: 60000, toolVersion: 'computer_20250124' });
    expect(codeOf(() => anthropicOptions(ctx(['--display', 'big']), { ANTHROPIC_API_KEY: 'k' }))).toBe('CLI_ERR_BAD_ARGS');
    expect(codeOf(() => anthropicOptions(ctx(['--tool-version', 'computer_2099']), { ANTHROPIC_API_KEY: 'k' }))).toBe('CLI_ERR_BAD_ARGS');
    expect(codeOf(() => anthropicOptions(ctx(['--history', '0']), { ANTHROPIC_API_KEY: 'k' }))).toBe('CLI_ERR_BAD_ARGS');
    expect(codeOf(() => anthropicOptions(ctx(['--nope']), { ANTHROPIC_API_KEY: 'k' }))).toBe('CLI_ERR_BAD_ARGS');
  });

  it('without a key, or with a bad option, the constructor refuses with AGENT_ERR_BAD_OPTIONS', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      expect(codeOf(() => buildAnthropicAgent(ctx(), {}))).toBe('AGENT_ERR_BAD_OPTIONS');
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
    const base = { ...ctx().agentOptions, apiKey: 'k' };
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, toolVersion: 'computer_2099' as never }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, historyScreens: 0 }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, maxTokens: 1.5 }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, screenshotSize: { width: 0, height: 10 } }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, task: '' }))).toBe('AGENT_ERR_BAD_OPTIONS');
    expect(codeOf(() => new AnthropicCuaAgent({ ...base, nonsense: 1 } as never))).toBe('AGENT_ERR_BAD_OPTIONS');
  });

  it('picks the tool version from the model: computer_20250124 for the models that take only it', () => {
    for (const m of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5', 'claude-opus-4-1-20250805', 'claude-sonnet-4-20250514', 'claude-opus-4-0', 'claude-3-7-sonnet-20250219']) {
      expect(defaultToolVersion(m), m).toBe('computer_20250124');
    }
    for (const m of ['claude-sonnet-4-6', 'claude-opus-4-5', 'claude-opus-4-6', 'claude-opus-4-7', 'my-proxy-model']) {
      expect(defaultToolVersion(m), m).toBe('computer_20251124');
    }
  });
});
