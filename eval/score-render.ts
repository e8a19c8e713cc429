/**
 * scores.md and scores.html from a ScoreReport. The HTML is one self-contained file (inline CSS, no
 * scripts, fonts or remote resources): agents side by side per task and resolution, each cell linking
 * to that run's step report (action_screenshots.html) when it exists, else to its trace.
 */
import type { Aggregate, RunScore, ScoreReport } from './score.ts';

/** `83.3%` or `–`. */
export function pct(x: number | null): string {
  return x === null ? '–' : `${(x * 100).toFixed(1)}%`;
}

function num(x: number | null, digits = 1): string {
  return x === null ? '–' : x.toFixed(digits);
}

function secs(ms: number | null): string {
  return ms === null ? '–' : `${(ms / 1000).toFixed(1)} s`;
}

/** HTML-escape text (also for attribute values). */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A relative link, each path segment URL-encoded (a `#fragment` kept as it is). */
function href(path: string): string {
  const hash = path.indexOf('#');
  const file = hash < 0 ? path : path.slice(0, hash);
  const fragment = hash < 0 ? '' : path.slice(hash);
  return (
    file
      .split('/')
      .map((p) => encodeURIComponent(p))
      .join('/') + fragment
  );
}

/** `immediate check at step 3: "…code#1…" on http://…` — what the first success's check saw. */
function evidenceText(run: RunScore): string {
  const ev = run.evidence;
  if (!ev) return `first success at step ${run.success_index}`;
  return `first success at step ${ev.entry_index} (${ev.phase} check, ${ev.rule} ${JSON.stringify(ev.pattern)}): ${ev.snippet} on ${ev.url}`;
}

const aggCols = ['runs', 'success', 'proper stop', 'complete', 'avg steps', 'avg time', 'infra errors'];
const aggCells = (a: Aggregate) => [String(a.runs), `${pct(a.success_rate)} (${a.successes})`, pct(a.proper_stop_rate), pct(a.complete_rate), num(a.avg_steps), secs(a.avg_duration_ms), String(a.infra_errors)];

/** Rows of the side-by-side table: one per (task, resolution), in order. */
function taskRows(r: ScoreReport): Array<{ task: string; resolution: string; group: string; cells: Map<string, RunScore> }> {
  const rows = new Map<string, { task: string; resolution: string; group: string; cells: Map<string, RunScore> }>();
  const sorted = [...r.runs].sort((a, b) => a.group.localeCompare(b.group) || a.task_id.localeCompare(b.task_id) || r.resolutions.indexOf(a.resolution) - r.resolutions.indexOf(b.resolution));
  for (const run of sorted) {
    const k = `${run.task_id}\0${run.resolution}`;
    let row = rows.get(k);
    if (!row) rows.set(k, (row = { task: run.task_id, resolution: run.resolution, group: run.group, cells: new Map() }));
    row.cells.set(run.agent, run);
  }
  return [...rows.values()];
}

/** Short text of one run: `✓ 7 steps` / `✗ 50 steps (max_steps)` / `infra`. */
function runText(run: RunScore): string {
  if (run.infra_error) return 'infra error';
  const mark = run.success ? '✓' : '✗';
  const extra = run.status === 'finished' || run.status === 'unknown' ? '' : ` (${run.status})`;
  return `${mark} ${run.steps_performed} step${run.steps_performed === 1 ? '' : 's'}${run.proper_stop ? ', stopped' : ''}${extra}`;
}

function mdTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** scores.md. */
export function renderScoresMarkdown(r: ScoreReport): string {
  const out: string[] = [`# Scores`, '', `${r.runs.length} runs under \`${r.root}\`, scored ${r.generated_at}. Infra errors are listed apart and excluded from the rates.`, ''];
  out.push('## Per agent', '', mdTable(['agent', ...aggCols], r.by_agent.map((a) => [a.agent, ...aggCells(a)])), '');
  out.push('## Per resolution', '', mdTable(['agent', 'resolution', ...aggCols], r.by_resolution.map((a) => [a.agent, a.resolution, ...aggCells(a)])), '');
  out.push('## Per task group', '', mdTable(['agent', 'resolution', 'group', ...aggCols], r.by_group.map((a) => [a.agent, a.resolution, a.group, ...aggCells(a)])), '');
  out.push(
    '## Per task',
    '',
    mdTable(
      ['task', 'resolution', ...r.agents],
      taskRows(r).map((row) => [row.task, row.resolution, ...r.agents.map((a) => {
        const run = row.cells.get(a);
        if (!run) return '';
        const cell = run.link ? `[${runText(run)}](${href(run.link)})` : runText(run);
        return run.success_link ? `${cell} ([step ${run.success_index}](${href(run.success_link)}))` : cell;
      })]),
    ),
    '',
  );
  out.push('## Infra errors', '');
  if (r.infra_errors.length === 0) out.push('None.', '');
  else out.push(mdTable(['agent', 'resolution', 'task', 'error'], r.infra_errors.map((e) => [e.agent, e.resolution, e.task_id, e.error ? `${e.error.code}: ${e.error.message.split('\n')[0]}` : ''])), '');
  return `${out.join('\n')}\n`;
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
p.meta{color:#666;margin:0 0 16px}
table{border-collapse:collapse;margin:4px 0 8px}
th,td{border:1px solid #d5d5d9;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f6;font-weight:600;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.ok{background:#e7f6ea}td.fail{background:#fdecec}td.infra{background:#fff4d6}td.none{background:#fafafa}
td a{color:inherit}
td a.first{font-size:12px;color:#1c6b3a}
tr.group td{background:#eef0f6;font-weight:600}
small{color:#666}
`;

function htmlTable(header: string[], rows: string[][], numeric: Set<number> = new Set()): string {
  const th = header.map((h) => `<th>${esc(h)}</th>`).join('');
  const trs = rows.map((cells) => `<tr>${cells.map((c, i) => `<td${numeric.has(i) ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`).join('\n');
  return `<table>\n<thead><tr>${th}</tr></thead>\n<tbody>\n${trs}\n</tbody>\n</table>`;
}

function runCell(run: RunScore | undefined): string {
  if (!run) return '<td class="none"></td>';
  const cls = run.infra_error ? 'infra' : run.success ? 'ok' : 'fail';
  const text = esc(runText(run));
  const time = run.duration_ms === null ? '' : ` <small>${esc(secs(run.duration_ms))}</small>`;
  const title = esc(`${run.dir}: status ${run.status}${run.error ? `, ${run.error.code}` : ''}; success_index ${run.success_index ?? '–'}, finish_index ${run.finish_index ?? '–'}, complete ${run.complete}`);
  const body = run.link ? `<a href="${esc(href(run.link))}">${text}</a>` : text;
  const first = run.success_link ? ` <a class="first" href="${esc(href(run.success_link))}" title="${esc(evidenceText(run))}">step ${run.success_index}</a>` : '';
  return `<td class="${cls}" title="${title}">${body}${first}${time}</td>`;
}

/** scores.html (self-contained). */
export function renderScoresHtml(r: ScoreReport): string {
  const aggNumeric = new Set([1, 2, 3, 4, 5, 6, 7].map((i) => i));
  const parts: string[] = [];
  parts.push(`<h1>Scores</h1><p class="meta">${r.runs.length} runs under <code>${esc(r.root)}</code>, scored ${esc(r.generated_at)}. Infra errors are listed apart and excluded from the rates.</p>`);
  parts.push('<h2>Per agent</h2>', htmlTable(['agent', ...aggCols], r.by_agent.map((a) => [esc(a.agent), ...aggCells(a).map(esc)]), aggNumeric));
  // Resolutions and groups: agents side by side, success rate (runs) per cell.
  const side = (label: string, keys: Array<{ key: string[]; find: (agent: string) => Aggregate | undefined }>, keyHeader: string[]) =>
    `<h2>${esc(label)}</h2>` +
    htmlTable(
      [...keyHeader, ...r.agents],
      keys.map((k) => [...k.key.map(esc), ...r.agents.map((a) => {
        const agg = k.find(a);
        return agg ? `${esc(pct(agg.success_rate))} <small>(${agg.successes}/${agg.runs}${agg.infra_errors ? `, ${agg.infra_errors} infra` : ''})</small>` : '';
      })]),
    );
  parts.push(
    side(
      'Per resolution (success rate)',
      r.resolutions.map((res) => ({ key: [res], find: (a) => r.by_resolution.find((x) => x.agent === a && x.resolution === res) })),
      ['resolution'],
    ),
  );
  const groupKeys = [...new Map(r.by_group.map((g) => [`${g.group}\0${g.resolution}`, g])).values()].sort((a, b) => a.group.localeCompare(b.group) || r.resolutions.indexOf(a.resolution) - r.resolutions.indexOf(b.resolution));
  parts.push(
    side(
      'Per task group (success rate)',
      groupKeys.map((g) => ({ key: [g.group, g.resolution], find: (a) => r.by_group.find((x) => x.agent === a && x.resolution === g.resolution && x.group === g.group) })),
      ['group', 'resolution'],
    ),
  );
  // The side-by-side table: one row per task and resolution, one column per agent.
  const head = `<thead><tr><th>task</th><th>resolution</th>${r.agents.map((a) => `<th>${esc(a)}</th>`).join('')}</tr></thead>`;
  const body: string[] = [];
  let group: string | undefined;
  for (const row of taskRows(r)) {
    if (row.group !== group) {
      group = row.group;
      body.push(`<tr class="group"><td colspan="${2 + r.agents.length}">${esc(group)}</td></tr>`);
    }
    body.push(`<tr><td>${esc(row.task)}</td><td>${esc(row.resolution)}</td>${r.agents.map((a) => runCell(row.cells.get(a))).join('')}</tr>`);
  }
  parts.push('<h2>Per task</h2><p class="meta">✓ success, ✗ no success; "stopped": finish was called once the task was complete. Each cell links to the run\'s step report, or to its trace; "step N" links to the first successful step in the report (hover it for what the success check saw).</p>');
  parts.push(`<table>\n${head}\n<tbody>\n${body.join('\n')}\n</tbody>\n</table>`);
  parts.push('<h2>Infra errors</h2>');
  if (r.infra_errors.length === 0) parts.push('<p>None.</p>');
  else {
    parts.push(
      htmlTable(
        ['agent', 'resolution', 'task', 'error'],
        r.infra_errors.map((e) => [esc(e.agent), esc(e.resolution), e.link ? `<a href="${esc(href(e.link))}">${esc(e.task_id)}</a>` : esc(e.task_id), e.error ? `<code>${esc(e.error.code)}</code> ${esc(e.error.message)}` : '']),
      ),
    );
  }
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Scores</title><style>${CSS}</style></head>\n<body>\n${parts.join('\n')}\n</body></html>\n`;
}
