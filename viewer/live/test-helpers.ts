/**
 * Test-only: a LiveControl driven by the test (a run's status, takeover rules, a framebuffer it paints, the
 * input it received), served by the real live endpoint (harness/live/endpoint.ts) in a run directory.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VncuaError } from '../../harness/errors.ts';
import type { HumanInput, LiveAnnouncement, LiveControl, LiveStatus } from '../../harness/live/control.ts';
import { type RunningLiveEndpoint, startLiveEndpoint } from '../../harness/live/endpoint.ts';
import { Framebuffer } from '../../harness/rfb/framebuffer.ts';
import { packRgb } from '../../harness/rfb/sink.ts';

/** A LiveControl whose run the test drives: setState(), askHelp(), paint(); takeover rules as the Agent's. */
export class TestControl implements LiveControl {
  private s: LiveStatus = { state: 'running', holder: null, help: null, steps: 0 };
  private readonly statusListeners = new Set<(s: LiveStatus) => void>();
  private readonly fbListeners = new Set<(fb: Framebuffer | null) => void>();
  fb: Framebuffer | null;
  /** Every input a holder sent, with who. */
  readonly inputs: Array<{ who: string; event: HumanInput }> = [];

  constructor(width = 64, height = 48) {
    this.fb = new Framebuffer(width, height);
  }

  status(): LiveStatus {
    return { ...this.s };
  }
  onStatus(listener: (status: LiveStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }
  framebuffer(): Framebuffer | null {
    return this.fb;
  }
  onFramebuffer(listener: (fb: Framebuffer | null) => void): () => void {
    this.fbListeners.add(listener);
    return () => this.fbListeners.delete(listener);
  }
  async takeover(who: string): Promise<LiveStatus> {
    if (this.s.holder !== null && this.s.holder !== who) {
      throw new VncuaError('LIVE_ERR_TAKEN', `${this.s.holder} holds mouse and keyboard.`, { details: { holder: this.s.holder } });
    }
    this.set({ state: 'paused', holder: who, help: null });
    return this.status();
  }
  async handback(who: string): Promise<LiveStatus> {
    if (this.s.holder !== who) throw new VncuaError('LIVE_ERR_NOT_HOLDER', `${who} does not hold mouse and keyboard.`, { details: { holder: this.s.holder } });
    this.set({ state: 'running', holder: null });
    return this.status();
  }
  input(who: string, event: HumanInput): void {
    if (who === this.s.holder) this.inputs.push({ who, event });
  }

  /** Change the status and tell the listeners. */
  set(patch: Partial<LiveStatus>): void {
    this.s = { ...this.s, ...patch };
    for (const l of this.statusListeners) l(this.status());
  }
  /** One more step. */
  step(): void {
    this.set({ steps: this.s.steps + 1 });
  }
  /** The agent asks for help (paused, flagged). */
  askHelp(reason: string): void {
    this.set({ state: 'help', help: reason });
  }
  /** Fill the framebuffer with one colour. */
  paint(r: number, g: number, b: number): void {
    const fb = this.fb!;
    fb.fill(0, 0, fb.width, fb.height, packRgb(r, g, b));
  }
}

/** A run served live by the real endpoint (harness/live/endpoint.ts). */
export interface TestEndpoint {
  /** What live.json announced. */
  announcement: LiveAnnouncement;
  endpoint: RunningLiveEndpoint;
  /** End the run as the Agent does: a final "ended" status, then the endpoint closed (live.json removed). */
  end(): Promise<void>;
  /** Stop serving (idempotent; for the test's cleanup). */
  close(): Promise<void>;
  /** A runner that stops answering (crashed or hung): the endpoint gone, live.json left behind, the process alive. */
  crash(): Promise<void>;
}

/** Serve `control` in `dir` with startLiveEndpoint (live.json announced there). */
export async function serveTestEndpoint(dir: string, control: TestControl): Promise<TestEndpoint> {
  const endpoint = await startLiveEndpoint({ dir, control, timeoutMs: 10_000 });
  const file = join(dir, 'live.json');
  const text = await readFile(file, 'utf8');
  return {
    announcement: JSON.parse(text) as LiveAnnouncement,
    endpoint,
    async end() {
      control.set({ state: 'ended', holder: null, help: null });
      await endpoint.close();
    },
    close: () => endpoint.close(),
    async crash() {
      await endpoint.close();
      await writeFile(file, text, { mode: 0o600 });
    },
  };
}
