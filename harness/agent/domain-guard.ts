/**
 * A run's navigation guard (harness/guard): started by Agent.run() when the options give allowedDomains or
 * blockedDomains, closed when the run ends. Each blocked request goes into the next trace entry's
 * `meta.domain_blocked` (URL, rule, step, resource type, time), into the count result.json reports as
 * `domain_blocked`, and into notices ("domain not allowed: URL") a model adapter puts into its next prompt.
 */
import { startDomainGuard, type BlockedRequest, type DomainGuard } from '../guard/browser-guard.ts';
import type { DomainPolicy } from '../guard/patterns.ts';
import { VncuaError } from '../errors.ts';

/** Notices kept for the next prompt at most (the oldest are dropped; the trace keeps every one). */
const MAX_NOTICES = 20;

/** One item of an entry's meta.domain_blocked. */
export interface DomainBlockedMeta {
  url: string;
  rule: string;
  /** The act() call it happened in (1-based; 0: before the first step). */
  step: number;
  resource_type: string;
  at: number;
}

/** The guard of one run (see the file comment). */
export class RunDomainGuard {
  /** Requests blocked so far. */
  blocked = 0;
  /** The act() call in progress (1-based), set by the run loop. */
  step = 0;
  #notices: string[] = [];
  #guard: DomainGuard | null = null;

  constructor(
    private readonly cdpUrl: string,
    private readonly policy: DomainPolicy,
    private readonly attach: (meta: { domain_blocked: DomainBlockedMeta[] }) => void,
    /** Called if the guard's connection drops during the run (the run must stop: its browser is unguarded). */
    private readonly onLost: (e: VncuaError) => void,
  ) {}

  /** Attach to the browser (GUARD_ERR_START when it cannot). */
  async start(signal: AbortSignal, timeoutMs: number): Promise<void> {
    this.#guard = await startDomainGuard({
      cdpUrl: this.cdpUrl,
      policy: this.policy,
      onBlocked: (b) => this.#onBlocked(b),
      onLost: () =>
        this.onLost(
          new VncuaError('GUARD_ERR_LOST', "The navigation guard's CDP connection to the browser dropped; the run was stopped, as its browser was no longer guarded.", {
            details: { blocked: this.blocked },
          }),
        ),
      signal,
      timeoutMs,
    });
  }

  #onBlocked(b: BlockedRequest): void {
    this.blocked++;
    this.attach({ domain_blocked: [{ url: b.url, rule: b.rule, step: this.step, resource_type: b.resourceType, at: b.at }] });
    const notice = `domain not allowed: ${b.url} (${b.rule})`;
    if (this.#notices.includes(notice)) return;
    this.#notices.push(notice);
    if (this.#notices.length > MAX_NOTICES) this.#notices.shift();
  }

  /** The notices since the last call ("domain not allowed: URL (rule)"), oldest first; clears them. */
  takeNotices(): string[] {
    const out = this.#notices;
    this.#notices = [];
    return out;
  }

  /** Stop guarding. Never throws. */
  async close(): Promise<void> {
    const g = this.#guard;
    this.#guard = null;
    await g?.close();
  }
}
