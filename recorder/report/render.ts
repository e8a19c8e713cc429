/**
 * Renders action_screenshots.json as ONE self-contained HTML page (inline CSS and JS, no external
 * resources, images referenced by their relative paths). Every piece of text from the file is
 * escaped: the task and the params come from models and web pages and are untrusted.
 */
import { REPORT_CSP, REPORT_CSS, REPORT_JS } from './assets.ts';
import { markersFor, type ActionMarkers, type Marker } from './markers.ts';
import { parseActionScreenshots, type ActionScreenshots, type ActionScreenshotsInput, type ReportAction, type ReportSuccess } from './schema.ts';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Encodes a relative path for an attribute (each segment URL-encoded, then HTML-escaped). */
function pathAttr(path: string): string {
  return escapeHtml(path.split('/').map(encodeURIComponent).join('/'));
}

/** `12.3 ms`, `1.25 s`, `2 min 05 s`. */
export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${String(s).padStart(2, '0')} s`;
}

function signedMs(ms: number): string {
  return `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`;
}

/** A percentage of `total` for CSS, clamped to the image. */
function pct(v: number, total: number): string {
  return `${Math.min(100, Math.max(0, (v / total) * 100)).toFixed(4)}%`;
}

const DIR_ARROWS = { up: '↑', down: '↓', left: '←', right: '→' } as const;

function markerHtml(m: Marker, w: number, h: number): string {
  const cls = `mk ${m.kind}${m.inferred ? ' inferred' : ''}`;
  const title = `${m.kind.replace('_', ' ')} at (${round(m.x)}, ${round(m.y)})${m.inferred ? ' — position inferred from the previous pointer action' : ''}`;
  const dir = m.direction ? `<span class="dir">${DIR_ARROWS[m.direction]}</span>` : '';
  const lbl = m.label ? `<span class="lbl">${escapeHtml(m.label)}</span>` : '';
  return `<span class="${cls}" data-role="${m.role}" data-x="${m.x}" data-y="${m.y}" style="left:${pct(m.x, w)};top:${pct(m.y, h)}" title="${escapeHtml(title)}">${dir}${lbl}</span>`;
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function overlayHtml(mk: ActionMarkers, w: number, h: number): string {
  let out = '';
  if (mk.line) {
    const { x1, y1, x2, y2 } = mk.line;
    out += `<svg class="ov" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" aria-hidden="true"><line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" vector-effect="non-scaling-stroke"/></svg>`;
  }
  for (const m of mk.markers) out += markerHtml(m, w, h);
  return out;
}

function shotHtml(which: 'before' | 'after', a: ReportAction, pos: number, w: number, h: number, mk: ActionMarkers, caption: string): string {
  const src = a[which];
  const cap = `<figcaption>${which}${caption ? ` · ${escapeHtml(caption)}` : ''}</figcaption>`;
  if (!src) {
    return `<figure>${cap}<div class="shot missing ${which}" style="aspect-ratio:${w} / ${h}">no frame: the recording does not reach this point</div></figure>`;
  }
  const href = pathAttr(src);
  const stale = staleText(a, which);
  const badge = stale ? `<span class="stale-badge" data-reason="${escapeHtml(String(a[`${which}_stale_reason`] ?? ''))}">${escapeHtml(stale)}</span>` : '';
  return (
    `<figure>${cap}<div class="shot ${which}${stale ? ' stale' : ''}" data-w="${w}" data-h="${h}"${stale ? ` title="${escapeHtml(stale)}"` : ''}>` +
    `<a href="${href}" target="_blank" rel="noopener"><img src="${href}" width="${w}" height="${h}" loading="lazy" decoding="async" alt="${which} step ${pos}${stale ? ' (stale)' : ''}"></a>` +
    overlayHtml(mk, w, h) +
    badge +
    `</div></figure>`
  );
}

const STALE_REASONS: Record<string, string> = {
  damage: 'the recording is damaged after it',
  undecodable: 'the recording cannot be replayed past it',
  end_of_data: 'the recording ends there',
};

/** "stale: …" for an image older than its instant (from `<which>_stale`), or '' when it is not. */
function staleText(a: ReportAction, which: 'before' | 'after'): string {
  if (a[`${which}_stale`] !== true) return '';
  const reason = a[`${which}_stale_reason`] ?? 'unknown';
  const at = a[`${which}_at`];
  const shows = a[`${which}_shows_at`];
  const when = at != null && shows != null ? `the screen ${formatMs(Math.max(0, at - shows))} earlier` : 'an earlier screen';
  return `stale (${reason}): ${when}; ${STALE_REASONS[reason] ?? 'the recording does not show this instant'}`;
}

function typedHtml(a: ReportAction): string {
  if (a.action === 'type_text' && typeof a.params.text === 'string') {
    const t = a.params.text;
    return `<div class="typed"><span class="lbl">typed</span><pre class="text">${escapeHtml(t)}</pre><span class="count">${[...t].length} chars</span></div>`;
  }
  if (a.action === 'press_keys' && typeof a.params.keys === 'string') {
    return `<div class="typed"><span class="lbl">keys</span><kbd class="text">${escapeHtml(a.params.keys)}</kbd></div>`;
  }
  return '';
}

function flagHtml(v: boolean | null | undefined): string {
  if (v === true) return '<span class="flag yes" title="the success check passed after this action">complete ✓</span>';
  if (v === false) return '<span class="flag no" title="the success check did not pass after this action">not complete</span>';
  return '<span class="flag na" title="no success check was available">complete: —</span>';
}

function captions(a: ReportAction, settleMs: number | null | undefined): { before: string; after: string } {
  let before = '';
  let after = '';
  if (a.before_at != null && a.started_at != null) before = `frame ${signedMs(a.before_at - a.started_at)} from start`;
  if (a.after_at != null && a.ended_at != null) after = `frame ${signedMs(a.after_at - a.ended_at)} after end`;
  if (a.settled === true) after += `${after ? ', ' : ''}settled`;
  else if (a.settled === false && a.after_stale === true) after += `${after ? ', ' : ''}not settled (the recording does not show it)`;
  else if (a.settled === false) after += `${after ? ', ' : ''}not settled${settleMs != null ? ` (capped at ${formatMs(settleMs)})` : ''}`;
  return { before, after };
}

const PHASES: Record<string, string> = {
  immediate: 'the check right after this action',
  grace: 'a re-check while the screen settled after this action',
  final: 'the final check after the run ended',
};

/** The first successful step's banner: what the success check saw, and the frame of that moment. */
function successHtml(s: ReportSuccess, a: ReportAction, pos: number, w: number, h: number): string {
  const item = (k: string, v: string) => `<div><dt>${k}</dt><dd>${v}</dd></div>`;
  const when = s.at != null && a.ended_at != null ? ` ${signedMs(s.at - a.ended_at)} after the action ended` : '';
  const rows = [
    s.phase ? item('seen by', escapeHtml(PHASES[s.phase] ?? s.phase) + escapeHtml(when)) : '',
    s.rule || s.pattern ? item('rule', `${escapeHtml(s.rule ?? '')} <code>${escapeHtml(s.pattern ?? '')}</code>`) : '',
    s.snippet ? item('matched', `<code class="snippet">${escapeHtml(s.snippet)}</code>`) : '',
    s.url ? item('page', `<code>${escapeHtml(s.url)}</code>`) : '',
  ].join('');
  let figure = '';
  if (s.image) {
    const href = pathAttr(s.image);
    figure =
      `<figure class="success-shot"><figcaption>at success${escapeHtml(when ? ` ·${when}` : '')}</figcaption><div class="shot" data-w="${w}" data-h="${h}">` +
      `<a href="${href}" target="_blank" rel="noopener"><img src="${href}" width="${w}" height="${h}" loading="lazy" decoding="async" alt="the screen when success was seen, step ${pos}"></a></div></figure>`;
  }
  return `<div class="success" id="first-success"><p class="title">First successful step</p>${rows ? `<dl>${rows}</dl>` : ''}${figure}</div>`;
}

function stepHtml(a: ReportAction, pos: number, data: ActionScreenshots, mk: ActionMarkers, t0: number | null, first: boolean): string {
  const w = a.width ?? data.width;
  const h = a.height ?? data.height;
  const human = a.actor === 'human';
  const cls = ['step', human ? 'human' : '', a.error ? 'err' : '', a.task_marked_complete === true ? 'done' : '', first ? 'first-success' : ''].filter(Boolean).join(' ');
  const who = human ? '<span class="flag person" title="a person did this while they held the run (a takeover), not the agent">by a person</span>' : '';
  const dur = a.duration_ms != null ? `<span class="dur" title="duration">${formatMs(a.duration_ms)}</span>` : '';
  const model = a.model ? `<span class="model" title="model calls recorded on this step: tokens in / out, cost at list prices">${escapeHtml(modelText(a.model))}</span>` : '';
  const at = t0 != null && a.started_at != null ? `<span class="at" title="time since the first action started">at ${signedMs(a.started_at - t0)}</span>` : '';
  const err = a.error ? `<div class="error"><code>${escapeHtml(a.error.code)}</code> ${escapeHtml(a.error.message)}</div>` : '';
  // The typed text / keys are shown in their own box; the params line shows the rest.
  const shownKey = a.action === 'type_text' ? 'text' : a.action === 'press_keys' ? 'keys' : null;
  const rest = Object.fromEntries(Object.entries(a.params).filter(([k, v]) => !(k === shownKey && typeof v === 'string')));
  const params = Object.keys(rest).length > 0 ? `<pre class="params">${escapeHtml(JSON.stringify(rest))}</pre>` : '';
  const cap = captions(a, data.settle_ms);
  return (
    `<section class="${cls}" id="step-${pos}" data-index="${a.index}" tabindex="-1">` +
    `<div class="head"><a class="num" href="#step-${pos}">#${a.index}</a><span class="action">${escapeHtml(a.action)}</span>${who}${dur}${model}${flagHtml(a.task_marked_complete)}${first ? '<span class="flag first" title="the first step after which the success check passed">first success</span>' : ''}${at}</div>` +
    err +
    typedHtml(a) +
    params +
    `<div class="shots">${shotHtml('before', a, pos, w, h, mk, cap.before)}${shotHtml('after', a, pos, w, h, mk, cap.after)}</div>` +
    (first && data.success ? successHtml(data.success, a, pos, w, h) : '') +
    `</section>\n`
  );
}

function outcomeHtml(data: ActionScreenshots): string {
  const o = data.outcome;
  if (!o) return '<dl class="outcome"><div><dt>outcome</dt><dd>unknown (no result.json)</dd></div></dl>';
  const item = (k: string, v: string) => `<div><dt>${k}</dt><dd>${v}</dd></div>`;
  const success = o.success === true ? 'yes ✓' : o.success === false ? 'no' : '—';
  return (
    '<dl class="outcome">' +
    item('status', escapeHtml(o.status)) +
    (o.steps != null ? item('steps', String(o.steps)) : '') +
    (o.duration_ms != null ? item('duration', formatMs(o.duration_ms)) : '') +
    item('success', success) +
    (o.reason ? item('reason', escapeHtml(o.reason)) : '') +
    (o.error ? item('error', `<code>${escapeHtml(o.error.code)}</code> ${escapeHtml(o.error.message)}`) : '') +
    (o.model ? item('model', escapeHtml(modelText(o.model))) : '') +
    '</dl>'
  );
}

/** `2 calls · 1200 in / 80 out tokens · $0.0046` (tokens or cost left out when unknown). */
function modelText(m: { calls: number; input_tokens?: number | null; output_tokens?: number | null; cost_usd?: number | null }): string {
  const parts = [`${m.calls} call${m.calls === 1 ? '' : 's'}`];
  if (m.input_tokens != null && m.output_tokens != null) parts.push(`${m.input_tokens} in / ${m.output_tokens} out tokens`);
  if (m.cost_usd != null) parts.push(`$${m.cost_usd < 0.01 && m.cost_usd > 0 ? m.cost_usd.toPrecision(2) : m.cost_usd.toFixed(4).replace(/0+$/, '').replace(/\.$/, '')}`);
  return parts.join(' · ');
}

function warningsHtml(data: ActionScreenshots): string {
  if (data.warnings.length === 0) return '';
  const items = data.warnings.map((w) => `<li><code>${escapeHtml(w.code)}</code> ${escapeHtml(w.message)}</li>`).join('');
  return `<ul class="warnings" aria-label="warnings">${items}</ul>`;
}

/** Position of the first successful step: the success's entry, else the first step marked complete; -1 if none. */
function firstSuccessPos(data: ActionScreenshots): number {
  if (data.success) {
    const p = data.actions.findIndex((a) => a.index === data.success!.index);
    if (p >= 0) return p;
  }
  return data.actions.findIndex((a) => a.task_marked_complete === true);
}

function chipsHtml(data: ActionScreenshots, firstPos: number): string {
  const chips = data.actions.map((a, pos) => {
    const cls = [a.error ? 'err' : pos === firstPos ? 'done first' : a.task_marked_complete === true ? 'done' : '', a.actor === 'human' ? 'human' : ''].filter(Boolean).join(' ');
    const title = a.actor === 'human' ? `${a.action} (by a person)` : a.action;
    return `<a href="#step-${pos}"${cls ? ` class="${cls}"` : ''} title="${escapeHtml(title)}">${a.index}</a>`;
  });
  return `<nav class="index" aria-label="steps">${chips.join('')}</nav>`;
}

/** Renders a parsed (or raw, validated here) action_screenshots.json as the step report's HTML. */
export function renderStepReport(input: ActionScreenshots | ActionScreenshotsInput): string {
  const data = parseActionScreenshots(input);
  const task = data.task ?? null;
  const t0 = data.actions.find((a) => a.started_at != null)?.started_at ?? null;
  const steps: string[] = [];
  let pointer: { x: number; y: number } | null = null;
  const firstPos = firstSuccessPos(data);
  data.actions.forEach((a, pos) => {
    const mk = markersFor(a.action, a.params, pointer);
    pointer = mk.pointer;
    steps.push(stepHtml(a, pos, data, mk, t0, pos === firstPos));
  });
  const title = task ? `Step report: ${task.length > 80 ? `${task.slice(0, 79)}…` : task}` : 'Step report';
  const meta = [
    `source: ${data.source}`,
    `alignment: ${data.alignment === 'inferred' ? 'inferred from input events (no timestamps in the trace)' : 'timestamps'}`,
    `screen ${data.width}×${data.height}`,
    data.settle_ms != null ? `after-frame cap ${formatMs(data.settle_ms)}` : '',
    `${data.actions.length} action${data.actions.length === 1 ? '' : 's'}`,
  ].filter(Boolean);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(REPORT_CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="vncua step report">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    '</head>',
    '<body>',
    '<header class="top">',
    '<h1>Step report</h1>',
    task !== null ? `<p class="task">${escapeHtml(task)}</p>` : '<p class="task none">(no task recorded)</p>',
    outcomeHtml(data),
    `<p class="meta">${meta.map(escapeHtml).join(' · ')}</p>`,
    warningsHtml(data),
    '<p class="keys">Keys: <kbd>j</kbd> or <kbd>↓</kbd> next step · <kbd>k</kbd> or <kbd>↑</kbd> previous step · <kbd>Home</kbd> / <kbd>End</kbd> first / last step · <kbd>m</kbd> hide or show markers. Click an image to open it full size.</p>',
    chipsHtml(data, firstPos),
    '</header>',
    '<main id="steps">',
    steps.join(''),
    data.actions.length === 0 ? '<p class="meta">This run has no actions.</p>' : '',
    '</main>',
    `<script>${REPORT_JS}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
