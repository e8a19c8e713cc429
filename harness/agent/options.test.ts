/**
 * Agent options: validation (AGENT_ERR_BAD_OPTIONS naming the field), endpoint resolution, and
 * the lazy connection (nothing connects in the constructor or in run() before an action needs it).
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { Agent } from './agent.ts';
import { CostBudget } from './cost-budget.ts';
import { resolveAgentOptions } from './options.ts';
import { LocalRateGate } from './rate-gate.ts';
import { tempOutputDir } from '../test-helpers/files.ts';

function badField(input: unknown): unknown {
  try {
    resolveAgentOptions(input);
  } catch (e) {
    expect(e).toBeInstanceOf(VncuaError);
    expect((e as VncuaError).code).toBe('AGENT_ERR_BAD_OPTIONS');
    return (e as VncuaError).details?.field;
  }
  throw new Error('expected AGENT_ERR_BAD_OPTIONS');
}

const base = { outputDir: '/tmp/out', vncUrl: 'ws://127.0.0.1:5901' };

describe('resolveAgentOptions', () => {
  it('resolves vncUrl and cdpUrl as given, with the defaults', () => {
    const { secrets, ...resolved } = resolveAgentOptions({ ...base, cdpUrl: 'http://127.0.0.1:9222', task: 'buy milk' });
    expect(secrets).toMatchObject({ bindings: [], names: [] });
    expect(resolved).toEqual({
      outputDir: '/tmp/out',
      vncUrl: 'ws://127.0.0.1:5901',
      cdpUrl: 'http://127.0.0.1:9222',
      password: undefined,
      record: true,
      recorder: null,
      successCheck: 'default',
      successGraceMs: 1000,
      task: 'buy milk',
      stepTimeoutMs: Infinity,
      overwrite: false,
      live: true,
      allowedDomains: [],
      blockedDomains: [],
      domainPolicy: null,
      rateGate: null,
      maxCostUsd: null,
      costBudget: null,
      needsHuman: 'end',
    });
    expect(resolveAgentOptions({ ...base, live: false }).live).toBe(false);
  });

  it('resolves auth and secrets (values kept in `secrets`); bad ones are codes naming the binding; auth needs CDP', () => {
    process.env.VNCUA_OPTIONS_TEST_TOKEN = 'options-test-token-1';
    const cdp = { ...base, cdpUrl: 'http://127.0.0.1:9222' };
    const o = resolveAgentOptions({ ...cdp, auth: [{ domain: 'x.test', type: 'bearer', tokenEnv: 'VNCUA_OPTIONS_TEST_TOKEN' }], secrets: { pw: 'literal-from-ts-api' } });
    expect(o.secrets.names).toEqual(['VNCUA_OPTIONS_TEST_TOKEN', 'pw']);
    expect(o.secrets.value('pw')).toBe('literal-from-ts-api');
    expect(() => resolveAgentOptions({ ...base, auth: [{ domain: 'x.test', type: 'bearer', tokenEnv: 'VNCUA_OPTIONS_TEST_TOKEN' }] })).toThrow(
      expect.objectContaining({ code: 'AUTH_ERR_NO_CDP' }),
    );
    expect(() => resolveAgentOptions({ ...cdp, auth: [{ domain: 'x.test', type: 'bearer', tokenEnv: 'VNCUA_UNSET_VAR_X' }] })).toThrow(
      expect.objectContaining({ code: 'AUTH_ERR_SECRET_MISSING', details: { binding: 'auth[0] bearer x.test', field: 'tokenEnv', env: 'VNCUA_UNSET_VAR_X' } }),
    );
  });

  it('takes maxCostUsd (a positive finite number), a CostBudget and needsHuman end|ask; anything else is refused naming the field', () => {
    const budget = new CostBudget(2);
    const o = resolveAgentOptions({ ...base, maxCostUsd: 0.5, costBudget: budget, needsHuman: 'ask' });
    expect([o.maxCostUsd, o.costBudget, o.needsHuman]).toEqual([0.5, budget, 'ask']);
    expect(badField({ ...base, maxCostUsd: 0 })).toBe('maxCostUsd');
    expect(badField({ ...base, maxCostUsd: Infinity })).toBe('maxCostUsd');
    expect(badField({ ...base, maxCostUsd: '1' })).toBe('maxCostUsd');
    expect(badField({ ...base, costBudget: { limitUsd: 1 } })).toBe('costBudget');
    expect(badField({ ...base, needsHuman: 'wait' })).toBe('needsHuman');
    expect(() => new CostBudget(0)).toThrow(expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS' }));
  });

  it('CostBudget sums what is added (ignoring what is not a positive number) and is reached at its limit', () => {
    const b = new CostBudget(0.3);
    b.add(0.1);
    b.add(0.1);
    b.add(-5);
    b.add(Number.NaN);
    expect(b.spentUsd).toBe(0.2);
    expect(b.reached).toBe(false);
    b.add(0.1);
    expect(b.spentUsd).toBe(0.3);
    expect(b.reached).toBe(true);
  });

  it('compiles allowedDomains / blockedDomains (a list, or layers); a bad pattern is GUARD_ERR_BAD_PATTERN; a guard needs CDP', () => {
    const cdp = { ...base, cdpUrl: 'http://127.0.0.1:9222' };
    const o = resolveAgentOptions({ ...cdp, allowedDomains: ['*.example.com'], blockedDomains: ['ads.example.com'] });
    expect(o.allowedDomains).toEqual([['*.example.com']]);
    expect(o.blockedDomains).toEqual(['ads.example.com']);
    expect(o.domainPolicy!.allowed[0]![0]).toMatchObject({ host: 'example.com', wildcard: true });
    expect(resolveAgentOptions({ ...cdp, allowedDomains: [['a.com', 'b.com'], ['a.com']] }).allowedDomains).toEqual([['a.com', 'b.com'], ['a.com']]);
    expect(() => resolveAgentOptions({ ...cdp, allowedDomains: ['a.*.com'] })).toThrow(
      expect.objectContaining({ code: 'GUARD_ERR_BAD_PATTERN', details: { list: 'allowedDomains', pattern: 'a.*.com' } }),
    );
    expect(() => resolveAgentOptions({ ...base, blockedDomains: ['evil.com'] })).toThrow(expect.objectContaining({ code: 'GUARD_ERR_NO_CDP' }));
    expect(badField({ ...cdp, blockedDomains: 'evil.com' })).toBe('blockedDomains');
  });

  it('takes a rateGate (an object with acquire, backoff and onBackoff), or null; anything else is refused naming the field', () => {
    const gate = new LocalRateGate('60/min');
    expect(resolveAgentOptions({ ...base, rateGate: gate }).rateGate).toBe(gate);
    expect(resolveAgentOptions({ ...base, rateGate: null }).rateGate).toBeNull();
    expect(badField({ ...base, rateGate: { acquire: () => {} } })).toBe('rateGate');
    expect(() => resolveAgentOptions({ ...base, rateGate: 'redis://x' })).toThrow(/must be a rate gate/);
  });

  it('builds the URLs from scheme/host/port parts (default ws and 127.0.0.1; IPv6 in brackets)', () => {
    expect(resolveAgentOptions({ outputDir: 'o', vncPort: 5901, cdpPort: 9222 })).toMatchObject({ vncUrl: 'ws://127.0.0.1:5901', cdpUrl: 'http://127.0.0.1:9222' });
    expect(resolveAgentOptions({ outputDir: 'o', vncScheme: 'tcp', vncHost: '::1', vncPort: 5901 })).toMatchObject({ vncUrl: 'tcp://[::1]:5901', cdpUrl: null });
    expect(resolveAgentOptions({ outputDir: 'o', vncScheme: 'wss', vncHost: 'desk.example', vncPort: 443, cdpPort: 9222 })).toMatchObject({
      vncUrl: 'wss://desk.example:443',
      cdpUrl: 'http://desk.example:9222',
    });
  });

  it('takes successGraceMs from 0 (re-checks off) to 60000', () => {
    expect(resolveAgentOptions({ ...base, successGraceMs: 0 }).successGraceMs).toBe(0);
    expect(resolveAgentOptions({ ...base, successGraceMs: 60_000 }).successGraceMs).toBe(60_000);
  });

  it("takes the recorder option, else the default given (the class's defaultRecorder); null records nothing; a non-function is refused", async () => {
    const mine = async () => ({ url: 'tcp://127.0.0.1:1', close: async () => {} });
    const theirs = async () => ({ url: 'tcp://127.0.0.1:2', close: async () => {} });
    expect(resolveAgentOptions({ ...base, recorder: mine }).recorder).toBe(mine);
    expect(resolveAgentOptions({ ...base, recorder: mine }, theirs).recorder).toBe(mine);
    expect(resolveAgentOptions(base, theirs).recorder).toBe(theirs);
    expect(resolveAgentOptions({ ...base, recorder: null }, theirs).recorder).toBeNull();
    expect(resolveAgentOptions(base).recorder).toBeNull();
    expect(badField({ ...base, recorder: 'proxy' })).toBe('recorder');
  });

  it('stores record as given (reserved) and accepts every sentinel form', () => {
    expect(resolveAgentOptions({ ...base, record: false }).record).toBe(false);
    expect(resolveAgentOptions({ ...base, record: true }).record).toBe(true);
    for (const s of ['default', { sentinel: 'Done!' }, { selector: '#ok', visible: true }, { expression: 'window.done === true' }] as const) {
      expect(resolveAgentOptions({ ...base, successCheck: s }).successCheck).toEqual(s);
    }
  });

  it('names the bad field', () => {
    expect(badField(undefined)).toBe('(options)');
    expect(badField({ vncUrl: 'ws://h:1' })).toBe('outputDir');
    expect(badField({ outputDir: '', vncUrl: 'ws://h:1' })).toBe('outputDir');
    expect(badField({ outputDir: 'o' })).toBe('vncUrl');
    expect(badField({ outputDir: 'o', vncUrl: 'http://h:1' })).toBe('vncUrl');
    expect(badField({ outputDir: 'o', vncUrl: 'tcp://h' })).toBe('vncUrl');
    expect(badField({ outputDir: 'o', vncUrl: 'ws://h:1', vncPort: 2 })).toBe('vncUrl');
    expect(badField({ outputDir: 'o', vncPort: 70000 })).toBe('vncPort');
    expect(badField({ outputDir: 'o', vncPort: 1.5 })).toBe('vncPort');
    expect(badField({ outputDir: 'o', vncScheme: 'http', vncPort: 1 })).toBe('vncScheme');
    expect(badField({ ...base, cdpUrl: 'ftp://h:1' })).toBe('cdpUrl');
    expect(badField({ ...base, cdpUrl: 'http://h:1', cdpPort: 2 })).toBe('cdpUrl');
    expect(badField({ ...base, cdpPort: 0 })).toBe('cdpPort');
    expect(badField({ ...base, password: 42 })).toBe('password');
    expect(badField({ ...base, record: 'yes' })).toBe('record');
    expect(badField({ ...base, live: 'no' })).toBe('live');
    expect(badField({ ...base, successCheck: { selector: '' } })).toBe('successCheck');
    expect(badField({ ...base, successCheck: 'always' })).toBe('successCheck');
    expect(badField({ ...base, task: 7 })).toBe('task');
    expect(badField({ ...base, stepTimeoutMs: 0 })).toBe('stepTimeoutMs');
    expect(badField({ ...base, successGraceMs: -1 })).toBe('successGraceMs');
    expect(badField({ ...base, successGraceMs: 2.5 })).toBe('successGraceMs');
    expect(badField({ ...base, successGraceMs: 60_001 })).toBe('successGraceMs');
    expect(badField({ ...base, stepTimeout: 10 })).toBe('stepTimeout');
  });
});

describe('Agent connection laziness', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it('connects neither in the constructor nor in run() before act() needs the desktop; the first action does', async () => {
    let connections = 0;
    // Not a VNC server: it counts connections and closes them (the agent's connect then fails).
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const vncUrl = `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = await tempOutputDir();
    try {
      const seen: number[] = [];
      class Lazy extends Agent {
        override async act(): Promise<boolean> {
          seen.push(connections);
          await this.wait(0);
          seen.push(connections);
          await this.mouseMove({ x: 1, y: 1 });
          return true;
        }
      }
      const agent = new Lazy({ outputDir: out.dir, vncUrl });
      await new Promise((r) => setTimeout(r, 20));
      expect(connections).toBe(0);
      const r = await agent.run({ maxSteps: 1 });
      expect(seen).toEqual([0, 0]);
      expect(connections).toBe(1);
      // The first connection failing is the RFB error itself (not a lost connection).
      expect(r).toMatchObject({ status: 'error', error: { code: 'RFB_ERR_CLOSED' } });
    } finally {
      await out.remove();
    }
  });
});
