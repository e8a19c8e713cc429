/**
 * Secrets on a real desktop, recorded: an Agent types `{{secret:pw}}` into the events page through the recording
 * proxy. The page receives the value; execution.json keeps the placeholder; the recording's client stream holds the
 * KeyEvents redacted (VoidSymbol); and no file of the run, processed step report included, holds the value, an
 * encoding of it, or its keysyms in order.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptAgent, useEventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { scanDirs, typedByKeyEvents } from '../harness/secrets/scan.ts';
import { recordingProxyRecorder } from './recorder-factory.ts';
import { processRun } from './process/index.ts';
import { REDACTED_KEYSYM } from './proxy/redact-keys.ts';

describe('typeText("{{secret:pw}}") through the recording proxy', () => {
  const env = useEventsDesktop('xvnc');

  it('types the value, and no artifact of the run holds it', async () => {
    // Printable ASCII only (the US keymap): 24 characters, unique to this run.
    const secret = `S${randomBytes(18).toString('base64url').slice(0, 23)}`;
    process.env.VNCUA_TEST_SECRET_PW = secret;
    const out = await env.out();
    const dir = join(out, 'run');
    const agent = new ScriptAgent(
      { outputDir: dir, vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl, recorder: recordingProxyRecorder, secrets: { pw: { env: 'VNCUA_TEST_SECRET_PW' } } },
      async (a) => {
        await a.mouseClick({ position: { x: 900, y: 150 } });
        await a.typeText('id={{secret:pw}};');
      },
    );
    const r = await agent.run({ maxSteps: 1 });
    expect(r.error).toBeUndefined();
    const s = await env.desktop.settle((st) => st.text.length >= secret.length + 4, 200);
    expect(s.text).toBe(`id=${secret};`);

    const trace = await readFile(join(dir, 'execution.json'), 'utf8');
    expect(trace).toContain(`"text":"id={{secret:pw}};"`);
    expect(trace).toContain(`"secret_spans":["pw"]`);
    const client = await readFile(join(dir, 'recording', 'client.rfb.bin'));
    // The plain characters around the secret are still there; the secret's are VoidSymbol, one per press and release.
    expect(typedByKeyEvents(client)).toContain('id=;');
    let redacted = 0;
    for (let i = 0; i + 8 <= client.length; i++) if (client[i] === 4 && client.readUInt32BE(i + 4) === REDACTED_KEYSYM) redacted++;
    expect(redacted).toBeGreaterThanOrEqual(secret.length * 2);

    await processRun(dir, {});
    const scan = await scanDirs([out], secret);
    expect(scan.files).toBeGreaterThan(5);
    expect(scan.hits).toEqual([]);
  }, 120_000);
});
