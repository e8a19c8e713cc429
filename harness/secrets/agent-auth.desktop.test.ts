/**
 * Auth bindings in an Agent run on a real desktop: a binding is applied to the requests a step causes (meta.auth in
 * the trace, the header at the site), and a binding whose OAuth token URL fails ends the run with status error and
 * AUTH_ERR_TOKEN_URL naming the binding; neither result.json, error.txt nor the trace holds a secret.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptAgent, useEventsDesktop } from '../agent/test-helpers/desktops.ts';
import { serveHtml, startSite } from '../guard/test-helpers.ts';
import { scanDirs } from './scan.ts';

describe('auth bindings in Agent.run()', () => {
  const env = useEventsDesktop('xvnc');

  it('applies a bearer binding to a matching request made during the run, and records it (origin only)', async () => {
    const site = await startSite();
    let auth: string | undefined;
    site.route('/api', (req, res) => {
      auth = req.headers.authorization;
      res.writeHead(200).end('ok');
    });
    serveHtml(site, '/p.html', '<!doctype html><title>p</title>');
    process.env.VNCUA_AGENT_AUTH_TOKEN = 'agent-auth-token-5f4e3d2c';
    try {
      const dir = join(await env.out(), 'run');
      const agent = new ScriptAgent(
        { outputDir: dir, vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl, auth: [{ domain: site.pattern, type: 'bearer', tokenEnv: 'VNCUA_AGENT_AUTH_TOKEN' }] },
        async (a) => {
          await env.desktop.page.goto(`${site.origin}/p.html`);
          await env.desktop.page.evaluate(async (u) => (await fetch(u)).text(), `${site.origin}/api`);
          await a.wait(0);
        },
      );
      const r = await agent.run({ maxSteps: 1 });
      expect(r.error).toBeUndefined();
      expect(auth).toBe('Bearer agent-auth-token-5f4e3d2c');
      const trace = await readFile(join(dir, 'execution.json'), 'utf8');
      expect(trace).toContain(`"auth":[{"kind":"applied","binding":"auth[0] bearer ${site.pattern}","url":"${site.origin}/…","step":1,"resource_type":"Document"`);
      expect((await scanDirs([dir], 'agent-auth-token-5f4e3d2c')).hits).toEqual([]);
    } finally {
      await site.close();
    }
  }, 120_000);

  it('an OAuth token URL that fails ends the run: AUTH_ERR_TOKEN_URL naming the binding, no secret written', async () => {
    const site = await startSite();
    const tokens = await startSite();
    tokens.route('/token', (_req, res) => void res.writeHead(503).end('down'));
    serveHtml(site, '/p.html', '<!doctype html><title>p</title>');
    process.env.VNCUA_AGENT_CID = 'client-id-agent';
    process.env.VNCUA_AGENT_CSECRET = 'client-secret-agent-7a6b5c';
    try {
      const dir = join(await env.out(), 'run');
      const agent = new ScriptAgent(
        {
          outputDir: dir,
          vncUrl: env.desktop.vncUrl,
          cdpUrl: env.desktop.cdpUrl,
          auth: [{ domain: site.pattern, type: 'oauth', tokenUrl: `${tokens.origin}/token`, clientIdEnv: 'VNCUA_AGENT_CID', clientSecretEnv: 'VNCUA_AGENT_CSECRET' }],
        },
        async (a) => {
          await env.desktop.page.goto(`${site.origin}/p.html`).catch(() => {});
          await a.wait(30);
        },
      );
      const r = await agent.run({ maxSteps: 1 });
      expect(r.status).toBe('error');
      expect(r.error?.code).toBe('AUTH_ERR_TOKEN_URL');
      expect(r.error?.message).toBe(
        `Auth binding auth[0] oauth ${site.pattern}: the OAuth token URL ${tokens.origin}/… answered HTTP 503; check tokenUrl and the client credentials.`,
      );
      expect(await readFile(join(dir, 'error.txt'), 'utf8')).toContain('AUTH_ERR_TOKEN_URL');
      expect((await scanDirs([dir], 'client-secret-agent-7a6b5c')).hits).toEqual([]);
    } finally {
      await site.close();
      await tokens.close();
    }
  }, 120_000);
});
