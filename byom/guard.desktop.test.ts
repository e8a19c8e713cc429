/**
 * The navigation guard through an Agent run: a ChatAgent (the real `openai` SDK against a local Chat Completions
 * server playing the model) on a real desktop clicks a link to a blocked site. The navigation never reaches that
 * site's server; the trace entry's meta.domain_blocked names the URL, the rule and the step; result.json counts it;
 * and the model's next prompt says "domain not allowed: URL".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../harness/agent/test-helpers/desktops.ts';
import { waitForPageReady } from '../harness/cdp/page-ready.ts';
import { launchDesktop, type Desktop } from '../harness/desktop/index.ts';
import { isVncuaError } from '../harness/errors.ts';
import { serveHtml, startSite, type Site } from '../harness/guard/test-helpers.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { ChatAgent } from './chat/index.ts';
import { startChatServer, texts, type ChatServer } from './chat/test-helpers/chat-server.ts';

describe('the navigation guard in an Agent run', () => {
  let home: Site;
  let bad: Site;
  let desktop: Desktop | undefined;
  let chat: ChatServer | undefined;
  const dirs: Array<{ remove(): Promise<void> }> = [];

  beforeAll(async () => {
    [home, bad] = await Promise.all([startSite(), startSite()]);
    // One link over the whole page: a click anywhere navigates to the blocked site.
    serveHtml(
      home,
      '/page.html',
      `<!doctype html><title>home</title><style>html,body{margin:0;height:100%}a{display:block;height:100%;background:#36c}</style><a href="${bad.origin}/secret.html">go</a>`,
    );
    desktop = await launchDesktop({ url: `${home.origin}/page.html`, timeoutMs: 45_000 });
  }, 60_000);

  afterAll(async () => {
    for (const step of [() => chat?.close(), () => desktop?.close(), () => home?.close(), () => bad?.close(), ...dirs.map((d) => () => d.remove())]) {
      try {
        await step();
      } catch {
        // keep cleaning up
      }
    }
  });

  it('blocks the clicked navigation, records it in the trace and result.json, and tells the model', async () => {
    const out = await tempOutputDir('vncua-guard-');
    dirs.push(out);
    // The model clicks, then waits until a prompt says the navigation was blocked (it arrives a moment after the click), then finishes.
    const told = (body: { messages: Array<{ content?: unknown }> }) => texts(body.messages.at(-1)!.content as never).some((t) => t.includes('domain not allowed'));
    chat = await startChatServer((body, n) =>
      JSON.stringify(n === 1 ? { action: 'click', coordinate: [640, 400] } : told(body) ? { action: 'finish' } : { action: 'wait', seconds: 0.2 }),
    );
    const agent = new ChatAgent({
      outputDir: out.dir,
      vncUrl: desktop!.vncUrl,
      cdpUrl: desktop!.cdpUrl,
      record: false,
      live: false,
      baseURL: chat.baseURL,
      model: 'test-vlm',
      apiKey: 'sk-test',
      task: 'Open the link.',
      allowedDomains: [home.pattern],
      blockedDomains: [bad.pattern],
    });
    const ready = waitForPageReady(desktop!.cdpUrl, { url: `${home.origin}/page.html`, signal: AbortSignal.timeout(30_000) });
    const r = await agent.run({ maxSteps: 20, ready });
    expect(r.status).toBe('finished');
    expect(r.domain_blocked).toBe(1);
    expect(bad.log).toEqual([]);

    // Exactly one prompt (the first after the click that was blocked) says what was blocked, and the model finished after it.
    const prompts = chat.bodies.map((b) => texts(b.messages.at(-1)!.content).join('\n'));
    const toldAt = prompts.map((t, i) => (t.includes('domain not allowed') ? i : -1)).filter((i) => i >= 0);
    expect(toldAt).toEqual([prompts.length - 1]);
    expect(toldAt[0]).toBeGreaterThan(0);
    expect(prompts.at(-1)).toContain(`domain not allowed: ${bad.origin}/secret.html (blockedDomains: ${bad.pattern})`);

    // The trace: the click's entry (or the finish after it) carries the blocked request, with the step it happened in.
    const { entries } = await readTrace(out.dir);
    const items = entries.flatMap((e) => ((e.meta?.domain_blocked as unknown[]) ?? []).map((b) => ({ entry: e.action, ...(b as object) })));
    expect(items).toEqual([
      {
        entry: expect.any(String),
        url: `${bad.origin}/secret.html`,
        rule: `blockedDomains: ${bad.pattern}`,
        step: expect.any(Number),
        resource_type: 'Document',
        at: expect.any(Number),
      },
    ]);
    // In the click's step, or (on a slow machine) the next one that was under way when the browser asked.
    const step = (items[0] as unknown as { step: number }).step;
    expect(step).toBeGreaterThanOrEqual(1);
    expect(step).toBeLessThanOrEqual(toldAt[0]! + 1);
  }, 180_000);

  it('a malformed pattern is GUARD_ERR_BAD_PATTERN from the constructor, naming it', () => {
    let err: unknown;
    try {
      new ChatAgent({
        outputDir: '/tmp/never',
        vncUrl: desktop!.vncUrl,
        cdpUrl: desktop!.cdpUrl,
        baseURL: 'http://127.0.0.1:9/v1',
        model: 'm',
        apiKey: 'k',
        blockedDomains: ['ev*l.com'],
      });
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'GUARD_ERR_BAD_PATTERN')).toBe(true);
    expect((err as Error).message).toMatch(/^blockedDomains pattern "ev\*l\.com" is not valid: .*\*\.example\.com/);
  });
});
