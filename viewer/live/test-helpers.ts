/**
 * Test-only: a LiveControl driven by the test (a run's status, takeover rules, a framebuffer it paints, the
 * input it received), served by the real live endpoint (harness/live/endpoint.ts) in a run directory.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HumanInput, LiveAnnouncement } from '../../harness/live/control.ts';
import { type RunningLiveEndpoint, startLiveEndpoint } from '../../harness/live/endpoint.ts';
import { TestControl as EndpointTestControl } from '../../harness/live/test-helpers.ts';
import { Framebuffer } from '../../harness/rfb/framebuffer.ts';
import { packRgb } from '../../harness/rfb/sink.ts';

/**
 * A LiveControl whose run the test drives: setStatus(), step(), askHelp(), paint(); the takeover rules of
 * the endpoint tests' control (harness/live/test-helpers.ts), over a framebuffer of its own, and only a
 * holder's input recorded.
 */
export class TestControl extends EndpointTestControl {
  constructor(width = 64, height = 48) {
    super(new Framebuffer(width, height));
  }

  override input(who: string, event: HumanInput): void {
    if (who === this.status().holder) this.inputs.push({ who, event });
  }

  /** One more step. */
  step(): void {
    this.setStatus({ steps: this.status().steps + 1 });
  }
  /** The agent asks for help (paused, flagged). */
  askHelp(reason: string): void {
    this.setStatus({ state: 'help', help: reason });
  }
  /** Fill the framebuffer with one colour. */
  paint(r: number, g: number, b: number): void {
    const fb = this.framebuffer()!;
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
      control.setStatus({ state: 'ended', holder: null, help: null });
      await endpoint.close();
    },
    close: () => endpoint.close(),
    async crash() {
      await endpoint.close();
      await writeFile(file, text, { mode: 0o600 });
    },
  };
}
