/**
 * The live views of the vncua serve page (loaded by app.ts only when a run is live): one live run
 * (`./?run=<dir>` while it runs) with its desktop through noVNC (`@novnc/novnc`, view-only by default, scaled to
 * fit), its steps as they are written, its status, and Take over / Hand back; and the live tiles over the run list,
 * one noVNC thumbnail per running worker. Everything goes through vncua serve (api/live/...): the page never learns
 * a run's endpoint or token. When a run ends its page turns into the recorded trace viewer (a reload).
 */
import RFB from '@novnc/novnc';
import type { LiveMessage, LiveProblem, LiveRunInfo, LiveRunsMessage } from '../live/messages.ts';
import { esc } from './common.ts';
import { type Entry, stepHtml } from './steps.ts';

const $ = <T extends HTMLElement = HTMLElement>(sel: string, root: ParentNode = document) => root.querySelector(sel) as T;

/** This browser's name as a watcher and holder: `?who=NAME`, else the one kept in localStorage, else a new `person-XXXX`. */
export function whoAmI(): string {
  const asked = new URLSearchParams(location.search).get('who');
  const valid = (s: string | null): s is string => s !== null && /^[\w .@+-]{1,64}$/.test(s);
  if (valid(asked)) {
    localStorage.setItem('vncua-who', asked);
    return asked;
  }
  const kept = localStorage.getItem('vncua-who');
  if (valid(kept)) return kept;
  const made = `person-${Math.random().toString(16).slice(2, 6)}`;
  localStorage.setItem('vncua-who', made);
  return made;
}

/** A WebSocket URL of the serve API, relative to the page (keeps a token path segment). */
function wsUrl(path: string, q: Record<string, string>): string {
  const u = new URL(`${path}?${new URLSearchParams(q)}`, location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

function addStylesheet(): void {
  if (document.querySelector('link[href="live.css"]')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = 'live.css';
  document.head.append(link);
}

const stateText = (r: LiveRunInfo): string =>
  r.state === 'help' ? 'asks for help' : r.state === 'paused' && r.holder ? `taken over by ${r.holder}` : r.state === 'unreachable' ? 'not answering' : r.state;

/** Is run `dir` live now (serve's api/live/run)? */
export async function liveInfo(dir: string): Promise<{ run: LiveRunInfo | null; notLive: LiveProblem | null }> {
  const res = await fetch(`api/live/run?dir=${encodeURIComponent(dir)}`);
  if (!res.ok) return { run: null, notLive: null };
  return (await res.json()) as { run: LiveRunInfo | null; notLive: LiveProblem | null };
}

// ---------------------------------------------------------------- one live run

interface Screen {
  rfb: RFB;
  el: HTMLElement;
  interactive: boolean;
}

/** Show run `dir` live (a <main id="live-view"> of its own): desktop, status, takeover, steps. */
export function showLive(dir: string): void {
  addStylesheet();
  const me = whoAmI();
  const main = document.createElement('main');
  main.id = 'live-view';
  document.body.append(main);
  $('#crumb').textContent = dir;
  main.innerHTML = `
<div id="live-head"><span class="live-badge">live</span> <b id="live-dir"></b> <span id="live-state" class="live-state"></span> <span id="live-steps-count"></span>
  <span id="live-who">you: <b></b></span>
  <button id="takeover" type="button">Take over</button><button id="handback" type="button" hidden>Hand back</button></div>
<div id="live-help" class="live-help" hidden></div>
<div id="live-notice" class="notice" hidden></div>
<div id="live-body"><section id="live-player"><div id="live-screen"></div></section><aside id="live-steps" class="steps"></aside></div>`;
  $('#live-dir').textContent = dir;
  $('#live-who b').textContent = me;
  const notice = $('#live-notice');
  const say = (code: string | null, text: string) => {
    notice.hidden = false;
    notice.dataset.code = code ?? '';
    notice.innerHTML = code ? `<b>${esc(code)}</b>: ${esc(text)}` : esc(text);
  };
  const unsay = () => {
    notice.hidden = true;
    notice.dataset.code = '';
  };
  const entries = new Map<number, Entry>();
  let info: LiveRunInfo | null = null;
  let screen: Screen | null = null;
  let pending: Screen | null = null;
  let ended = false;

  /** (Re)connect the desktop, interactive or not; the old view stays until the new one is connected. */
  const connect = (interactive: boolean) => {
    if (pending?.interactive === interactive) return;
    if (pending) {
      pending.rfb.disconnect();
      pending.el.remove();
    }
    const host = $('#live-screen');
    const el = document.createElement('div');
    el.className = 'live-rfb';
    el.hidden = screen !== null;
    host.append(el);
    const rfb = new RFB(el, wsUrl('api/live/rfb', { dir, who: me, view_only: interactive ? '0' : '1' }));
    rfb.viewOnly = !interactive;
    rfb.scaleViewport = true;
    rfb.focusOnClick = interactive;
    rfb.background = '#111';
    const next: Screen = { rfb, el, interactive };
    pending = next;
    rfb.addEventListener('connect', () => {
      const old = screen;
      screen = next;
      if (pending === next) pending = null;
      el.hidden = false;
      el.dataset.connected = '1';
      host.dataset.connected = '1';
      host.dataset.interactive = interactive ? '1' : '0';
      if (old && old !== next) {
        old.rfb.disconnect();
        old.el.remove();
      }
      if (interactive) rfb.focus();
    });
    rfb.addEventListener('disconnect', () => {
      el.dataset.connected = '0';
      if (pending === next) pending = null;
      if (screen !== next) {
        el.remove();
        return;
      }
      host.dataset.connected = '0';
      if (ended) return;
      // The endpoint went away or the run is between connections: try again while the run is live.
      setTimeout(() => {
        if (!ended && screen === next) {
          screen = null;
          el.remove();
          connect(info?.holder === me);
        }
      }, 1000);
    });
  };

  const render = () => {
    if (!info) return;
    const st = $('#live-state');
    st.textContent = stateText(info);
    st.dataset.state = info.state;
    st.className = `live-state st-live-${info.state}`;
    $('#live-steps-count').textContent = `${entries.size} step${entries.size === 1 ? '' : 's'}`;
    const mine = info.holder === me;
    $<HTMLButtonElement>('#takeover').hidden = mine;
    $<HTMLButtonElement>('#handback').hidden = !mine;
    const help = $('#live-help');
    help.hidden = info.state !== 'help';
    if (info.state === 'help') {
      help.innerHTML = `<b>The agent asks for help:</b> ${esc(info.help ?? '')} <button type="button" id="help-takeover">Take over</button>`;
      $('#help-takeover').addEventListener('click', () => void takeover());
    }
    if (info.error) say(info.error.code, info.error.message);
    else if (notice.dataset.code === 'SERVE_ERR_LIVE_UNREACHABLE') unsay();
    // Interactive exactly while this browser holds control (also when it took over from another tab).
    if (screen && screen.interactive !== mine && !ended) connect(mine);
  };

  const renderSteps = (changed: Entry[]) => {
    const list = $('#live-steps');
    for (const e of changed) {
      entries.set(e.index, e);
      const html = stepHtml(e);
      const old = document.getElementById(`step-${e.index}`);
      if (old) old.outerHTML = html;
      else list.insertAdjacentHTML('beforeend', html);
    }
    list.dataset.count = String(entries.size);
    list.lastElementChild?.scrollIntoView({ block: 'nearest' });
    if (info) $('#live-steps-count').textContent = `${entries.size} step${entries.size === 1 ? '' : 's'}`;
  };

  const control = async (op: 'takeover' | 'handback'): Promise<void> => {
    const res = await fetch(`api/live/control?dir=${encodeURIComponent(dir)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ op, who: me }),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.ok) {
      unsay();
      info = { ...(info as LiveRunInfo), ...(body as Partial<LiveRunInfo>) };
      render();
      return;
    }
    const code = String(body.code ?? `HTTP ${res.status}`);
    if (code === 'LIVE_ERR_TAKEN') {
      say(code, `${String(body.holder ?? 'another person')} has taken over this desktop: you can watch, and take over once they hand it back.`);
    } else say(code, String(body.message ?? ''));
  };
  const takeover = () => control('takeover');
  $('#takeover').addEventListener('click', () => void takeover());
  $('#handback').addEventListener('click', () => void control('handback'));

  // Status, steps and the end, pushed by serve.
  const follow = () => {
    const ws = new WebSocket(wsUrl('api/live/events', { dir }));
    ws.onmessage = (ev) => {
      const m = JSON.parse(String(ev.data)) as LiveMessage;
      if (m.type === 'run') {
        if (m.run === null) {
          // Not live (any more): the recorded trace viewer.
          ended = true;
          location.replace(`./?run=${encodeURIComponent(dir)}`);
          return;
        }
        info = m.run;
        render();
        if (!screen && !pending) connect(info.holder === me);
      } else if (m.type === 'steps') renderSteps(m.entries as unknown as Entry[]);
      else if (m.type === 'trace-error') say(m.code, `${m.message} (the run is still writing it; shown again once it reads)`);
      else if (m.type === 'ended') {
        ended = true;
        document.body.dataset.ended = '1';
        say(null, 'The run has ended: opening its recorded trace...');
        screen?.rfb.disconnect();
        setTimeout(() => location.replace(`./?run=${encodeURIComponent(dir)}`), 300);
      }
    };
    ws.onclose = () => {
      if (ended) return;
      say('SERVE_ERR_LIVE_UNREACHABLE', 'The connection to vncua serve closed (it stopped?); trying again...');
      setTimeout(follow, 2000);
    };
  };
  follow();
  document.body.dataset.ready = 'live';
}

// ---------------------------------------------------------------- the live tiles over the run list

/**
 * Live tiles of every running worker at the top of `listView` (hidden while none runs), updated as runs start,
 * change and end; `onChange` is called when the set of live runs changes (the run table is stale then).
 */
export function showLiveTiles(listView: HTMLElement, onChange: () => void): void {
  addStylesheet();
  const host = document.createElement('section');
  host.id = 'live-section';
  host.hidden = true;
  host.innerHTML = '<div id="live-banner" class="live-help" hidden></div><div id="live-grid"></div>';
  listView.prepend(host);
  const tiles = new Map<string, { el: HTMLElement; rfb: RFB }>();
  let last = -1;
  const render = (m: LiveRunsMessage) => {
    host.hidden = m.runs.length === 0;
    host.dataset.count = String(m.runs.length);
    const help = m.runs.filter((r) => r.state === 'help');
    const banner = $('#live-banner', host);
    banner.hidden = help.length === 0;
    banner.innerHTML = help.map((r) => `<div><b>${esc(r.dir)}</b> asks for help: ${esc(r.help ?? '')} <a href="./?run=${encodeURIComponent(r.dir)}">take over</a></div>`).join('');
    const grid = $('#live-grid', host);
    const seen = new Set<string>();
    for (const r of m.runs) {
      seen.add(r.dir);
      let t = tiles.get(r.dir);
      if (!t) {
        const el = document.createElement('div');
        el.className = 'live-tile';
        el.dataset.dir = r.dir;
        el.innerHTML = `<a class="live-tile-link" href="./?run=${encodeURIComponent(r.dir)}"><div class="live-thumb"></div></a><div class="live-tile-cap"><span class="live-badge">live</span> <a href="./?run=${encodeURIComponent(r.dir)}">${esc(r.dir)}</a> <span class="live-state"></span></div>`;
        grid.append(el);
        const rfb = new RFB($('.live-thumb', el), wsUrl('api/live/rfb', { dir: r.dir, who: whoAmI(), view_only: '1' }));
        rfb.viewOnly = true;
        rfb.scaleViewport = true;
        rfb.focusOnClick = false;
        rfb.background = '#111';
        rfb.addEventListener('connect', () => (el.dataset.connected = '1'));
        rfb.addEventListener('disconnect', () => (el.dataset.connected = '0'));
        t = { el, rfb };
        tiles.set(r.dir, t);
      }
      const st = $('.live-state', t.el);
      st.textContent = `${stateText(r)} · ${r.steps} step${r.steps === 1 ? '' : 's'}`;
      st.className = `live-state st-live-${r.state}`;
      t.el.dataset.state = r.state;
      t.el.classList.toggle('help', r.state === 'help');
      t.el.title = r.state === 'help' ? `asks for help: ${r.help ?? ''}` : r.error ? `${r.error.code}: ${r.error.message}` : '';
    }
    for (const [dir, t] of tiles) {
      if (seen.has(dir)) continue;
      t.rfb.disconnect();
      t.el.remove();
      tiles.delete(dir);
    }
    markRows(m);
    if (m.changes !== last) {
      // A run started or ended since the table was loaded (or since this page's first message).
      if (last !== -1 || m.changes > 0) onChange();
      last = m.changes;
    }
  };
  let latest: LiveRunsMessage = { type: 'runs', runs: [], stale: [], changes: 0 };
  // The run table is redrawn by filters: mark its live rows again each time.
  new MutationObserver(() => markRows(latest)).observe($('#runs tbody'), { childList: true });
  const follow = () => {
    const ws = new WebSocket(wsUrl('api/live/events', {}));
    ws.onmessage = (ev) => {
      latest = JSON.parse(String(ev.data)) as LiveRunsMessage;
      render(latest);
    };
    ws.onclose = () => setTimeout(follow, 2000);
  };
  follow();
}

/** The run table's rows of live runs get a badge (and `tr.live`). */
function markRows(m: LiveRunsMessage): void {
  const live = new Map(m.runs.map((r) => [r.dir, r]));
  // The columns by their headings (the table's columns are app.ts's to change).
  const heads = Array.from(document.querySelectorAll('#runs thead th')).map((th) => th.textContent?.trim());
  const col = (name: string) => heads.indexOf(name) + 1;
  for (const tr of Array.from(document.querySelectorAll<HTMLTableRowElement>('#runs tbody tr'))) {
    const r = live.get(tr.dataset.dir ?? '');
    tr.classList.toggle('live', r !== undefined);
    tr.classList.toggle('help', r?.state === 'help');
    const cell = tr.querySelector(`td:nth-child(${col('task')})`);
    const badge = cell?.querySelector('.live-badge');
    if (r && cell && !badge) cell.insertAdjacentHTML('afterbegin', '<span class="live-badge">live</span> ');
    if (!r && badge) badge.remove();
    // A live run's score so far is no verdict: its status cell says what it is doing.
    const status = tr.querySelector<HTMLElement>(`td:nth-child(${col('status')})`);
    if (r && status) {
      status.dataset.scored ??= status.textContent ?? '';
      status.textContent = stateText(r);
      status.className = `st-live-${r.state}`;
    }
  }
}
