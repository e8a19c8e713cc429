/**
 * The compare view of vncua serve (`./?compare=<run dir>&with=<run dir>&row=<k>`: a link names both
 * runs and the aligned row shown): two runs of one task side by side, each with its canvas and
 * timeline, and their steps aligned by api/compare (viewer/align.ts: a step one run took and the other
 * did not is a gap). Choosing a row moves both canvases to the start of that row's steps; dragging
 * either timeline moves the other to the same point of its own sequence (viewer/app/warp.ts); ←/→
 * (or j/k) go row by row, Space plays both. Also the ways in: two runs of one task picked in the run
 * list (pickForCompare), and "compare with…" on a run's page (offerCompare).
 */
import { esc, putRgb, secs, statusOf } from './common.ts';
import { warpPoints, warpTime } from './warp.ts';

/** What the view reads of a trace entry. */
interface Step {
  index: number;
  action: string;
  params: Record<string, unknown>;
  task_marked_complete: boolean | null;
  started_at?: number;
  ended_at?: number;
  duration_ms?: number;
  error?: { code: string; message: string };
}
/** What the view reads of a listed run. */
interface ListedRow {
  dir: string;
  suite: string;
  agent: string;
  resolution: string;
  task_id: string;
  repeat: number;
  status: string;
  success: boolean;
  steps_performed: number;
  duration_ms: number | null;
  task: string | null;
  infra_error: boolean;
  invalid: unknown;
}
interface Notice {
  code: string;
  message: string;
}
/** One run as api/run (and each side of api/compare) gives it. */
interface RunDetail {
  dir: string;
  row: ListedRow | null;
  entries: Step[];
  traceError: Notice | null;
  result: { status?: string; error?: Notice } | null;
  recording: { start: number | null; end: number | null; damage: (Notice & { until: number }) | null } | null;
  noRecording: Notice | null;
}
type Kind = 'same' | 'similar' | 'different' | 'only_a' | 'only_b';
interface Row {
  a: number | null;
  b: number | null;
  kind: Kind;
}
interface Comparison {
  a: RunDetail;
  b: RunDetail;
  rows: Row[];
  counts: Record<Kind, number>;
}

const KIND_LABEL: Record<Kind, string> = { same: '=', similar: '≈', different: '≠', only_a: 'A only', only_b: 'B only' };

/** One side: its run, its timeline's extent, the instant shown, and its elements. */
interface Pane {
  key: 'a' | 'b';
  run: RunDetail;
  start: number;
  end: number;
  t: number;
  canvas: HTMLCanvasElement;
  el: HTMLElement;
  /** Frame requests are coalesced: while one is in flight only the latest instant asked is fetched next. */
  inflight: Promise<void> | null;
  wanted: number | null;
}

const runLink = (dir: string, t?: number) => `./?run=${encodeURIComponent(dir)}${t === undefined ? '' : `&t=${t}`}`;
const compareLink = (a: string, b: string, row?: number) => `./?compare=${encodeURIComponent(a)}&with=${encodeURIComponent(b)}${row === undefined ? '' : `&row=${row}`}`;

function extentOf(r: RunDetail): { start: number; end: number } {
  const times = r.entries.flatMap((e) => [e.started_at, e.ended_at]).filter((x): x is number => typeof x === 'number');
  const start = Math.min(r.recording?.start ?? Infinity, ...times);
  const end = Math.max(r.recording?.end ?? -Infinity, ...times, start + 1);
  return Number.isFinite(start) ? { start, end } : { start: 0, end: 1 };
}

function paneHtml(key: 'a' | 'b'): string {
  return `<section class="cmp-pane" id="pane-${key}">
    <div class="cmp-head"></div>
    <div class="screen-wrap"><canvas id="screen-${key}" width="1280" height="800"></canvas><div class="no-frame" hidden>no frame yet at this instant</div></div>
    <div class="timeline"><div class="track"></div><div class="damage-zone" hidden></div><div class="playhead"></div></div>
    <div class="pane-time"></div><div class="pane-stale"></div>
  </section>`;
}

function headHtml(key: 'a' | 'b', r: RunDetail): string {
  const row = r.row;
  const st = row ? statusOf(row) : 'unknown';
  const verdicts = r.entries.filter((e) => e.task_marked_complete === true).length;
  const firstOk = r.entries.find((e) => e.task_marked_complete === true);
  const errors = r.entries.filter((e) => e.error).length;
  const notes = [
    r.result?.error ? `run error <b>${esc(r.result.error.code)}</b>: ${esc(r.result.error.message)}` : '',
    r.traceError ? `<b>${esc(r.traceError.code)}</b>: ${esc(r.traceError.message)}` : '',
    r.noRecording ? `<b>${esc(r.noRecording.code)}</b>: ${esc(r.noRecording.message)}` : '',
    r.recording?.damage ? `<b>${esc(r.recording.damage.code)}</b>: ${esc(r.recording.damage.message)}` : '',
  ].filter(Boolean);
  return `<div class="cmp-title"><span class="cmp-key">${key.toUpperCase()}</span> <a href="${runLink(r.dir)}">${esc(r.dir)}</a></div>
    <div>${row ? `${esc(row.agent)} — ${esc(row.resolution)}${row.repeat > 1 ? ` — attempt ${row.repeat}` : ''} — ` : ''}<span class="st-${st}">${st}</span> — ${r.entries.length} steps${row ? `, ${secs(row.duration_ms)}` : ''}
    — ${verdicts ? `complete at step #${firstOk!.index}` : 'never complete'}${errors ? ` — <span class="err">${errors} failed step${errors === 1 ? '' : 's'}</span>` : ''}</div>
    ${notes.map((n) => `<div class="notice">${n}</div>`).join('')}`;
}

function stepCell(e: Step | undefined): string {
  if (!e) return '<td class="gap">no step</td>';
  const verdict = e.task_marked_complete === null ? '' : `<span class="verdict-${e.task_marked_complete}">${e.task_marked_complete ? 'complete' : 'not complete'}</span>`;
  const err = e.error ? `<div class="err">${esc(e.error.code)}: ${esc(e.error.message)}</div>` : '';
  return `<td class="cmp-step"><span class="act">#${e.index} ${esc(e.action)}</span> ${e.duration_ms == null ? '' : `${e.duration_ms.toFixed(0)} ms`} ${verdict}<div class="params">${esc(JSON.stringify(e.params))}</div>${err}</td>`;
}

function markersHtml(p: Pane): string {
  const firstOk = p.run.entries.find((e) => e.task_marked_complete === true);
  return p.run.entries
    .filter((e) => typeof e.started_at === 'number')
    .map((e) => {
      const cls = e === firstOk ? 'first-success' : e.error ? 'err' : e.task_marked_complete === true ? 'ok' : e.action === 'finish' ? 'done' : '';
      return `<div class="marker ${cls}" data-index="${e.index}" style="left:${pct(p, e.started_at!)}%" title="${esc(`#${e.index} ${e.action}`)}"></div>`;
    })
    .join('');
}

const pct = (p: Pane, t: number) => (100 * (t - p.start)) / (p.end - p.start);

/** Fetch and paint the frame at `t` on the pane's canvas (data-t and data-frame say what is shown). */
async function draw(p: Pane, t: number): Promise<void> {
  const res = await fetch(`api/frame?dir=${encodeURIComponent(p.run.dir)}&t=${t}`);
  const noFrame = p.el.querySelector<HTMLElement>('.no-frame')!;
  const stale = p.el.querySelector<HTMLElement>('.pane-stale')!;
  if (res.status === 204 || !res.ok) {
    noFrame.hidden = false;
    stale.textContent = '';
    p.canvas.dataset.frame = res.ok ? 'none' : 'error';
    p.canvas.dataset.t = String(t);
    return;
  }
  putRgb(p.canvas, Number(res.headers.get('x-width')), Number(res.headers.get('x-height')), new Uint8Array(await res.arrayBuffer()));
  noFrame.hidden = true;
  const why = res.headers.get('x-stale-reason');
  const known = Number(res.headers.get('x-known-until'));
  stale.textContent = why ? `older frame (${why}): the recording shows nothing after ${((known - p.start) / 1000).toFixed(3)} s` : '';
  p.canvas.dataset.frame = why ? `stale-${why}` : 'ok';
  p.canvas.dataset.t = String(t);
}

/** Move a pane to `t`: playhead, time, current marker, then the frame. */
function seekPane(p: Pane, t: number): Promise<void> {
  p.t = Math.max(p.start, Math.min(p.end, t));
  p.el.querySelector<HTMLElement>('.playhead')!.style.left = `${pct(p, p.t)}%`;
  p.el.querySelector<HTMLElement>('.pane-time')!.textContent = `${((p.t - p.start) / 1000).toFixed(3)} s / ${((p.end - p.start) / 1000).toFixed(1)} s`;
  let cur = -1;
  for (const e of p.run.entries) if (typeof e.started_at === 'number' && e.started_at <= p.t) cur = e.index;
  for (const m of Array.from(p.el.querySelectorAll('.marker.current'))) m.classList.remove('current');
  p.el.querySelector(`.marker[data-index="${cur}"]`)?.classList.add('current');
  p.wanted = p.t;
  p.inflight ??= (async () => {
    while (p.wanted !== null) {
      const at = p.wanted;
      p.wanted = null;
      await draw(p, at);
    }
  })().finally(() => {
    p.inflight = null;
  });
  return p.inflight;
}

/** Show the comparison of runs `a` and `b`, at aligned row `row`. */
export async function showCompare(a: string, b: string, row: number): Promise<void> {
  const view = document.querySelector<HTMLElement>('#compare-view')!;
  view.hidden = false;
  document.querySelector('#crumb')!.textContent = `compare ${a} with ${b}`;
  const res = await fetch(`api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  const data = (await res.json()) as Comparison & Partial<Notice>;
  if (!res.ok) {
    view.innerHTML = `<div class="notice" id="cmp-error"><b>${esc(data.code ?? 'error')}</b>: ${esc(data.message ?? '')} <a href="./">all runs</a></div>`;
    document.body.dataset.ready = 'compare';
    return;
  }
  const c = data;
  view.innerHTML = `<div id="cmp-task"><b>${esc(c.a.row?.task_id ?? '')}</b> ${esc(c.a.row?.task ?? '')}</div>
    <div id="cmp-panes">${paneHtml('a')}${paneHtml('b')}</div>
    <div id="cmp-controls"><button id="cmp-play" type="button">play</button>
      <span id="cmp-speeds"><button type="button" data-speed="1" class="on">1x</button><button type="button" data-speed="2">2x</button><button type="button" data-speed="4">4x</button><button type="button" data-speed="8">8x</button></span>
      <span id="cmp-counts">${(Object.keys(KIND_LABEL) as Kind[])
        .filter((k) => c.counts[k] > 0)
        .map((k) => `<span class="kind-${k}">${c.counts[k]} ${k.replace('_', ' ')}</span>`)
        .join(' · ')}</span>
      <a id="cmp-swap" href="${compareLink(b, a, row)}">swap sides</a></div>
    <table id="cmp-rows"><thead><tr><th>row</th><th>A: ${esc(c.a.row?.agent ?? c.a.dir)}</th><th></th><th>B: ${esc(c.b.row?.agent ?? c.b.dir)}</th></tr></thead><tbody>${c.rows
      .map(
        (r, k) =>
          `<tr class="cmp-row kind-${r.kind}" id="cmp-row-${k}" data-row="${k}"><td>${k}</td>${stepCell(r.a === null ? undefined : c.a.entries[r.a])}<td class="kind" title="${r.kind}">${KIND_LABEL[r.kind]}</td>${stepCell(r.b === null ? undefined : c.b.entries[r.b])}</tr>`,
      )
      .join('')}</tbody></table>`;
  const pane = (key: 'a' | 'b'): Pane => {
    const run = c[key];
    const { start, end } = extentOf(run);
    const el = view.querySelector<HTMLElement>(`#pane-${key}`)!;
    el.querySelector('.cmp-head')!.innerHTML = headHtml(key, run);
    const p: Pane = { key, run, start, end, t: start, canvas: el.querySelector('canvas')!, el, inflight: null, wanted: null };
    p.canvas.dataset.start = String(start);
    p.canvas.dataset.end = String(end);
    el.querySelector('.track')!.innerHTML = markersHtml(p);
    const dm = run.recording?.damage;
    if (dm) {
      const zone = el.querySelector<HTMLElement>('.damage-zone')!;
      zone.hidden = false;
      zone.style.left = `${pct(p, dm.until)}%`;
      zone.title = `damaged from ${new Date(dm.until).toISOString()}`;
    }
    return p;
  };
  const A = pane('a');
  const B = pane('b');
  const ab = warpPoints(c.rows, c.a.entries, c.b.entries);
  const ba = ab.map(([x, y]) => [y, x] as [number, number]);
  const stepAt = (p: Pane, index: number | null) => (index === null ? undefined : p.run.entries[index]?.started_at);
  let current = -1;
  let playing = false;
  let speed = 1;

  const markRow = (k: number, scroll: boolean) => {
    current = k;
    for (const el of Array.from(view.querySelectorAll('.cmp-row.current'))) el.classList.remove('current');
    const tr = view.querySelector(`#cmp-row-${k}`);
    tr?.classList.add('current');
    if (scroll) tr?.scrollIntoView({ block: 'nearest' });
    view.querySelector<HTMLElement>('#cmp-rows')!.dataset.current = String(k);
    history.replaceState(null, '', compareLink(c.a.dir, c.b.dir, k));
    view.querySelector<HTMLAnchorElement>('#cmp-swap')!.href = compareLink(c.b.dir, c.a.dir, k);
  };
  /** The row whose step on `p`'s side is the last one started by `t` (for a drag or play). */
  const rowAt = (p: Pane, t: number) => {
    let k = 0;
    c.rows.forEach((r, i) => {
      const s = stepAt(p, r[p.key]);
      if (s !== undefined && s <= t) k = i;
    });
    return k;
  };
  /** Both canvases at row k: each side at the start of its step; a side with no step there at the instant the warp gives. */
  const goRow = async (k: number) => {
    if (k < 0 || k >= c.rows.length) return;
    playing = false;
    view.querySelector('#cmp-play')!.textContent = 'play';
    markRow(k, true);
    const r = c.rows[k]!;
    const sa = stepAt(A, r.a);
    const sb = stepAt(B, r.b);
    const ta = sa ?? (sb !== undefined ? warpTime(ba, sb) : A.start);
    const tb = sb ?? (sa !== undefined ? warpTime(ab, sa) : B.start);
    await Promise.all([seekPane(A, ta), seekPane(B, tb)]);
  };
  /** One side moved to `t` (drag, play): the other follows through the warp. */
  const follow = (from: Pane, t: number) => {
    const [other, pts] = from === A ? [B, ab] : [A, ba];
    void seekPane(from, t);
    void seekPane(other, warpTime(pts, from.t));
    const k = rowAt(from, from.t);
    if (k !== current) markRow(k, !playing);
  };

  for (const p of [A, B]) {
    const tl = p.el.querySelector<HTMLElement>('.timeline')!;
    const at = (ev: PointerEvent) => {
      const r = tl.getBoundingClientRect();
      return p.start + ((ev.clientX - r.left) / r.width) * (p.end - p.start);
    };
    tl.addEventListener('pointerdown', (ev) => {
      tl.setPointerCapture(ev.pointerId);
      playing = false;
      view.querySelector('#cmp-play')!.textContent = 'play';
      follow(p, at(ev));
      const move = (e2: PointerEvent) => follow(p, at(e2));
      const up = () => {
        tl.removeEventListener('pointermove', move);
        tl.removeEventListener('pointerup', up);
      };
      tl.addEventListener('pointermove', move);
      tl.addEventListener('pointerup', up);
    });
  }
  view.querySelector('#cmp-rows tbody')!.addEventListener('click', (ev) => {
    const tr = (ev.target as HTMLElement).closest('tr') as HTMLElement | null;
    if (tr) void goRow(Number(tr.dataset.row));
  });
  for (const btn of Array.from(view.querySelectorAll<HTMLButtonElement>('#cmp-speeds button'))) {
    btn.addEventListener('click', () => {
      speed = Number(btn.dataset.speed);
      for (const o of Array.from(view.querySelectorAll('#cmp-speeds button'))) o.classList.toggle('on', o === btn);
    });
  }
  const play = () => {
    playing = !playing;
    view.querySelector('#cmp-play')!.textContent = playing ? 'pause' : 'play';
    if (!playing) return;
    if (A.t >= A.end) follow(A, A.start);
    let last = performance.now();
    const tick = (now: number) => {
      if (!playing) return;
      follow(A, A.t + (now - last) * speed);
      last = now;
      if (A.t >= A.end) {
        playing = false;
        view.querySelector('#cmp-play')!.textContent = 'play';
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
  view.querySelector('#cmp-play')!.addEventListener('click', play);
  document.addEventListener('keydown', (ev) => {
    if ((ev.target as HTMLElement).tagName === 'INPUT') return;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown' || ev.key === 'j') {
      ev.preventDefault();
      void goRow(current + 1);
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp' || ev.key === 'k') {
      ev.preventDefault();
      void goRow(current - 1);
    } else if (ev.key === ' ') {
      ev.preventDefault();
      play();
    }
  });
  await goRow(Number.isInteger(row) && row >= 0 && row < c.rows.length ? row : 0);
  document.body.dataset.ready = 'compare';
}

/** On a run's page: "compare with…", the other runs of its task (other agents, attempts, suites), each a link to the comparison. */
export async function offerCompare(dir: string): Promise<void> {
  const res = await fetch(`api/related?dir=${encodeURIComponent(dir)}`);
  if (!res.ok) return;
  const data = (await res.json()) as { runs: ListedRow[] };
  const box = document.createElement('div');
  box.id = 'compare-with';
  box.dataset.count = String(data.runs.length);
  box.innerHTML = data.runs.length
    ? `compare with… ${data.runs
        .map((r) => {
          const st = statusOf(r);
          return `<a class="cmp-link" data-dir="${esc(r.dir)}" href="${compareLink(dir, r.dir)}">${esc(r.agent)} ${esc(r.resolution)}${r.repeat > 1 ? ` #${r.repeat}` : ''}${r.suite !== '.' ? ` (${esc(r.suite)})` : ''} <span class="st-${st}">${st}</span></a>`;
        })
        .join(' ')}`
    : '<span class="muted">no other run of this task to compare with</span>';
  document.querySelector('#run-head')?.after(box);
}

/** The runs picked in the list (kept across filter changes), and every listed run seen. */
const picked: string[] = [];
const seen = new Map<string, ListedRow>();

/**
 * In the run list (after each render): a checkbox per run; two runs of one task picked make the
 * "compare" link (runs of other tasks cannot be picked once one is).
 */
export function pickForCompare(runs: ListedRow[]): void {
  const table = document.querySelector<HTMLTableElement>('#runs')!;
  for (const r of runs) seen.set(r.dir, r);
  let bar = document.querySelector<HTMLElement>('#compare-bar');
  if (!bar) {
    bar = document.createElement('div');
    bar.id = 'compare-bar';
    table.before(bar);
    const th = document.createElement('th');
    th.textContent = 'compare';
    table.querySelector('thead tr')!.prepend(th);
    table.querySelector('tbody')!.addEventListener('change', (ev) => {
      const box = ev.target as HTMLInputElement;
      if (!box.classList.contains('pick')) return;
      const i = picked.indexOf(box.value);
      if (box.checked && i < 0) {
        picked.push(box.value);
        if (picked.length > 2) picked.shift();
      } else if (!box.checked && i >= 0) picked.splice(i, 1);
      update();
    });
  }
  const update = () => {
    const task = picked.length ? seen.get(picked[0]!)?.task_id : undefined;
    for (const box of Array.from(table.querySelectorAll<HTMLInputElement>('input.pick'))) {
      box.checked = picked.includes(box.value);
      box.disabled = task !== undefined && seen.get(box.value)?.task_id !== task;
    }
    bar!.innerHTML =
      picked.length === 2
        ? `<a id="compare-picked" href="${compareLink(picked[0]!, picked[1]!)}">compare ${esc(picked[0]!)} with ${esc(picked[1]!)}</a>`
        : `<span class="muted">${picked.length === 1 ? `pick another run of ${esc(task ?? '')} to compare` : 'pick two runs of one task to compare them side by side'}</span>`;
  };
  for (const tr of Array.from(table.querySelectorAll<HTMLTableRowElement>('tbody tr[data-dir]'))) {
    const td = document.createElement('td');
    td.innerHTML = `<input type="checkbox" class="pick" value="${esc(tr.dataset.dir!)}" title="compare">`;
    tr.prepend(td);
  }
  update();
}
