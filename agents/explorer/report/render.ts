/**
 * qa-report.md and qa-report.html from a QaReport, free of I/O. The HTML page is self-contained (inline style, no
 * script), every text from the page under test escaped; screenshots are relative links (thumbnails) to the files
 * beside it in the run directory.
 */
import type { Finding } from '../types.ts';
import { groupFindings, KIND_TITLES } from './build.ts';
import type { QaReport } from './schema.ts';

/** `s` escaped for HTML text and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** `s` safe inside a Markdown table cell or list item (one line, pipes and backticks escaped, HTML neutralized). */
export function escapeMd(s: string): string {
  return s
    .replace(/\s+/g, ' ')
    .replace(/[\\`*_[\]|<>]/g, (c) => `\\${c}`)
    .trim();
}

/** A relative link target, percent-encoded per segment (spaces and '#' in names do not break it). */
function href(rel: string): string {
  return rel
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const usd = (n: number) => `$${n.toFixed(4)}`;

function headline(r: QaReport): string {
  const t = r.totals;
  return `${t.findings} finding${t.findings === 1 ? '' : 's'}, ${t.states} state${t.states === 1 ? '' : 's'}, coverage ${t.coveragePct}% (${r.coverage.tried} of ${r.coverage.seen} elements), ${t.steps} steps in ${seconds(r.durationMs)}, ${t.unstick} unstick, cost ${usd(t.costUsd)}`;
}

/** qa-report.md. */
export function renderQaMarkdown(r: QaReport): string {
  const out: string[] = [`# QA report: ${escapeMd(r.startUrl)}`, '', `${headline(r)}; ended: ${r.endReason}.`, ''];
  const links = Object.entries(r.links).filter(([, v]) => v) as Array<[string, string]>;
  if (links.length) out.push(`Links: ${links.map(([k, v]) => `[${k}](${href(v)})`).join(' · ')}`, '');
  if (r.run?.error) out.push(`Run error: \`${escapeMd(r.run.error.code)}\` ${escapeMd(r.run.error.message)}`, '');
  out.push('## Findings', '');
  const groups = groupFindings(r.findings as Finding[]);
  if (!groups.length) out.push('None.', '');
  for (const g of groups) {
    out.push(`### ${KIND_TITLES[g.kind]} (${g.findings.length})`, '', '| Step | Message | URL | Seen | Screenshot |', '| --- | --- | --- | --- | --- |');
    for (const f of g.findings) {
      out.push(`| ${f.step} | ${escapeMd(f.message)} | ${escapeMd(f.url ?? '')} | ${f.count ?? 1}× | ${f.screenshot ? `[png](${href(f.screenshot)})` : '–'} |`);
    }
    out.push('');
  }
  out.push('## States reached', '', '| First step | Visits | URL | Screenshot |', '| --- | --- | --- | --- |');
  for (const s of r.states) out.push(`| ${s.firstStep} | ${s.visits} | ${escapeMd(s.url ?? '')} | ${s.screenshot ? `[png](${href(s.screenshot)})` : '–'} |`);
  out.push('', '## Coverage', '', `${r.coverage.tried} of ${r.coverage.seen} interactive elements acted on (${r.totals.coveragePct}%).`, '');
  const untried = r.coverage.targets.filter((t) => !t.tried);
  if (untried.length) out.push(`Not tried: ${untried.map((t) => `${t.kind} "${escapeMd(t.label)}"`).join(', ')}.`, '');
  out.push('## Unstick events', '');
  if (!r.unstick.length) out.push('None.');
  for (const u of r.unstick) out.push(`- step ${u.step}: ${escapeMd(u.strategy)} (${escapeMd(u.reason)})`);
  out.push(
    '',
    '## Time and cost',
    '',
    `${seconds(r.durationMs)}; ${r.model.calls} model calls (${r.model.ignored} ignored), ${r.model.tokens.input} input / ${r.model.tokens.output} output tokens, ${usd(r.model.costUsd)}.`,
    '',
  );
  return `${out.join('\n')}\n`;
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;max-width:1200px}
h1{font-size:22px;word-break:break-all}h2{margin-top:28px;border-bottom:1px solid #ccd}h3{margin:18px 0 6px}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #d4d8e2;padding:4px 8px;text-align:left;vertical-align:top}
td.msg{word-break:break-word}pre{white-space:pre-wrap;word-break:break-word;background:#f4f5f8;padding:6px;margin:4px 0 0;font-size:12px;max-height:16em;overflow:auto}
img.thumb{max-width:240px;max-height:150px;border:1px solid #ccd}.kind{font-size:13px;color:#555}.none{color:#777}`;

function thumb(rel: string | undefined): string {
  return rel ? `<a href="${escapeHtml(href(rel))}"><img class="thumb" src="${escapeHtml(href(rel))}" alt="screenshot ${escapeHtml(rel)}" loading="lazy"></a>` : '–';
}

/** qa-report.html (self-contained: inline style, no script). */
export function renderQaHtml(r: QaReport): string {
  const h: string[] = [];
  h.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>QA report: ${escapeHtml(r.startUrl)}</title><style>${STYLE}</style></head><body>`);
  h.push(`<h1>QA report: ${escapeHtml(r.startUrl)}</h1><p>${escapeHtml(headline(r))}; ended: ${escapeHtml(r.endReason)}.</p>`);
  const links = Object.entries(r.links).filter(([, v]) => v) as Array<[string, string]>;
  if (links.length) h.push(`<p>${links.map(([k, v]) => `<a href="${escapeHtml(href(v))}">${escapeHtml(k)}</a>`).join(' · ')}</p>`);
  if (r.run?.error) h.push(`<p>Run error: <code>${escapeHtml(r.run.error.code)}</code> ${escapeHtml(r.run.error.message)}</p>`);
  h.push('<h2>Findings</h2>');
  const groups = groupFindings(r.findings as Finding[]);
  if (!groups.length) h.push('<p class="none">None.</p>');
  for (const g of groups) {
    h.push(`<h3 id="${g.kind}">${escapeHtml(KIND_TITLES[g.kind])} (${g.findings.length})</h3><table><tr><th>Step</th><th>Finding</th><th>Seen</th><th>Screenshot</th></tr>`);
    for (const f of g.findings) {
      const excerpt = f.excerpt ? `<pre>${escapeHtml(f.excerpt)}</pre>` : '';
      const url = f.url ? `<div class="kind">${escapeHtml(f.url)}</div>` : '';
      h.push(
        `<tr><td>${f.step}</td><td class="msg">${escapeHtml(f.message)}${url}${excerpt}</td><td>${f.count ?? 1}×${f.lastStep !== undefined ? ` (last at step ${f.lastStep})` : ''}</td><td>${thumb(f.screenshot)}</td></tr>`,
      );
    }
    h.push('</table>');
  }
  h.push('<h2>States reached</h2><table><tr><th>First step</th><th>Visits</th><th>URL</th><th>Screenshot</th></tr>');
  for (const s of r.states) h.push(`<tr><td>${s.firstStep}</td><td>${s.visits}</td><td class="msg">${escapeHtml(s.url ?? '')}</td><td>${thumb(s.screenshot)}</td></tr>`);
  h.push('</table>');
  h.push(
    `<h2>Coverage</h2><p>${r.coverage.tried} of ${r.coverage.seen} interactive elements acted on (${r.totals.coveragePct}%).</p><table><tr><th>Element</th><th>Kind</th><th>First seen</th><th>Tried</th></tr>`,
  );
  for (const t of r.coverage.targets)
    h.push(`<tr><td class="msg">${escapeHtml(t.label)}</td><td>${escapeHtml(t.kind)}</td><td>${t.firstSeenStep}</td><td>${t.tried ? 'yes' : 'no'}</td></tr>`);
  h.push('</table><h2>Unstick events</h2>');
  h.push(
    r.unstick.length ? `<ul>${r.unstick.map((u) => `<li>step ${u.step}: ${escapeHtml(u.strategy)} (${escapeHtml(u.reason)})</li>`).join('')}</ul>` : '<p class="none">None.</p>',
  );
  h.push(
    `<h2>Time and cost</h2><p>${escapeHtml(seconds(r.durationMs))}; ${r.model.calls} model calls (${r.model.ignored} ignored), ${r.model.tokens.input} input / ${r.model.tokens.output} output tokens, ${escapeHtml(usd(r.model.costUsd))}.</p>`,
  );
  h.push('</body></html>');
  return `${h.join('\n')}\n`;
}
