/**
 * `ExplorerAgent`: explores a page through the Agent's primitives only, one action per act(), with no model needed.
 *
 * Each step: look (the framebuffer it already holds: a perceptual hash and a grid of changed regions; over one CDP
 * session held for the run, the page's visible interactive elements), choose (a multi-step plan in progress first,
 * e.g. a field's typing after its click; else the patterns: forms, menus/tabs/dialogs, or on a page that is mostly a
 * canvas the game patterns; after `stuckAfter` steps without progress, or when nothing untried is left, the model
 * when one is given and allowed, else the next unstick strategy), act, wait briefly for the effects, and judge
 * progress (a new state, URL or element; on a game, any change of the frame). The run ends when the step or time
 * budget is spent, nothing new is reachable (nothing untried and a whole unstick cycle without progress), the page
 * shows the success sentinel (stopOnGoal), or the run is cancelled. Every choice comes from one seeded generator
 * over targets sorted by key, so the same seed on the same app gives the same actions.
 *
 * Observers (findings monitors) are called per agents/explorer/types.ts; `summary()` gives the ExplorerSummary
 * (qa-report.json's body) after run(), also written to explorer-summary.json in the output directory.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, applyAction, type AgentRunResult, type NextActionPlanner, type RunOptions } from '../../harness/agent/index.ts';
import { timeoutSignal } from '../../harness/cancel.ts';
import { isVncuaError } from '../../harness/errors.ts';
import { originPattern } from '../../harness/guard/patterns.ts';
import { mulberry32 } from '../../harness/prng.ts';
import { seedFrom } from '../random.ts';
import { EXPLORE_TASK, modelAllowed, modelStepProblem, type ModelBudget } from './model.ts';
import { EXPLORER_DEFAULTS, splitExplorerOptions, type ExplorerAgentOptions } from './options.ts';
import { ExplorerPage } from './page.ts';
import { FIELD_KINDS, fillMoves } from './patterns/forms.ts';
import { GamePlayer } from './patterns/games.ts';
import type { Move } from './patterns/move.ts';
import { pickTarget } from './patterns/pages.ts';
import { HASH_COLS, HASH_ROWS, REGION_COLS, REGION_ROWS, StateTracker, changedRegions, greyGrid, gridHash, type ChangedRegion, type GreyGrid } from './progress.ts';
import { SCREEN_CONTRAST, centre, screenTargets, type PageScan, type SeenTarget } from './targets.ts';
import type { ExplorerEndReason, ExplorerLayer, ExplorerStep, ExplorerSummary, Finding, ObserverContext, UnstickEvent } from './types.ts';
import { Unsticker } from './unstick.ts';

export type { ExplorerAgentOptions } from './options.ts';

/** How often one tried target may be acted on again for what it opened (a dialog closed before its form was sent). */
const MAX_REVISITS = 2;

/** A page whose largest canvas covers at least this fraction of the viewport is played as a game. */
export const GAME_CANVAS_COVER = 0.4;

/** The post-action wait: a change within 100 ms, then 40 ms of quiet, 700 ms at most (a step of a static app stays under 200 ms). */
const EFFECT_WAIT = { changeTimeoutMs: 100, quietMs: 40, timeoutMs: 700 } as const;
/** Without CDP the frame is all there is: give a navigation the time to paint. */
const SCREEN_ONLY_EFFECT_WAIT = { changeTimeoutMs: 300, quietMs: 100, timeoutMs: 1500 } as const;
/** On a game the frame may never go quiet: look after a short while whatever it does (300 ms for a change to show: a loaded machine's VNC updates come late, and a move judged "no progress" too early makes the player give up a pattern). */
const GAME_EFFECT_WAIT = { changeTimeoutMs: 300, quietMs: 40, timeoutMs: 400 } as const;

/** A 32-bit seed from a number or a string (FNV-1a over its UTF-8 bytes): the random agent's seedFrom. */
export const explorerSeed = seedFrom;

/** The host links must stay on: the start URL's. */
function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host : null;
  } catch {
    return null;
  }
}

interface Observation {
  url: string | null;
  hash: string;
  grid: GreyGrid;
  scan: PageScan | null;
  targets: SeenTarget[];
  frozen: boolean;
  /** The page is off the app (another host, Chromium's error page after a blocked navigation): go back. */
  offApp: boolean;
}

/** An agent that explores an app with heuristics, and a vision model only when they get stuck (see the file comment). */
export class ExplorerAgent extends Agent {
  /** The seed in use (after hashing a string seed); in the summary. */
  readonly seed: number;
  /** The explorer's settings, defaults applied. */
  readonly explorer: Readonly<{
    url: string | undefined;
    maxSteps: number;
    budgetMs: number;
    stuckAfter: number;
    modelEvery: number;
    maxModelCalls: number;
    maxModelCostUsd: number | undefined;
    modelTimeoutMs: number;
    stopOnGoal: boolean;
    stateScreenshots: boolean;
  }>;
  readonly #observers: NonNullable<ExplorerAgentOptions['observers']>;
  readonly #model: NextActionPlanner | null;
  readonly #log: (line: string) => void;
  readonly #host: string | null;

  // Per run.
  #rand: () => number = () => 0;
  #page: ExplorerPage | null = null;
  #started = false;
  #t0 = 0;
  /** The run's duration, once it ended (null while it runs). */
  #durationMs: number | null = null;
  #startedAt = '';
  #entries = 0;
  #endReason: ExplorerEndReason | null = null;
  #observersFinished = false;
  #steps: ExplorerStep[] = [];
  #unstick: UnstickEvent[] = [];
  #states = new StateTracker();
  #stateShots = new Map<string, string>();
  #seen = new Map<string, { key: string; kind: SeenTarget['kind']; label: string; firstSeenStep: number }>();
  #tried = new Set<string>();
  /** Per target acted on: the keys first seen right after (what it opened), for revisits. */
  #opened = new Map<string, Set<string>>();
  /** Revisits per target (at most MAX_REVISITS each). */
  #revisits = new Map<string, number>();
  #urls = new Set<string>();
  #domStates = new Set<string>();
  /** The URL of a document that did not finish loading within the scan's wait (not waited for again). */
  #slowDocument: string | null = null;
  #plan: Move[] = [];
  #noProgress = 0;
  #unsticker = new Unsticker(() => 0);
  #game: GamePlayer | null = null;
  #last: Observation | null = null;
  #fresh = new Set<string>();
  #budget: ModelBudget = { calls: 0, costUsd: 0, lastStep: Number.NEGATIVE_INFINITY };
  #modelIgnored = 0;
  #tokens = { input: 0, output: 0 };
  #findings: Finding[] = [];

  /** Validates the explorer's options and the Agent's (AGENT_ERR_BAD_OPTIONS naming the field). Connects nothing. */
  constructor(options: ExplorerAgentOptions) {
    const { explorer: e, agent } = splitExplorerOptions(options);
    // Stay on the start page's host unless told otherwise (the navigation guard enforces it; CDP needed).
    const origin = e.url ? originPattern(e.url) : null;
    const withCdp = agent.cdpUrl !== undefined || agent.cdpPort !== undefined;
    const guarded = agent.allowedDomains === undefined && agent.blockedDomains === undefined && origin !== null && withCdp ? { ...agent, allowedDomains: [origin] } : agent;
    super(guarded);
    this.seed = explorerSeed(e.seed ?? e.url ?? agent.task ?? 0);
    this.explorer = Object.freeze({
      url: e.url,
      maxSteps: e.maxSteps ?? EXPLORER_DEFAULTS.maxSteps,
      budgetMs: e.budgetMs ?? EXPLORER_DEFAULTS.budgetMs,
      stuckAfter: e.stuckAfter ?? EXPLORER_DEFAULTS.stuckAfter,
      modelEvery: e.modelEvery ?? EXPLORER_DEFAULTS.modelEvery,
      maxModelCalls: e.maxModelCalls ?? EXPLORER_DEFAULTS.maxModelCalls,
      maxModelCostUsd: e.maxModelCostUsd,
      modelTimeoutMs: e.modelTimeoutMs ?? EXPLORER_DEFAULTS.modelTimeoutMs,
      stopOnGoal: e.stopOnGoal ?? true,
      stateScreenshots: e.stateScreenshots ?? true,
    });
    this.#observers = e.observers ?? [];
    this.#model = e.model ?? null;
    this.#log = e.log ?? ((line) => void process.stderr.write(`${line}\n`));
    this.#host = hostOf(e.url);
  }

  /** run() with a fresh exploration; observers' finish() is called whatever ends it; never rejects. */
  override async run(options: RunOptions = {}): Promise<AgentRunResult> {
    this.#reset();
    let result: AgentRunResult | undefined;
    try {
      result = await super.run(options);
      return result;
    } finally {
      if (this.#t0) this.#durationMs ??= Math.round(performance.now() - this.#t0);
      if (this.#endReason === null) {
        const status = result?.status;
        this.#endReason = status === 'cancelled' ? 'cancelled' : status === 'error' || status === undefined ? 'error' : 'step_budget';
      }
      this.#page?.close();
      this.#page = null;
      // A run that never started (its output directory refused) leaves that directory alone.
      if (this.#started) {
        await this.#finishObservers();
        await this.#writeSummary();
      }
    }
  }

  /** What the exploration found so far (complete after run()): qa-report.json's body less the findings. */
  summary(): ExplorerSummary {
    const targets = [...this.#seen.values()].map((t) => ({ key: t.key, kind: t.kind, label: t.label, tried: this.#tried.has(t.key), firstSeenStep: t.firstSeenStep }));
    return {
      startUrl: this.explorer.url ?? '',
      seed: this.seed,
      startedAt: this.#startedAt,
      durationMs: this.#durationMs ?? (this.#t0 ? Math.round(performance.now() - this.#t0) : 0),
      endReason: this.#endReason ?? 'step_budget',
      steps: [...this.#steps],
      states: this.#states.states.map((s) => {
        const shot = this.#stateShots.get(s.key);
        return { key: s.key, url: s.url, frameHash: s.frameHash, firstStep: s.firstStep, visits: s.visits, ...(shot ? { screenshot: shot } : {}) };
      }),
      coverage: { seen: targets.length, tried: targets.filter((t) => t.tried).length, targets },
      unstick: [...this.#unstick],
      model: { calls: this.#budget.calls, ignored: this.#modelIgnored, costUsd: this.#budget.costUsd, tokens: { ...this.#tokens } },
    };
  }

  /** Findings the observers handed over during the run (takeFindings), in order. */
  findings(): Finding[] {
    return [...this.#findings];
  }

  #reset(): void {
    this.#rand = mulberry32(this.seed);
    this.#page = this.options.cdpUrl === null ? null : new ExplorerPage(this.options.cdpUrl);
    this.#started = false;
    this.#t0 = 0;
    this.#durationMs = null;
    this.#startedAt = '';
    this.#entries = 0;
    this.#endReason = null;
    this.#observersFinished = false;
    this.#steps = [];
    this.#unstick = [];
    this.#states = new StateTracker();
    this.#stateShots = new Map();
    this.#seen = new Map();
    this.#tried = new Set();
    this.#urls = new Set();
    this.#domStates = new Set();
    this.#slowDocument = null;
    this.#plan = [];
    this.#noProgress = 0;
    this.#unsticker = new Unsticker(this.#rand);
    this.#game = null;
    this.#last = null;
    this.#fresh = new Set();
    this.#budget = { calls: 0, costUsd: 0, lastStep: Number.NEGATIVE_INFINITY };
    this.#modelIgnored = 0;
    this.#tokens = { input: 0, output: 0 };
    this.#findings = [];
  }

  #context(): ObserverContext {
    return {
      cdpUrl: this.options.cdpUrl,
      outputDir: this.options.outputDir,
      screenshot: (name) => this.#saveScreenshot(name),
      signal: this.signal,
    };
  }

  /** Save the screen as PNG under the output directory (name sanitized, .png added); resolves to its relative path. */
  async #saveScreenshot(name: string): Promise<string> {
    const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^\.+/, '') || 'screen';
    const rel = join('screens', safe.endsWith('.png') ? safe : `${safe}.png`);
    const png = await this.screenshot({ cursor: false });
    await mkdir(join(this.options.outputDir, 'screens'), { recursive: true });
    await writeFile(join(this.options.outputDir, rel), Buffer.from(png, 'base64'));
    return rel;
  }

  override async act(): Promise<boolean> {
    if (!this.#started) await this.#start();
    if (this.#endReason !== null) return this.#end(this.#endReason);
    if (this.#steps.length >= this.explorer.maxSteps) return this.#end('step_budget');
    if (performance.now() - this.#t0 >= this.explorer.budgetMs) return this.#end('time_budget');

    const chosen = await this.#decide();
    if (!chosen) return this.#end('exhausted');
    const { move, layer } = chosen;
    if (move.target && !move.continues) this.#tried.add(move.target.key);
    if (move.strategy === 'unstick.reload' && this.#page) {
      // A frozen main thread would swallow F5: stop whatever script runs first.
      await this.#page.reload(this.signal).catch(() => false);
    }
    this.#entries++;
    await applyAction(this, move.step, this.#entries - 1);
    const step = this.#entries;
    const game = this.#game !== null;
    await this.waitForInputEffects(game ? GAME_EFFECT_WAIT : this.#page ? EFFECT_WAIT : SCREEN_ONLY_EFFECT_WAIT);
    const before = this.#last;
    const now = await this.#observe(leavesDocument(move, before?.url ?? null) ? (before?.url ?? null) : null);
    if (move.target && !move.continues) {
      const opened = this.#opened.get(move.target.key) ?? new Set<string>();
      for (const k of this.#fresh) opened.add(k);
      this.#opened.set(move.target.key, opened);
      if (move.strategy === 'page.revisit') this.#revisits.set(move.target.key, (this.#revisits.get(move.target.key) ?? 0) + 1);
    }
    const judged = this.#judge(before, now, step, game);
    if (move.continues) {
      // part of a plan: neither progress nor a miss
    } else if (judged.progress) {
      this.#noProgress = 0;
      this.#unsticker.progressed();
    } else {
      this.#noProgress++;
    }
    if (game) this.#game?.observe(judged.progress, judged.changed);
    const record: ExplorerStep = {
      step,
      action: move.step,
      layer,
      strategy: move.strategy,
      ...(move.target ? { target: { key: move.target.key, kind: move.target.kind, label: move.target.label } } : {}),
      progress: judged.progress,
      url: now.url,
      frameHash: now.hash,
      atMs: Math.round(performance.now() - this.#t0),
    };
    this.#steps.push(record);
    await this.#afterStep(record);
    if (this.explorer.stopOnGoal && this.options.cdpUrl !== null && (await this.checkTaskSuccess()) === true) return this.#end('goal');
    return false;
  }

  /** The first act(): the start page up, the first look, observers started. */
  async #start(): Promise<void> {
    this.#started = true;
    this.#t0 = performance.now();
    this.#startedAt = new Date().toISOString();
    // Short: the page-ready wait ran already (vncua run, eval), and a page with little on it may never count as painted.
    await this.waitForPaintedScreen({ timeoutMs: 3000 });
    await this.waitForQuietScreen({ quietMs: 100, timeoutMs: 1500 });
    const first = await this.#observe();
    this.#judge(null, first, 0, false);
    const ctx = this.#context();
    for (const o of this.#observers) await o.start?.(ctx);
    this.#takeFindings();
  }

  /**
   * Look at the screen and, over CDP, at the page. A scan that fails while a document is replaced, or finds it still
   * loading, is made again (up to 2 s); with `leaving` (a link to another document was clicked) the scan waits, up to 2 s, for the URL to change.
   */
  async #observe(leaving: string | null = null): Promise<Observation> {
    const screen = await this.clientResolution();
    let scan: PageScan | null = null;
    let frozen = false;
    if (this.#page) {
      const until = performance.now() + 2000;
      let r = await this.#page.scan(screen, this.signal);
      // A document that never completes loading (a request left hanging) is waited for once, not at every step.
      const loading = (x: typeof r) => x.ok && !x.scan.loaded && x.scan.url !== this.#slowDocument;
      while (performance.now() < until && ((!r.ok && r.why !== 'frozen') || loading(r) || (r.ok && leaving !== null && r.scan.url === leaving))) {
        await this.waitForQuietScreen({ quietMs: 50, timeoutMs: 200 });
        r = await this.#page.scan(screen, this.signal);
      }
      if (loading(r) && r.ok) this.#slowDocument = r.scan.url;
      if (r.ok) scan = r.scan;
      else if (r.why === 'frozen') {
        frozen = true;
        this.#log(
          `explorer: EXPLORER_ERR_PAGE_FROZEN: the page did not answer over CDP within ${this.#page.timeoutMs} ms (step ${this.#entries}); stopping its script and reloading it.`,
        );
      }
    }
    const fb = this.framebuffer();
    const frame = fb ?? { width: screen.width, height: screen.height, data: new Uint8Array(screen.width * screen.height * 4) };
    const grid = greyGrid(frame, REGION_COLS, REGION_ROWS);
    const hash = gridHash(greyGrid(frame, HASH_COLS, HASH_ROWS));
    // A page mostly covered by a canvas is a game; without CDP the screen's contrasted cells are the targets.
    const isGame = scan !== null && scan.canvasCover >= GAME_CANVAS_COVER;
    if (isGame && !this.#game) this.#game = new GamePlayer(this.explorer.stuckAfter, this.#rand);
    if (!isGame && scan !== null) this.#game = null;
    const offApp = scan !== null && this.#host !== null && hostOf(scan.url) !== this.#host;
    const targets = offApp ? [] : scan ? scan.targets.filter((t) => !isGame || t.kind !== 'canvas') : screenTargets(grid, screen, SCREEN_CONTRAST, frame);
    return { url: scan?.url ?? null, hash, grid, scan, targets, frozen, offApp };
  }

  /** Progress of a step: a new state, URL or element (on a game: any frame change); records states and targets. */
  #judge(before: Observation | null, now: Observation, step: number, game: boolean): { progress: boolean; changed: ChangedRegion[] } {
    this.#last = now;
    const { state, isNew } = this.#states.visit(now.url, now.hash, step);
    if (isNew && this.explorer.stateScreenshots) void this.#shootState(state.key, this.#states.states.length);
    const fresh = new Set<string>();
    for (const t of now.targets) {
      if (this.#seen.has(t.key)) continue;
      this.#seen.set(t.key, { key: t.key, kind: t.kind, label: t.label, firstSeenStep: step });
      fresh.add(t.key);
    }
    this.#fresh = fresh;
    const newUrl = now.url !== null && !this.#urls.has(now.url);
    if (now.url !== null) this.#urls.add(now.url);
    const size = { width: this.framebuffer()?.width ?? 1, height: this.framebuffer()?.height ?? 1 };
    const changed = before ? changedRegions(before.grid, now.grid, size) : [];
    // With the DOM scanned (not a game), progress is read from the DOM alone: a new URL, a new element, or a new
    // set of elements; the frame's states are recorded for the report. That keeps a seed's actions independent of
    // paint timing. Without CDP, or on a canvas, the frame says it.
    let progress: boolean;
    if (now.scan !== null && !game) {
      const signature = `${now.url}\n${now.targets.map((t) => t.key).join('\n')}`;
      const newDom = !this.#domStates.has(signature);
      this.#domStates.add(signature);
      progress = fresh.size > 0 || newUrl || newDom;
    } else {
      progress = isNew || fresh.size > 0 || newUrl || (game && changed.length > 0);
    }
    return { progress, changed };
  }

  #shots: Promise<unknown> = Promise.resolve();

  /** Screenshot a new state (in order, one at a time, never failing the step). */
  #shootState(key: string, n: number): void {
    this.#shots = this.#shots.then(async () => {
      try {
        this.#stateShots.set(key, await this.#saveScreenshot(`state-${String(n).padStart(3, '0')}`));
      } catch {
        // a state without its screenshot
      }
    });
  }

  /** The next move and the layer that chose it; null when nothing new is reachable. */
  async #decide(): Promise<{ move: Move; layer: ExplorerLayer } | null> {
    const now = this.#last!;
    if (now.frozen) {
      this.#plan = [];
      return { move: this.#recordUnstick('reload', 'the page did not answer over CDP (frozen)'), layer: 'unstick' };
    }
    if (now.offApp) {
      this.#plan = [];
      if (await this.#canGoBack()) {
        this.#log(`explorer: the page left the app for ${now.url} after step ${this.#entries} (blocked by the navigation guard, or another host): going back`);
        const move: Move = { step: { action: 'page_navigation', params: { direction: 'back' } }, strategy: 'unstick.go_back' };
        return { move: this.#noteUnstick('go_back', move, `left the app (${now.url})`), layer: 'unstick' };
      }
    }
    const planned = this.#plan.shift();
    if (planned) return { move: planned, layer: 'heuristic' };
    const candidate = this.#heuristic(now);
    const stuck = this.#noProgress >= this.explorer.stuckAfter;
    if (candidate && !stuck) return { move: this.#begin(candidate), layer: 'heuristic' };
    const fromModel = await this.#askModel(now);
    if (fromModel) {
      this.#noProgress = 0;
      return { move: fromModel, layer: 'model' };
    }
    if (!this.#unsticker.exhausted) {
      const why = candidate ? `no progress for ${this.#noProgress} steps` : 'nothing untried left on this screen';
      const screen = { width: this.framebuffer()?.width ?? 1, height: this.framebuffer()?.height ?? 1 };
      const canGoBack = await this.#canGoBack();
      const u = this.#unsticker.next({ screen, occupied: now.targets.map((t) => t.box), canGoBack });
      this.#noProgress = 0;
      this.#game?.reset();
      return { move: this.#noteUnstick(u.strategy, u.move, why), layer: 'unstick' };
    }
    if (candidate) {
      this.#noProgress = 0;
      return { move: this.#begin(candidate), layer: 'heuristic' };
    }
    return null;
  }

  /** Start a move: a plan's first move is returned, the rest queued. */
  #begin(moves: Move[]): Move {
    this.#plan = moves.slice(1);
    return moves[0]!;
  }

  /** The heuristics' next moves (a plan), or null when nothing untried is left. */
  #heuristic(now: Observation): Move[] | null {
    if (this.#game) {
      if (this.#game.exhausted) return null;
      const canvas = now.scan?.targets.filter((t) => t.kind === 'canvas').sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0];
      const box = canvas?.box ?? { x: 0, y: 0, width: this.framebuffer()?.width ?? 1, height: this.framebuffer()?.height ?? 1 };
      return [this.#game.next(box, REGION_COLS)];
    }
    // A tried target may be acted on again while what it opened has targets still untried (MAX_REVISITS times).
    const revisit = (t: { key: string }) => (this.#revisits.get(t.key) ?? 0) < MAX_REVISITS && [...(this.#opened.get(t.key) ?? [])].some((k) => !this.#tried.has(k));
    const pick = pickTarget(now.targets, this.#tried, this.#fresh, this.#host, now.scan?.dialogOpen ?? false, this.#rand, revisit);
    if (!pick) return null;
    if ('closeDialog' in pick) return [{ step: { action: 'press_keys', params: { keys: 'Escape' } }, strategy: 'dialog.close' }];
    const t = pick.target;
    if (FIELD_KINDS.has(t.kind)) {
      const moves = fillMoves(t);
      if (moves.length) return moves;
    }
    return [{ step: { action: 'mouse_click', params: { position: centre(t.box), button: 'left', click_type: 'single' } }, strategy: pick.strategy, target: t }];
  }

  /** Is there a page of the app to go back to? */
  async #canGoBack(): Promise<boolean> {
    if (!this.#page) return false;
    const h = await this.#page.history(this.signal);
    if (!h || h.index < 1 || !h.previousUrl) return false;
    return this.#host === null ? /^https?:|^file:/.test(h.previousUrl) : hostOf(h.previousUrl) === this.#host;
  }

  #recordUnstick(strategy: UnstickEvent['strategy'], reason: string): Move {
    const move: Move =
      strategy === 'reload'
        ? { step: { action: 'press_keys', params: { keys: 'F5' } }, strategy: 'unstick.reload' }
        : { step: { action: 'press_keys', params: { keys: 'Escape' } }, strategy: 'unstick.escape' };
    return this.#noteUnstick(strategy, move, reason);
  }

  #noteUnstick(strategy: UnstickEvent['strategy'], move: Move, reason: string): Move {
    this.#unstick.push({ step: this.#entries + 1, strategy, reason });
    return move;
  }

  /** Ask the model for a move when it is given and allowed; null otherwise, or when its answer is ignored (logged). */
  async #askModel(now: Observation): Promise<Move | null> {
    const model = this.#model;
    const step = this.#entries + 1;
    if (!model || !modelAllowed(this.#budget, step, this.explorer)) return null;
    this.#budget.calls++;
    this.#budget.lastStep = step;
    const screen = await this.clientResolution();
    let answer: Awaited<ReturnType<NextActionPlanner['next']>>;
    try {
      const screenshotPng = await this.screenshot({ cursor: false });
      answer = await model.next(
        { task: this.task ?? EXPLORE_TASK, screenshotPng, screen, url: now.url, history: this.#steps.slice(-10).map((s) => s.action) },
        { signal: timeoutSignal(this.signal, this.explorer.modelTimeoutMs) },
      );
    } catch (e) {
      if (this.signal.aborted) throw e;
      this.#modelIgnored++;
      const cost = isVncuaError(e) ? Number((e.details as { costUsd?: unknown } | undefined)?.costUsd) : Number.NaN;
      if (Number.isFinite(cost)) this.#budget.costUsd += cost;
      // In the next entry's meta, so result.json counts the call (and its cost, when known) like any model call.
      this.attachMeta({ model_calls: [{ source: 'explorer', ignored: true, ...(Number.isFinite(cost) ? { cost_usd: cost } : {}) }] });
      const code = isVncuaError(e) ? e.code : 'EXPLORER_ERR_MODEL_CALL';
      this.#log(`explorer: ${code}: ${oneLine(e instanceof Error ? e.message : String(e))} (step ${step}; the heuristics go on)`);
      return null;
    }
    if (answer?.costUsd !== undefined) this.#budget.costUsd += answer.costUsd;
    if (answer?.tokens) {
      this.#tokens.input += answer.tokens.input;
      this.#tokens.output += answer.tokens.output;
    }
    this.attachMeta({
      model_calls: [{ source: 'explorer', ...(answer?.tokens ? { tokens: answer.tokens } : {}), ...(answer?.costUsd !== undefined ? { cost_usd: answer.costUsd } : {}) }],
    });
    if (!answer) {
      this.#modelIgnored++;
      return null;
    }
    const problem = modelStepProblem(answer.step, screen);
    if (problem) {
      this.#modelIgnored++;
      this.#log(`explorer: EXPLORER_ERR_MODEL_ANSWER: the model's action is not usable: ${oneLine(problem)} (step ${step}; ignored, the heuristics go on)`);
      return null;
    }
    return { step: answer.step, strategy: 'model.next' };
  }

  async #afterStep(record: ExplorerStep): Promise<void> {
    const ctx = this.#context();
    for (const o of this.#observers) await o.afterStep?.(record, ctx);
    this.#takeFindings();
  }

  #takeFindings(): void {
    for (const o of this.#observers) {
      const f = o.takeFindings?.();
      if (f?.length) this.#findings.push(...f);
    }
  }

  /** End the exploration: observers' finish(), then the Agent's finish with the reason. */
  async #end(reason: ExplorerEndReason): Promise<boolean> {
    this.#endReason = reason;
    this.#durationMs = Math.round(performance.now() - this.#t0);
    await this.#finishObservers();
    // Only what the seed decides goes into the trace (the frame states' count depends on paint timing).
    await this.finish({ reason: `explorer: ${reason.replace('_', ' ')} after ${this.#steps.length} steps` });
    return true;
  }

  async #finishObservers(): Promise<void> {
    if (this.#observersFinished) return;
    this.#observersFinished = true;
    await this.#shots;
    const summary = this.summary();
    const ctx = this.#context();
    for (const o of this.#observers) {
      try {
        await o.finish?.(summary, ctx);
      } catch (e) {
        this.#log(`explorer: an observer's finish() failed: ${oneLine(e instanceof Error ? e.message : String(e))}`);
      }
    }
    this.#takeFindings();
  }

  async #writeSummary(): Promise<void> {
    try {
      await this.#shots;
      await writeFile(join(this.options.outputDir, 'explorer-summary.json'), `${JSON.stringify({ ...this.summary(), findings: this.#findings }, null, 2)}\n`);
    } catch {
      // the run's own files are written; the summary stays available through summary()
    }
  }
}

/** Does `move` click a link to another document than `url` (not just a fragment of it)? */
function leavesDocument(move: Move, url: string | null): boolean {
  const href = move.target?.kind === 'link' ? move.target.href : undefined;
  if (!href || url === null || move.continues) return false;
  return href.split('#')[0] !== url.split('#')[0];
}

/** `s` on one line, cut to 300 characters. */
function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 297)}...` : t;
}
