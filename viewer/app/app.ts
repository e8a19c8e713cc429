/**
 * The vncua serve page (plain DOM, no framework; compiled by esbuild on the server). Two views chosen by
 * the URL: the run list (`./?agent=…&q=…`) and one run's trace viewer (`./?run=<dir>&t=<epoch ms>`), so
 * either can be shared as a link. Frames come from api/frame as raw RGB and are put on the canvas
 * unchanged (no image decoding or colour management in between: the canvas holds the replayed pixels).
 * A third view compares two runs of one task (`./?compare=<dir>&with=<dir>`, viewer/app/compare.ts).
 * Bundled by esbuild on the server (viewer/server.ts) with its imports from this directory.
 */
import { esc, putRgb, secs, statusOf, usd } from './common.ts';
import { offerCompare, pickForCompare, showCompare } from './compare.ts';

import { type Entry, stepHtml } from './steps.ts';

interface Row {
  dir: string;
  suite: string;
  agent: string;
  resolution: string;
  task_id: string;
  group: string;
  repeat: number;
  status: string;
  success: boolean;
  steps_performed: number;
  duration_ms: number | null;
  task: string | null;
  infra_error: boolean;
  invalid: unknown;
  stopped?: string | null;
  reason?: string | null;
  recorded: boolean;
  model_calls?: number | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost_usd?: number | null;
}
interface Damage {
  code: string;
  until: number;
  reason: string;
  message: string;
}
interface Detail {
  dir: string;
  row: Row | null;
  entries: Entry[];
  traceError: { code: string; message: string } | null;
  result: { status?: string; reason?: string; error?: { code: string; message: string }; success_at?: number } | null;
  recording: { start: number | null; end: number | null; warnings: Array<{ code: string; message: string }>; damage: Damage | null } | null;
  noRecording: { code: string; message: string } | null;
}

const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector(sel) as T;
const params = new URLSearchParams(location.search);

/** `$1.23`, or 3 significant digits under a dollar (`$0.0185`). */
/** A run's model cost and tokens (result.json's totals); empty for runs without model calls. */
function costCell(r: Row): string {
  if (!r.model_calls) return '<td class="cost"></td>';
  const tokens = r.input_tokens == null ? '' : `${r.input_tokens} in / ${r.output_tokens} out tokens`;
  const title = `${r.model_calls} model calls${tokens ? `, ${tokens}` : ''}${r.cost_usd == null ? ", not priced (see the run's price_notes)" : ''}`;
  return `<td class="cost" title="${esc(title)}">${r.cost_usd == null ? '–' : usd(r.cost_usd)}${tokens ? `<small> ${esc(tokens)}</small>` : ''}</td>`;
}

// ---------------------------------------------------------------- run list
const FILTERS = ['suite', 'agent', 'resolution', 'group', 'status'] as const;

async function showList(): Promise<void> {
  $('#list-view').hidden = false;
  const q = $<HTMLInputElement>('#q');
  q.value = params.get('q') ?? '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reload = () => {
    const p = new URLSearchParams();
    if (q.value) p.set('q', q.value);
    for (const f of FILTERS) {
      const v = $<HTMLSelectElement>(`#f-${f}`).value;
      if (v) p.set(f, v);
    }
    history.replaceState(null, '', `./${p.size ? `?${p}` : ''}`);
    void loadRuns(p);
  };
  q.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(reload, 150);
  });
  for (const f of FILTERS) $(`#f-${f}`).addEventListener('change', reload);
  const p = new URLSearchParams();
  for (const k of ['q', ...FILTERS]) if (params.get(k)) p.set(k, params.get(k)!);
  await loadRuns(p, true);
}

let facetsFilled = '';
async function loadRuns(p: URLSearchParams, first = false): Promise<void> {
  const res = await fetch(`api/runs?${p}`);
  const data = (await res.json()) as {
    runs: Row[];
    total: number;
    facets: Record<string, string[]>;
    by_agent: Array<{ agent: string; runs: number; successes: number; success_rate: number | null }>;
    empty: { code: string; message: string } | null;
  };
  // The filters' values: filled once, again when runs that started since bring new ones (the choice kept).
  const facetsKey = JSON.stringify(FILTERS.map((f) => data.facets[f] ?? []));
  if (facetsKey !== facetsFilled) {
    for (const f of FILTERS) {
      const sel = $<HTMLSelectElement>(`#f-${f}`);
      const chosen = sel.value;
      sel.length = 1;
      for (const v of data.facets[f] ?? []) sel.add(new Option(v, v));
      sel.value = first && params.get(f) ? params.get(f)! : chosen;
    }
    facetsFilled = facetsKey;
  }
  const empty = $('#empty');
  empty.hidden = !data.empty;
  if (data.empty) empty.innerHTML = `<b>${esc(data.empty.code)}</b>: ${esc(data.empty.message)}`;
  $('#summary').textContent =
    `${data.runs.length} of ${data.total} runs` +
    (data.by_agent.length
      ? ` — ${data.by_agent.map((a) => `${a.agent}: ${a.successes}/${a.runs} success${a.success_rate == null ? '' : ` (${Math.round(a.success_rate * 100)}%)`}`).join('; ')}`
      : '');
  const body = $('#runs tbody');
  body.innerHTML = data.runs
    .map((r) => {
      const st = statusOf(r);
      const href = `./?run=${encodeURIComponent(r.dir)}`;
      return `<tr data-dir="${esc(r.dir)}"><td>${esc(r.suite)}</td><td>${esc(r.agent)}</td><td>${esc(r.resolution)}</td><td><a href="${href}">${esc(r.task_id)}</a></td><td>${esc(r.group)}</td><td>${r.repeat}</td><td class="st-${st}">${st}</td><td>${r.steps_performed}</td><td>${secs(r.duration_ms)}</td>${costCell(r)}<td class="text" title="${esc(r.task ?? '')}">${esc(r.task ?? '')}</td></tr>`;
    })
    .join('');
  pickForCompare(data.runs);
  body.dataset.loaded = String(Date.now());
  document.body.dataset.ready = 'list';
}

// ---------------------------------------------------------------- trace viewer
interface Player {
  dir: string;
  entries: Entry[];
  start: number;
  end: number;
  t: number;
  speed: number;
  playing: boolean;
  damageUntil: number | null;
}

async function showRun(dir: string): Promise<void> {
  $('#run-view').hidden = false;
  $('#crumb').textContent = dir;
  const res = await fetch(`api/run?dir=${encodeURIComponent(dir)}`);
  const d = (await res.json()) as Detail & { code?: string; message?: string };
  const notice = $('#run-notice');
  const say = (html: string) => {
    notice.hidden = false;
    notice.innerHTML += `<div>${html}</div>`;
  };
  if (!res.ok) {
    say(`<b>${esc(d.code ?? 'error')}</b>: ${esc(d.message ?? '')} <a href="./">all runs</a>`);
    document.body.dataset.ready = 'run';
    return;
  }
  const r = d.row;
  $('#run-head').innerHTML = r
    ? `<b>${esc(r.task_id)}</b> — ${esc(r.agent)} ${esc(r.resolution)} — <span class="st-${statusOf(r)}">${statusOf(r)}</span> — ${r.steps_performed} steps, ${secs(r.duration_ms)}<div>${esc(r.task ?? '')}</div>`
    : esc(dir);
  void offerCompare(dir);
  if (d.traceError) say(`<b>${esc(d.traceError.code)}</b>: ${esc(d.traceError.message)}`);
  if (d.noRecording) say(`<b>${esc(d.noRecording.code)}</b>: ${esc(d.noRecording.message)}`);
  // Why the agent stopped (a stop status, cost_cap): the status and the agent's or the model's reason.
  if (r?.stopped) say(`stopped: <b class="st-${esc(r.stopped)}">${esc(r.stopped)}</b>${d.result?.reason ? `: ${esc(d.result.reason)}` : ''}`);
  if (d.result?.error) say(`run error <b>${esc(d.result.error.code)}</b>: ${esc(d.result.error.message)}`);
  const times = d.entries.flatMap((e) => [e.started_at, e.ended_at]).filter((x): x is number => typeof x === 'number');
  const start = Math.min(d.recording?.start ?? Infinity, ...times);
  const end = Math.max(d.recording?.end ?? -Infinity, ...times, start + 1);
  const p: Player = { dir, entries: d.entries, start, end, t: start, speed: 1, playing: false, damageUntil: null };
  const showDamage = (dm: Damage | null) => {
    if (!dm || p.damageUntil !== null) return;
    p.damageUntil = dm.until;
    say(`<b>${esc(dm.code)}</b>: ${esc(dm.message)}`);
    const zone = $('#damage-zone');
    zone.hidden = false;
    zone.style.left = `${pct(p, dm.until)}%`;
    zone.title = `damaged from ${new Date(dm.until).toISOString()}`;
  };
  showDamage(d.recording?.damage ?? null);
  renderSteps(p);
  renderMarkers(p);
  wireControls(p);
  const t0 = Number(params.get('t'));
  const firstT = d.entries.find((e) => typeof e.started_at === 'number')?.started_at ?? start;
  await seek(p, Number.isFinite(t0) && params.has('t') ? t0 : firstT, false);
  document.body.dataset.ready = 'run';
  // The seek index is built in the background: damage found by decoding shows up when it completes.
  if (d.recording) {
    for (;;) {
      const ix = (await (await fetch(`api/index?dir=${encodeURIComponent(dir)}`)).json()) as { complete: boolean; damage: Damage | null };
      showDamage(ix.damage);
      if (ix.complete) break;
      await new Promise((res2) => setTimeout(res2, 700));
    }
    document.body.dataset.indexed = '1';
  }
}

const pct = (p: Player, t: number) => (100 * (t - p.start)) / (p.end - p.start);

function renderMarkers(p: Player): void {
  const firstOk = p.entries.find((e) => e.task_marked_complete === true);
  $('#track').innerHTML = p.entries
    .filter((e) => typeof e.started_at === 'number')
    .map((e) => {
      const cls = e === firstOk ? 'first-success' : e.error ? 'err' : e.task_marked_complete === true ? 'ok' : e.action === 'finish' ? 'done' : '';
      const tip = `#${e.index} ${e.action}${e.error ? ` — ${e.error.code}` : ''}${e === firstOk ? ' — first success' : ''}`;
      return `<div class="marker ${cls}" data-index="${e.index}" style="left:${pct(p, e.started_at!)}%" title="${esc(tip)}"></div>`;
    })
    .join('');
}

function renderSteps(p: Player): void {
  $('#steps').innerHTML = p.entries.map(stepHtml).join('');
  $('#steps').addEventListener('click', (ev) => {
    const el = (ev.target as HTMLElement).closest('.step') as HTMLElement | null;
    if (el) void goStep(p, Number(el.dataset.index));
  });
}

function currentStep(p: Player): number {
  let cur = -1;
  for (const e of p.entries) if (typeof e.started_at === 'number' && e.started_at <= p.t) cur = e.index;
  return cur;
}

async function goStep(p: Player, index: number): Promise<void> {
  const e = p.entries[index];
  if (!e || typeof e.started_at !== 'number') return;
  p.playing = false;
  $('#play').textContent = 'play';
  await seek(p, e.started_at);
}

let inflight: Promise<void> | null = null;
let wanted: number | null = null;

/** Show the frame at `t` (requests are coalesced: while one is in flight only the latest instant asked is fetched next). */
async function seek(p: Player, t: number, push = true): Promise<void> {
  p.t = Math.max(p.start, Math.min(p.end, t));
  $('#playhead').style.left = `${pct(p, p.t)}%`;
  $('#time').textContent = `${((p.t - p.start) / 1000).toFixed(3)} s / ${((p.end - p.start) / 1000).toFixed(1)} s`;
  const cur = currentStep(p);
  for (const el of Array.from(document.querySelectorAll('.step.current, .marker.current'))) el.classList.remove('current');
  if (cur >= 0) {
    document.getElementById(`step-${cur}`)?.classList.add('current');
    document.querySelector(`.marker[data-index="${cur}"]`)?.classList.add('current');
    if (!p.playing) document.getElementById(`step-${cur}`)?.scrollIntoView({ block: 'nearest' });
  }
  $('#steps').dataset.current = String(cur);
  if (push) {
    const q = new URLSearchParams({ run: p.dir, t: p.t.toFixed(3) });
    history.replaceState(null, '', `./?${q}`);
  }
  $<HTMLAnchorElement>('#png').href = `api/frame.png?dir=${encodeURIComponent(p.dir)}&t=${p.t}`;
  wanted = p.t;
  if (!inflight) {
    inflight = (async () => {
      while (wanted !== null) {
        const at = wanted;
        wanted = null;
        await draw(p, at);
      }
    })().finally(() => {
      inflight = null;
    });
  }
  await inflight;
}

async function draw(p: Player, t: number): Promise<void> {
  const res = await fetch(`api/frame?dir=${encodeURIComponent(p.dir)}&t=${t}`);
  const canvas = $<HTMLCanvasElement>('#screen');
  if (res.status === 204 || !res.ok) {
    $('#no-frame').hidden = false;
    canvas.dataset.frame = res.ok ? 'none' : 'error';
    canvas.dataset.t = String(t);
    return;
  }
  putRgb(canvas, Number(res.headers.get('x-width')), Number(res.headers.get('x-height')), new Uint8Array(await res.arrayBuffer()));
  $('#no-frame').hidden = true;
  const stale = res.headers.get('x-stale-reason');
  const known = Number(res.headers.get('x-known-until'));
  $('#stale').textContent = stale ? `older frame (${stale}): the recording shows nothing after ${((known - p.start) / 1000).toFixed(3)} s` : '';
  canvas.dataset.frame = stale ? `stale-${stale}` : 'ok';
  canvas.dataset.t = String(t);
}

function wireControls(p: Player): void {
  const tl = $('#timeline');
  const at = (ev: PointerEvent) => {
    const r = tl.getBoundingClientRect();
    return p.start + ((ev.clientX - r.left) / r.width) * (p.end - p.start);
  };
  tl.addEventListener('pointerdown', (ev) => {
    tl.setPointerCapture(ev.pointerId);
    p.playing = false;
    $('#play').textContent = 'play';
    void seek(p, at(ev));
    const move = (e2: PointerEvent) => void seek(p, at(e2));
    const up = () => {
      tl.removeEventListener('pointermove', move);
      tl.removeEventListener('pointerup', up);
    };
    tl.addEventListener('pointermove', move);
    tl.addEventListener('pointerup', up);
  });
  for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>('#speeds button'))) {
    b.addEventListener('click', () => {
      p.speed = Number(b.dataset.speed);
      for (const o of Array.from(document.querySelectorAll('#speeds button'))) o.classList.toggle('on', o === b);
    });
  }
  const play = () => {
    p.playing = !p.playing;
    $('#play').textContent = p.playing ? 'pause' : 'play';
    if (!p.playing) return;
    if (p.t >= p.end) p.t = p.start;
    let last = performance.now();
    const tick = (now: number) => {
      if (!p.playing) return;
      const dt = (now - last) * p.speed;
      last = now;
      void seek(p, p.t + dt, false);
      if (p.t >= p.end) {
        p.playing = false;
        $('#play').textContent = 'play';
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
  $('#play').addEventListener('click', play);
  document.addEventListener('keydown', (ev) => {
    if ((ev.target as HTMLElement).tagName === 'INPUT') return;
    const cur = currentStep(p);
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown' || ev.key === 'j') {
      ev.preventDefault();
      const next = p.entries.find((e) => e.index > cur && typeof e.started_at === 'number');
      if (next) void goStep(p, next.index);
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp' || ev.key === 'k') {
      ev.preventDefault();
      const prev = [...p.entries].reverse().find((e) => e.index < cur && typeof e.started_at === 'number');
      void goStep(p, prev ? prev.index : Math.max(0, cur));
    } else if (ev.key === ' ') {
      ev.preventDefault();
      play();
    }
  });
}

/** A live run gets the live view (viewer/app/live.ts, loaded only then); a finished one the trace viewer. */
async function open(dir: string): Promise<void> {
  const live = await fetch(`api/live/run?dir=${encodeURIComponent(dir)}`)
    .then((r) => (r.ok ? (r.json() as Promise<{ run: unknown }>) : { run: null }))
    .catch(() => ({ run: null }));
  if (live.run) (await import('./live.ts')).showLive(dir);
  else await showRun(dir);
}

const run = params.get('run');
const compare = params.get('compare');
if (compare) void showCompare(compare, params.get('with') ?? '', Number(params.get('row') ?? 0));
else if (run) void open(run);
else {
  void showList();
  // Running workers as live tiles over the list; the table reloads when one starts or ends.
  void import('./live.ts').then((m) => m.showLiveTiles($('#list-view'), () => void loadRuns(new URLSearchParams(location.search))));
}
