/** The CLI builder of HttpPlannerAgent (environment + arguments after `--`). No desktop: nothing connects until run(). */
import { describe, expect, it } from 'vitest';
import { builderContext, errorOf, pricesFile } from '../test-helpers/build.ts';
import build, { buildHttpPlannerAgent, ClientCredentialsSource, HttpPlannerAgent, httpPlannerOptions, StaticTokenSource } from './index.ts';

const ctx = (args: string[] = []) => builderContext('http', args);

const CREDS = { VNCUA_PLANNER_AUTH_URL: 'http://127.0.0.1:9/token', VNCUA_PLANNER_CLIENT_ID: 'client', VNCUA_PLANNER_CLIENT_SECRET: 'secret' };

describe('buildHttpPlannerAgent', () => {
  it('reads the environment', () => {
    const o = httpPlannerOptions(ctx(), {
      VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan',
      VNCUA_PLANNER_TOKEN: 'tok',
      VNCUA_PLANNER_SCOPE: 'plan',
      VNCUA_PLANNER_TOKEN_CACHE: '/tmp/tokens.json',
      VNCUA_PLANNER_SCREENSHOT_SIZE: '1024x640',
      VNCUA_PLANNER_TIMEOUT_MS: '30000',
      ...CREDS,
    });
    expect(o).toMatchObject({
      task: 'Do it.',
      endpoint: 'http://127.0.0.1:1/plan',
      token: 'tok',
      authUrl: 'http://127.0.0.1:9/token',
      clientId: 'client',
      clientSecret: 'secret',
      scope: 'plan',
      tokenCacheFile: '/tmp/tokens.json',
      screenshotSize: { width: 1024, height: 640 },
      requestTimeoutMs: 30000,
    });
    const a = buildHttpPlannerAgent(ctx(), { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan', VNCUA_PLANNER_TOKEN: 'tok' });
    expect(a).toBeInstanceOf(HttpPlannerAgent);
    expect(a.client.endpoint.href).toBe('http://127.0.0.1:1/plan');
    expect(a.auth).toBeInstanceOf(StaticTokenSource);
    expect(buildHttpPlannerAgent(ctx(), { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan', ...CREDS, VNCUA_PLANNER_TOKEN_CACHE: '/tmp/x.json' }).auth).toBeInstanceOf(
      ClientCredentialsSource,
    );
    expect(buildHttpPlannerAgent(ctx(), { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan' }).auth).toBeNull();
  });

  it('takes flags after --, which win over the environment', () => {
    const o = httpPlannerOptions(
      ctx([
        '--endpoint',
        'https://planner.example/v2/plan',
        '--auth-url',
        'https://id.example/token',
        '--client-id',
        'flag-client',
        '--scope',
        'flag-scope',
        '--token-cache',
        '/tmp/flag-tokens.json',
        '--screenshot-size',
        '800x500',
        '--timeout-ms',
        '5000',
        '--budget-ms',
        '60000',
      ]),
      { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan', VNCUA_PLANNER_SCOPE: 'env-scope', VNCUA_PLANNER_TIMEOUT_MS: '30000', VNCUA_PLANNER_SCREENSHOT_SIZE: '1024x640', ...CREDS },
    );
    expect(o).toMatchObject({
      endpoint: 'https://planner.example/v2/plan',
      authUrl: 'https://id.example/token',
      clientId: 'flag-client',
      clientSecret: 'secret',
      scope: 'flag-scope',
      tokenCacheFile: '/tmp/flag-tokens.json',
      screenshotSize: { width: 800, height: 500 },
      requestTimeoutMs: 5000,
      budgetMs: 60000,
    });
    expect(buildHttpPlannerAgent(ctx(['--endpoint', 'http://127.0.0.1:2/p']), {}).client.endpoint.href).toBe('http://127.0.0.1:2/p');
  });

  it('a bad flag is CLI_ERR_BAD_ARGS naming it; a bad environment value names the variable', () => {
    for (const [args, argument] of [
      [['--endpoint', 'planner.example/plan'], '--endpoint'],
      [['--screenshot-size', '800*500'], '--screenshot-size'],
      [['--timeout-ms', '0'], '--timeout-ms'],
      [['--budget-ms', 'soon'], '--budget-ms'],
      [['--token', 'secret'], '--token'],
      [['--client-secret', 'secret'], '--client-secret'],
      [['--auth-url', 'file:///etc/passwd'], '--auth-url'],
    ] as const) {
      const e = errorOf(() => httpPlannerOptions(ctx([...args]), { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan' }));
      expect(e?.code, args.join(' ')).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, args.join(' ')).toBe(argument);
      expect(e?.message).toMatch(/^http agent: /);
    }
    for (const [name, value] of [
      ['VNCUA_PLANNER_SCREENSHOT_SIZE', 'big'],
      ['VNCUA_PLANNER_TIMEOUT_MS', '30s'],
      ['VNCUA_PLANNER_URL', 'ws://127.0.0.1:1/plan'],
    ] as const) {
      const e = errorOf(() => httpPlannerOptions(ctx(), { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan', [name]: value }));
      expect(e?.code, name).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, name).toBe(name);
    }
  });

  it('no endpoint is CLI_ERR_BAD_ARGS naming VNCUA_PLANNER_URL and --endpoint; partial client credentials name what is missing', () => {
    const e = errorOf(() => buildHttpPlannerAgent(ctx(), { VNCUA_PLANNER_TOKEN: 'tok' }));
    expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
    expect(e?.message).toContain('VNCUA_PLANNER_URL');
    expect(e?.message).toContain('--endpoint');
    expect(e?.details).toMatchObject({ argument: '--endpoint', field: 'endpoint', env: ['VNCUA_PLANNER_URL'], flag: '--endpoint' });
    const url = { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan' };
    expect(errorOf(() => httpPlannerOptions(ctx(['--client-id', 'c']), { ...url, VNCUA_PLANNER_CLIENT_SECRET: 's' }))?.details).toMatchObject({
      argument: '--auth-url',
      env: ['VNCUA_PLANNER_AUTH_URL'],
    });
    expect(errorOf(() => httpPlannerOptions(ctx(['--auth-url', 'http://127.0.0.1:9/t']), { ...url, VNCUA_PLANNER_CLIENT_SECRET: 's' }))?.details).toMatchObject({
      argument: '--client-id',
    });
    const secret = errorOf(() => httpPlannerOptions(ctx(['--auth-url', 'http://127.0.0.1:9/t', '--client-id', 'c']), url));
    expect(secret?.details).toMatchObject({ argument: 'VNCUA_PLANNER_CLIENT_SECRET', env: ['VNCUA_PLANNER_CLIENT_SECRET'] });
    expect(secret?.details?.flag).toBeUndefined();
  });

  it('the default export is the builder (process.env)', () => {
    const saved = process.env.VNCUA_PLANNER_URL;
    process.env.VNCUA_PLANNER_URL = 'http://127.0.0.1:3/plan';
    try {
      expect(build(ctx()).client.endpoint.href).toBe('http://127.0.0.1:3/plan');
    } finally {
      if (saved === undefined) delete process.env.VNCUA_PLANNER_URL;
      else process.env.VNCUA_PLANNER_URL = saved;
    }
  });
});

describe('http --prices', () => {
  it('--prices FILE (else VNCUA_PRICES) gives the prices option; a bad file is CLI_ERR_BAD_ARGS naming --prices', async () => {
    const f = await pricesFile({ 'my-model': { input: 1.5, output: 6 } });
    const bad = await pricesFile({ 'my-model': { input: 1.5 } });
    try {
      const env = { VNCUA_PLANNER_URL: 'http://127.0.0.1:1/plan' };
      expect(httpPlannerOptions(ctx(['--prices', f.path]), env).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(httpPlannerOptions(ctx(), { ...env, VNCUA_PRICES: f.path }).prices).toEqual({ 'my-model': { input: 1.5, output: 6 } });
      expect(httpPlannerOptions(ctx(), env).prices).toBeUndefined();
      const e = errorOf(() => httpPlannerOptions(ctx(['--prices', bad.path]), env));
      expect(e?.code).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details).toEqual({ argument: '--prices', value: bad.path });
      expect(e?.message).toContain('["my-model"] needs output');
      // The planner is not told the model: --model (or VNCUA_PLANNER_MODEL) names it for the trace and the price.
      expect(httpPlannerOptions(ctx(['--model', 'my-model']), env).model).toBe('my-model');
      expect(httpPlannerOptions(ctx(), { ...env, VNCUA_PLANNER_MODEL: 'm2' }).model).toBe('m2');
    } finally {
      await f.remove();
      await bad.remove();
    }
  });
});
