/** The CLI builder of ChatAgent (environment + arguments after `--`). No desktop: nothing connects until run(). */
import { describe, expect, it } from 'vitest';
import { builderContext, errorOf, pricesFile } from '../test-helpers/build.ts';
import build, { buildChatAgent, ChatAgent, chatOptions } from './index.ts';

const ctx = (args: string[] = []) => builderContext('chat', args);

describe('buildChatAgent', () => {
  it('reads the environment', () => {
    const o = chatOptions(ctx(), {
      VNCUA_CHAT_MODEL: 'env-vlm',
      VNCUA_CHAT_BASE_URL: 'http://127.0.0.1:1/v1',
      VNCUA_CHAT_API_KEY: 'sk-chat',
      OPENAI_API_KEY: 'sk-openai',
      VNCUA_CHAT_COORDINATES: 'resized',
      VNCUA_CHAT_IMAGE_SIZE: '1024x640',
      VNCUA_CHAT_HISTORY: '2',
    });
    expect(o).toMatchObject({
      task: 'Do it.',
      model: 'env-vlm',
      baseURL: 'http://127.0.0.1:1/v1',
      apiKey: 'sk-chat',
      coordinates: 'resized',
      screenshotSize: { width: 1024, height: 640 },
      historyScreens: 2,
    });
    // OPENAI_API_KEY is the fallback key; without any, the agent sends "EMPTY".
    expect(chatOptions(ctx(), { VNCUA_CHAT_MODEL: 'm', OPENAI_API_KEY: 'sk-openai' }).apiKey).toBe('sk-openai');
    expect(chatOptions(ctx(), { VNCUA_CHAT_MODEL: 'm' }).apiKey).toBeUndefined();
    const a = buildChatAgent(ctx(), { VNCUA_CHAT_MODEL: 'm', VNCUA_CHAT_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(a).toBeInstanceOf(ChatAgent);
    expect(a.baseURL).toBe('http://127.0.0.1:1/v1');
    expect(a.chat.coordinates).toBe('absolute');
  });

  it('takes flags after --, which win over the environment', () => {
    const o = chatOptions(
      ctx([
        '--model',
        'flag-vlm',
        '--base-url',
        'http://127.0.0.1:2/v1',
        '--coordinates',
        'normalized1000',
        '--image-size',
        '800x500',
        '--history',
        '4',
        '--max-tokens',
        '300',
        '--timeout-ms',
        '7000',
        '--budget-ms',
        '90000',
      ]),
      { VNCUA_CHAT_MODEL: 'env-vlm', VNCUA_CHAT_BASE_URL: 'http://127.0.0.1:1/v1', VNCUA_CHAT_COORDINATES: 'resized', VNCUA_CHAT_IMAGE_SIZE: '1024x640', VNCUA_CHAT_HISTORY: '2' },
    );
    expect(o).toMatchObject({
      model: 'flag-vlm',
      baseURL: 'http://127.0.0.1:2/v1',
      coordinates: 'normalized1000',
      screenshotSize: { width: 800, height: 500 },
      historyScreens: 4,
      maxTokens: 300,
      requestTimeoutMs: 7000,
      budgetMs: 90000,
    });
    const a = buildChatAgent(ctx(['--model', 'flag-vlm', '--base-url', 'http://127.0.0.1:2/v1']), {});
    expect([a.model.model, a.baseURL]).toEqual(['flag-vlm', 'http://127.0.0.1:2/v1']);
  });

  it('a bad flag is CLI_ERR_BAD_ARGS naming it; a bad environment value names the variable', () => {
    for (const [args, argument] of [
      [['--coordinates', 'pixels'], '--coordinates'],
      [['--image-size', '1024'], '--image-size'],
      [['--history', '0'], '--history'],
      [['--history', 'three'], '--history'],
      [['--base-url', 'nope'], '--base-url'],
      [['--timeout-ms', '-5'], '--timeout-ms'],
      [['--api-key', 'sk'], '--api-key'],
      [['--image-size', '1024x640'], '--image-size'], // absolute coordinates take no image size
      [['--coordinates', 'resized'], '--coordinates'], // resized needs one
    ] as const) {
      const e = errorOf(() => chatOptions(ctx([...args]), { VNCUA_CHAT_MODEL: 'm' }));
      expect(e?.code, args.join(' ')).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, args.join(' ')).toBe(argument);
      expect(e?.message).toMatch(/^chat agent: /);
    }
    for (const [name, value] of [
      ['VNCUA_CHAT_COORDINATES', 'pixels'],
      ['VNCUA_CHAT_IMAGE_SIZE', 'big'],
      ['VNCUA_CHAT_HISTORY', '0'],
      ['VNCUA_CHAT_BASE_URL', '127.0.0.1:8000'],
    ] as const) {
      const e = errorOf(() => chatOptions(ctx(), { VNCUA_CHAT_MODEL: 'm', VNCUA_CHAT_COORDINATES: 'normalized1000', [name]: value }));
      expect(e?.code, name).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, name).toBe(name);
    }
  });

  it('no model is CLI_ERR_BAD_ARGS naming VNCUA_CHAT_MODEL and --model', () => {
    for (const env of [{}, { VNCUA_CHAT_MODEL: '' }, { VNCUA_CHAT_MODEL: '  ' }]) {
      const e = errorOf(() => buildChatAgent(ctx(), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.message).toContain('VNCUA_CHAT_MODEL');
      expect(e?.message).toContain('--model');
      expect(e?.details).toMatchObject({ argument: '--model', field: 'model', env: ['VNCUA_CHAT_MODEL'], flag: '--model' });
    }
  });

  it('the default export is the builder (process.env)', () => {
    const saved = process.env.VNCUA_CHAT_MODEL;
    process.env.VNCUA_CHAT_MODEL = 'default-export-vlm';
    try {
      expect(build(ctx()).model.model).toBe('default-export-vlm');
    } finally {
      if (saved === undefined) delete process.env.VNCUA_CHAT_MODEL;
      else process.env.VNCUA_CHAT_MODEL = saved;
    }
  });
});

describe('chat --prices', () => {
  it('--prices FILE (else VNCUA_PRICES) gives the prices option; a bad file is CLI_ERR_BAD_ARGS naming --prices', async () => {
    const f = await pricesFile({ 'my-model': { input: 1.5, output: 6 } });
    const bad = await pricesFile({ 'my-model': { input: 1.5 } });
    try {
      const env = { VNCUA_CHAT_MODEL: 'my-model' };
      expect(chatOptions(ctx(['--prices', f.path]), env).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(chatOptions(ctx(), { ...env, VNCUA_PRICES: f.path }).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(chatOptions(ctx(), env).prices).toBeUndefined();
      const e = errorOf(() => chatOptions(ctx(['--prices', bad.path]), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details).toEqual({ argument: '--prices', value: bad.path });
      expect(e?.message).toContain('["my-model"] needs output');
    } finally {
      await f.remove();
      await bad.remove();
    }
  });
});
