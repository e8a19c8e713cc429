/**
 * The secret scan: three unique secrets (an auth binding's bearer token, a `secrets` entry the model types through
 * `{{secret:pw}}`, and the model API key in the environment) planted in a real `vncua eval` with every shipped model
 * adapter (openai-cua, anthropic, chat, http), each against its fake model server speaking the real wire format
 * through the official SDK (byom/*\/test-helpers). Then `vncua process`, `vncua score` and `vncua export` run over the
 * results. Every byte under the output roots (recordings included: the client stream is also decoded for KeyEvents),
 * every stdout/stderr, and every request body the fake servers received is scanned for each secret, its JSON, URL
 * and base64 forms and its keysyms in order: zero hits.
 *
 * Representative part of the basic suite: its `type-search` task (a click and typing into a search field), the one
 * kind of step a secret goes through, beside an `auth-poll` task on a site of the test's own whose page requests
 * /api every 10 ms, for the bearer binding to go out during the run. The setup is
 * cli/test-helpers/secret-scan.ts; bench/secret-scan.ts runs the same over the full basic suite (the issue's figure).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunDir, runSecretScan, scanSecretRun, type SecretScanRun } from './test-helpers/secret-scan.ts';

describe('secret scan over vncua eval with every adapter', () => {
  let scan: SecretScanRun;

  beforeAll(async () => {
    scan = await runSecretScan({ tasks: ['type-search'] });
  }, 900_000);

  afterAll(async () => {
    await scan?.close();
  });

  it('every adapter ran the task, typed through the placeholder, and its model never saw the value', async () => {
    for (const r of scan.runs) expect(r.code, `${r.agent}: ${r.stderr}`).toBe(0);
    for (const root of scan.roots) {
      const trace = await readFile(join(root, (await findRunDir(root, 'type-search'))!, 'execution.json'), 'utf8');
      expect(trace, root).toContain('{{secret:pw}}');
      expect(trace, root).toContain('"secret_spans":["pw"]');
    }
    // The auth-poll page opens only once the run's bindings are attached (eval/attempt.ts), and polls /api from its
    // load on: every adapter's run sent the bearer, whose value the scan below then must not find anywhere.
    expect(scan.bearerSeen).toEqual({ 'openai-cua': true, anthropic: true, chat: true, http: true });
    expect(scan.bodies.length).toBeGreaterThanOrEqual(8);
  });

  it('0 hits: every byte under the output roots, every stdout/stderr, every request body', async () => {
    const { hits, files, bytes } = await scanSecretRun(scan);
    console.info(`secret scan: ${files} files (${bytes} bytes), ${scan.outputs.length} outputs, ${scan.bodies.length} request bodies, 3 secrets: ${hits.length} hits`);
    expect(files).toBeGreaterThan(40);
    expect(hits).toEqual([]);
  });
});
