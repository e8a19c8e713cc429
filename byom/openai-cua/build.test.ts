/**
 * The CLI builder (environment + arguments after `--`) and the constructor's option checks. No
 * desktop is needed: the agent connects nothing until run().
 */
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { builderContext, codeOf, errorOf, pricesFile } from '../test-helpers/build.ts';
import { OpenAICuaAgent, type OpenAICuaOptions } from './agent.ts';
import build, { buildOpenAICuaAgent, openAICuaOptions } from './build.ts';

const ctx = (args: string[] = []) => builderContext('openai', args);

describe('buildOpenAICuaAgent', () => {
  it('reads OPENAI_API_KEY, OPENAI_BASE_URL and VNCUA_OPENAI_MODEL', () => {
    const a = buildOpenAICuaAgent(ctx(), { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', VNCUA_OPENAI_MODEL: 'gpt-5.4' });
    expect(a).toBeInstanceOf(OpenAICuaAgent);
    expect(a.client.apiKey).toBe('sk-env');
    expect(a.client.baseURL).toBe('http://127.0.0.1:1/v1');
    expect(a.modelName).toBe('gpt-5.4');
    expect(a.toolForm).toBe('computer');
    expect(a.task).toBe('Do it.');
    expect(a.options.vncUrl).toBe('ws://127.0.0.1:5901');
  });

  it('defaults: computer-use-preview with the preview tool; arguments after -- win over the environment', () => {
    const d = buildOpenAICuaAgent(ctx(), { OPENAI_API_KEY: 'k' });
    expect([d.modelName, d.toolForm]).toEqual(['computer-use-preview', 'preview']);
    const o = openAICuaOptions(
      ctx([
        '--model',
        'my-cua',
        '--base-url',
        'http://127.0.0.1:2/v1',
        '--tool-form',
        'preview',
        '--display',
        '1024x640',
        '--ack-safety',
        'irrelevant_domain, sensitive_domain',
        '--timeout-ms',
        '5000',
        '--budget-ms',
        '60000',
      ]),
      { OPENAI_API_KEY: 'k', VNCUA_OPENAI_MODEL: 'gpt-5.4', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' },
    );
    expect(o).toMatchObject({
      apiKey: 'k',
      model: 'my-cua',
      baseURL: 'http://127.0.0.1:2/v1',
      toolForm: 'preview',
      screenshotSize: { width: 1024, height: 640 },
      acknowledgeSafetyChecks: ['irrelevant_domain', 'sensitive_domain'],
      requestTimeoutMs: 5000,
      budgetMs: 60000,
    });
    const a = buildOpenAICuaAgent(ctx(['--base-url=http://127.0.0.1:3/v1']), { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(a.client.baseURL).toBe('http://127.0.0.1:3/v1');
  });

  it('a bad argument is CLI_ERR_BAD_ARGS naming it', () => {
    for (const [args, argument] of [
      [['--tool-form', 'beta'], '--tool-form'],
      [['--display', '1024'], '--display'],
      [['--base-url', 'ftp://x'], '--base-url'],
      [['--budget-ms', '-1'], '--budget-ms'],
      [['--timeout-ms', '1.5'], '--timeout-ms'],
      [['--model', ''], '--model'],
      [['--frobnicate'], '--frobnicate'],
      [['--model'], '--model'],
    ] as const) {
      const e = errorOf(() => openAICuaOptions(ctx([...args]), { OPENAI_API_KEY: 'k' }));
      expect(e?.code, args.join(' ')).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, args.join(' ')).toBe(argument);
      expect(e?.message).toMatch(/^openai-cua agent: /);
    }
    // A bad environment value is named too.
    expect(errorOf(() => openAICuaOptions(ctx(), { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'not a url' }))?.details?.argument).toBe('OPENAI_BASE_URL');
  });

  it('a missing key is CLI_ERR_BAD_ARGS naming OPENAI_API_KEY (there is no flag for it)', () => {
    for (const env of [{}, { OPENAI_API_KEY: '' }]) {
      const e = errorOf(() => buildOpenAICuaAgent(ctx(['--model', 'x']), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.message).toContain('OPENAI_API_KEY');
      expect(e?.details).toMatchObject({ argument: 'OPENAI_API_KEY', field: 'API key', env: ['OPENAI_API_KEY'] });
    }
    expect(codeOf(() => openAICuaOptions(ctx(['--api-key', 'k']), {}))).toBe('CLI_ERR_BAD_ARGS');
  });

  it('the default export is the builder', () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-default-export';
    try {
      expect(build(ctx()).client.apiKey).toBe('sk-default-export');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe('OpenAICuaAgent options', () => {
  const base: OpenAICuaOptions = { outputDir: '/tmp/x', vncUrl: 'ws://127.0.0.1:5901', task: 'Do it.', apiKey: 'k' };
  const cases: Array<[string, Partial<OpenAICuaOptions> & Record<string, unknown>]> = [
    ['task', { task: undefined }],
    ['task', { task: '  ' }],
    ['screenshotSize', { screenshotSize: { width: 0, height: 10 } }],
    ['screenshotSize', { screenshotSize: { width: 1024.5, height: 640 } }],
    ['toolForm', { toolForm: 'beta' as 'preview' }],
    ['environment', { environment: 'amiga' as 'browser' }],
    ['truncation', { truncation: 'sometimes' as 'auto' }],
    ['acknowledgeSafetyChecks', { acknowledgeSafetyChecks: 'all' as unknown as string[] }],
    ['requestTimeoutMs', { requestTimeoutMs: 0 }],
    ['maxRetries', { maxRetries: -1 }],
    ['displaySize', { displaySize: { width: 10, height: 10 } }],
    ['budgetMs', { budgetMs: -5 }],
    ['nonsense', { nonsense: true }],
  ];
  it.each(cases)('a bad %s is rejected at construction', (field, patch) => {
    let err: unknown;
    try {
      new OpenAICuaAgent({ ...base, ...patch } as OpenAICuaOptions);
    } catch (e) {
      err = e;
    }
    // Every bad option, the ModelAgent's included, is AGENT_ERR_BAD_OPTIONS naming the field.
    expect(isVncuaError(err, 'AGENT_ERR_BAD_OPTIONS')).toBe(true);
    expect((err as { details: { field: string } }).details.field).toBe(field);
  });

  it('toolForm follows the model name unless given', () => {
    expect(new OpenAICuaAgent({ ...base, model: 'computer-use-preview-2025-03-11' }).toolForm).toBe('preview');
    expect(new OpenAICuaAgent({ ...base, model: 'gpt-5.4' }).toolForm).toBe('computer');
    expect(new OpenAICuaAgent({ ...base, model: 'gpt-5.4', toolForm: 'preview' }).toolForm).toBe('preview');
  });
});

describe('openai-cua --prices', () => {
  it('--prices FILE (else VNCUA_PRICES) gives the prices option; a bad file is CLI_ERR_BAD_ARGS naming --prices', async () => {
    const f = await pricesFile({ 'my-model': { input: 1.5, output: 6 } });
    const bad = await pricesFile({ 'my-model': { input: 1.5 } });
    try {
      const env = { OPENAI_API_KEY: 'k' };
      expect(openAICuaOptions(ctx(['--prices', f.path]), env).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(openAICuaOptions(ctx(), { ...env, VNCUA_PRICES: f.path }).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(openAICuaOptions(ctx(), env).prices).toBeUndefined();
      const e = errorOf(() => openAICuaOptions(ctx(['--prices', bad.path]), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details).toEqual({ argument: '--prices', value: bad.path });
      expect(e?.message).toContain('["my-model"] needs output');
    } finally {
      await f.remove();
      await bad.remove();
    }
  });
});
