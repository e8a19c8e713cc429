/**
 * The live side of `vncua serve`: which runs under ROOT are live (viewer/live/discovery.ts, rescanned every
 * second while a page listens), each one's status from its endpoint's `/events`, its steps as they are written
 * (viewer/live/steps.ts), takeover and handback through its `/control`, and the relay of a page's noVNC socket
 * to its `/rfb` (viewer/live/relay.ts). The endpoint's URL and token stay here; pages see run directories only.
 * Nothing under ROOT is written: a stale live.json (its process gone) is reported, never removed.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type WebSocket from 'ws';
import type { LiveAnnouncement, LiveStatus } from '../../harness/live/control.ts';
import { findLive, LIVE_FILE, readLive, type FoundLive } from './discovery.ts';
import { type ControlAnswer, endpointControl, endpointWsUrl, unreachableMessage, watchEndpointEvents, type EventsWatch } from './endpoint-client.ts';
import type { LiveMessage, LiveProblem, LiveRunInfo, LiveRunsMessage, StaleLive } from './messages.ts';
import { relay, type Relay } from './relay.ts';
import { StepsWatch } from './steps.ts';

/** Options of LiveHub. */
export interface LiveHubOptions {
  /** Rescan ROOT this often while a page listens (default 1000 ms). */
  scanMs?: number;
  /** Try an unreachable endpoint again after this many ms (default 2000). */
  retryMs?: number;
  /** After a run's endpoint says it ended, wait at most this long for its result.json before telling the pages (default 5000 ms). */
  finalWaitMs?: number;
  /** One line per notable event, with its code when it is a problem (the CLI prints them on stderr). */
  log?: (line: string) => void;
  /** Called when a run starts or stops being live (the run list's cache is stale then). */
  onChange?: (dir: string) => void;
}

interface Live {
  dir: string;
  abs: string;
  ann: LiveAnnouncement;
  info: LiveRunInfo;
  events: EventsWatch | null;
  lastAttempt: number;
  steps: StepsWatch | null;
  listeners: Set<(m: LiveMessage) => void>;
  relays: Set<Relay>;
  ending: boolean;
  loggedUnreachable: boolean;
  loggedHelp: string | null;
}

/** A person's name as a watcher or holder: 1-64 letters, digits, space and `._@+-`. */
export function validWho(who: string): boolean {
  return /^[\w .@+-]{1,64}$/.test(who);
}

const notLive = (dir: string, why: string): LiveProblem => ({
  code: 'SERVE_ERR_NOT_LIVE',
  message: `Run ${dir} is not live: ${why}. Its recorded trace is shown instead.`,
});

/** The live runs of one ROOT. */
export class LiveHub {
  readonly root: string;
  private readonly opts: Required<Omit<LiveHubOptions, 'log' | 'onChange'>> & Pick<LiveHubOptions, 'log' | 'onChange'>;
  private readonly lives = new Map<string, Live>();
  private stale: StaleLive[] = [];
  private readonly listListeners = new Set<(m: LiveRunsMessage) => void>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private scanning: Promise<void> | null = null;
  private scannedAt = -Infinity;
  private lastList = '';
  /** Runs started or ended so far (LiveRunsMessage.changes). */
  private changes = 0;
  private closed = false;

  constructor(root: string, opts: LiveHubOptions = {}) {
    this.root = root;
    this.opts = { scanMs: opts.scanMs ?? 1000, retryMs: opts.retryMs ?? 2000, finalWaitMs: opts.finalWaitMs ?? 5000, log: opts.log, onChange: opts.onChange };
  }

  /** The live runs now (after a scan, unless one finished less than `maxAgeMs` ago). */
  async list(maxAgeMs = 300): Promise<LiveRunsMessage> {
    if (performance.now() - this.scannedAt > maxAgeMs) await this.scan();
    return this.snapshot();
  }

  /** Whether run `dir` is live, by its live.json alone (no scan of ROOT). */
  async run(dir: string): Promise<{ run: LiveRunInfo | null; notLive: LiveProblem | null }> {
    const live = await this.ensure(dir);
    if ('problem' in live) return { run: null, notLive: live.problem };
    return { run: live.info, notLive: null };
  }

  /** Follow every live run: `listener` gets the list now and on every change. Returns the unsubscribe function. */
  subscribeList(listener: (m: LiveRunsMessage) => void): () => void {
    this.listListeners.add(listener);
    this.activate();
    if (this.scannedAt > -Infinity) listener(this.snapshot());
    void this.scan();
    return () => {
      this.listListeners.delete(listener);
      this.deactivateSoon();
    };
  }

  /**
   * Follow one run: `listener` gets its status (type "run"), its steps, and "ended" once the run is over and its
   * trace final. A run that is not live gets one "run" message with `notLive`. Returns the unsubscribe function.
   */
  async subscribeRun(dir: string, listener: (m: LiveMessage) => void): Promise<() => void> {
    const live = await this.ensure(dir);
    if ('problem' in live) {
      listener({ type: 'run', run: null, notLive: live.problem });
      return () => {};
    }
    live.listeners.add(listener);
    this.activate();
    listener({ type: 'run', run: live.info, notLive: null });
    live.steps ??= new StepsWatch(live.abs);
    const unsubscribeSteps = live.steps.subscribe((e) => listener(e));
    return () => {
      unsubscribeSteps();
      live.listeners.delete(listener);
      this.deactivateSoon();
    };
  }

  /** Takeover, handback or status of run `dir` for `who`, through its endpoint's /control. */
  async control(dir: string, op: 'takeover' | 'handback' | 'status', who: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ControlAnswer> {
    const live = await this.ensure(dir);
    if ('problem' in live) return { ok: false, http: 409, ...live.problem };
    const answer = await endpointControl(live.ann, dir, op, who, opts);
    if (answer.ok) this.update(live, { ...answer.status });
    else if (answer.code === 'LIVE_ERR_TAKEN') this.opts.log?.(`${answer.code}: ${dir}: ${who} asked to take over; ${answer.holder ?? 'another person'} holds mouse and keyboard`);
    else if (answer.code !== 'LIVE_ERR_NOT_HOLDER') this.opts.log?.(`${answer.code}: ${dir}: ${op} by ${who}: ${answer.message}`);
    return answer;
  }

  /** Relay a page's accepted noVNC socket to run `dir`'s `/rfb` as `who` (view-only unless `viewOnly` is false). */
  async attach(browser: WebSocket, dir: string, who: string, viewOnly: boolean, protocols: string[]): Promise<void> {
    // Nothing the page sends is lost while the run is looked up: the socket is read again once the relay listens.
    browser.pause();
    const live = await this.ensure(dir);
    browser.resume();
    if ('problem' in live) {
      browser.close(4404, `${live.problem.code}: run ${dir} is not live`.slice(0, 123));
      return;
    }
    const target = endpointWsUrl(live.ann, '/rfb', { who, ...(viewOnly ? { view_only: '1' } : {}) });
    const r = relay(browser, target, {
      protocols,
      onClose: (error) => {
        live.relays.delete(r);
        if (error && !live.ending) this.opts.log?.(`SERVE_ERR_LIVE_UNREACHABLE: ${dir}: the live view's connection: ${error}`);
      },
    });
    live.relays.add(r);
  }

  /** Stop following every run and close every relayed socket. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const relays: Promise<void>[] = [];
    for (const live of this.lives.values()) {
      live.events?.close();
      live.steps?.stop();
      for (const r of live.relays) relays.push(r.close());
    }
    this.lives.clear();
    await Promise.all(relays);
  }

  // ------------------------------------------------------------------ internals

  private snapshot(): LiveRunsMessage {
    const runs = [...this.lives.values()].map((l) => ({ ...l.info }));
    runs.sort((a, b) => a.dir.localeCompare(b.dir));
    return { type: 'runs', runs, stale: this.stale.slice(), changes: this.changes };
  }

  private activate(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.scan(), this.opts.scanMs);
    this.timer.unref();
  }

  private deactivateSoon(): void {
    if (this.listListeners.size > 0 || [...this.lives.values()].some((l) => l.listeners.size > 0)) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private broadcastList(): void {
    const m = this.snapshot();
    const text = JSON.stringify(m);
    if (text === this.lastList) return;
    this.lastList = text;
    for (const l of this.listListeners) l(m);
  }

  /** The Live of `dir` (found by a scan, or read now from its live.json), or why it is not live. */
  private async ensure(dir: string): Promise<Live | { problem: LiveProblem }> {
    const known = this.lives.get(dir);
    if (known && !known.ending) return known;
    if (dir !== '.' && (dir === '' || dir.includes('\\') || isAbsolute(dir) || dir.split('/').some((p) => p === '..' || p === '.' || p === ''))) {
      return { problem: notLive(dir, 'no such run directory under ROOT') };
    }
    const abs = dir === '.' ? this.root : join(this.root, ...dir.split('/'));
    const found = await readLive(this.root, abs);
    if (!found) return { problem: notLive(dir, `its directory holds no ${LIVE_FILE} (the run has ended, or was not started with a live endpoint)`) };
    if (found.problem || !found.announcement) return { problem: notLive(dir, found.problem ?? 'unreadable live.json') };
    if (!found.alive) return { problem: notLive(dir, `the process that announced it (pid ${found.announcement.pid}) is gone: a stale ${LIVE_FILE}, left as it is`) };
    return this.lives.get(dir) ?? this.add(found);
  }

  private add(found: FoundLive): Live {
    const ann = found.announcement!;
    const live: Live = {
      dir: found.dir,
      abs: found.abs,
      ann,
      info: { dir: found.dir, state: 'connecting', holder: null, help: null, steps: 0, pid: ann.pid, started_at: ann.started_at, error: null },
      events: null,
      lastAttempt: -Infinity,
      steps: null,
      listeners: new Set(),
      relays: new Set(),
      ending: false,
      loggedUnreachable: false,
      loggedHelp: null,
    };
    this.lives.set(found.dir, live);
    this.changed(found.dir);
    this.connect(live);
    return live;
  }

  /** Open the run's events stream (again). */
  private connect(live: Live): void {
    live.lastAttempt = performance.now();
    live.events = watchEndpointEvents(live.ann, {
      onStatus: (s) => {
        this.update(live, s);
        if (s.state === 'ended') void this.finish(live, null);
      },
      onEnd: (error) => {
        live.events = null;
        if (live.ending || this.closed) return;
        if (error === null) return void this.finish(live, null);
        // The endpoint went away: ended (live.json gone soon) or crashed; the next scans tell.
        void this.unreachable(live, error);
      },
    });
  }

  private async unreachable(live: Live, error: string): Promise<void> {
    const still = await readLive(this.root, live.abs);
    if (!still?.alive || still.announcement?.token !== live.ann.token) return this.finish(live, still?.alive === false ? 'its process is gone' : null);
    const problem = { code: 'SERVE_ERR_LIVE_UNREACHABLE', message: unreachableMessage(live.dir, error) };
    live.info = { ...live.info, state: 'unreachable', error: problem };
    if (!live.loggedUnreachable) this.opts.log?.(`${problem.code}: ${problem.message}`);
    live.loggedUnreachable = true;
    this.tell(live, { type: 'run', run: live.info, notLive: null });
    this.broadcastList();
  }

  private update(live: Live, s: LiveStatus): void {
    live.info = { ...live.info, state: s.state, holder: s.holder, help: s.help, steps: s.steps, error: null };
    live.loggedUnreachable = false;
    if (s.state === 'help' && s.help !== live.loggedHelp) this.opts.log?.(`${live.dir} asks for help: ${s.help ?? ''}`);
    live.loggedHelp = s.state === 'help' ? s.help : null;
    this.tell(live, { type: 'run', run: live.info, notLive: null });
    this.broadcastList();
  }

  /** A run started or ended: the run list is stale. */
  private changed(dir: string): void {
    this.changes++;
    this.opts.onChange?.(dir);
  }

  private tell(live: Live, m: LiveMessage): void {
    for (const l of live.listeners) l(m);
  }

  /** The run is over: wait for its final trace, tell its pages, forget it. */
  private async finish(live: Live, why: string | null): Promise<void> {
    if (live.ending) return;
    live.ending = true;
    if (this.lives.get(live.dir) === live) this.lives.delete(live.dir);
    live.events?.close();
    live.events = null;
    this.broadcastList();
    if (why) this.opts.log?.(`SERVE_ERR_NOT_LIVE: ${live.dir}: ${why}`);
    // The trace is final once result.json is there (written as the run ends) and live.json is gone; a run whose
    // process is gone (`why`) writes nothing more.
    const deadline = why ? 0 : performance.now() + this.opts.finalWaitMs;
    while (performance.now() < deadline && !this.closed) {
      const [result, ann] = await Promise.all([stat(join(live.abs, 'result.json')).catch(() => null), stat(join(live.abs, LIVE_FILE)).catch(() => null)]);
      if (result && !ann) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await live.steps?.refresh();
    live.steps?.stop();
    live.info = { ...live.info, state: 'ended' };
    this.tell(live, { type: 'run', run: live.info, notLive: null });
    this.tell(live, { type: 'ended', dir: live.dir });
    this.changed(live.dir);
    this.broadcastList();
  }

  /** Rescan ROOT for live.json (coalesced). */
  private scan(): Promise<void> {
    this.scanning ??= this.scanOnce().finally(() => {
      this.scanning = null;
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const found = await findLive(this.root);
    this.scannedAt = performance.now();
    if (this.closed) return;
    const seen = new Set<string>();
    const stale: StaleLive[] = [];
    for (const f of found) {
      if (!f.announcement || !f.alive) {
        const why = f.problem ?? `the process that announced it (pid ${f.announcement?.pid}) is gone: a stale ${LIVE_FILE}, left as it is`;
        stale.push({ dir: f.dir, ...notLive(f.dir, why), code: 'SERVE_ERR_NOT_LIVE' });
        continue;
      }
      seen.add(f.dir);
      const known = this.lives.get(f.dir);
      // A new run in the same directory (a retry): the old one is over.
      if (known && known.ann.token !== f.announcement.token) void this.finish(known, null);
      const live = this.lives.get(f.dir) ?? this.add(f);
      if (!live.events && !live.ending && performance.now() - live.lastAttempt > this.opts.retryMs) this.connect(live);
    }
    this.stale = stale;
    for (const live of [...this.lives.values()]) {
      if (!seen.has(live.dir)) void this.finish(live, stale.some((s) => s.dir === live.dir) ? `its process (pid ${live.ann.pid}) is gone` : null);
    }
    this.broadcastList();
  }
}
