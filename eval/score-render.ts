/**
 * scores.md and scores.html from a ScoreReport. The HTML is one self-contained file (inline CSS, no
 * scripts, fonts or remote resources): agents side by side per task and resolution, each cell linking
 * to that run's step report (action_screenshots.html) when it exists, else to its trace (one link per
 * repeat with --repeat K); then the flaky tasks, the infra errors and the invalid runs.
 */
import { qaLine } from './score-qa.ts';
import type { Aggregate, AggregateRow, RunScore, ScoreReport } from './score.ts';
import { escapeHtml as esc } from '../recorder/report/render.ts';

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

/** `sentinel pass, llm fail` — a run's verdicts per judge. */
function verdictList(v: Record<string, string>): string {
  return Object.entries(v)
    .map(([j, x]) => `${j} ${x}`)
    .join(', ');
}

/** `, +1 assisted` when a person's takeover completed some runs' tasks (not counted as successes), else ''. */
export function assistedText(a: Pick<Aggregate, 'assisted_successes'>): string {
  return a.assisted_successes > 0 ? `, +${a.assisted_successes} assisted` : '';
}

/** `$12.34` from a dollar up, `$0.0185` (3 significant digits) under it, or `–`. */
export function usd(x: number | null): string {
  if (x === null) return '–';
  if (x === 0) return '$0';
  return x >= 1 ? `$${x.toFixed(2)}` : `$${x.toPrecision(3).replace(/\.?0+$/, '')}`;
}

const AGG_COLS = ['runs', 'success', 'proper stop', 'complete', 'avg steps', 'avg time', 'stop statuses', 'infra errors', 'invalid', 'tasks', 'k', 'pass@1', 'pass@k', 'pass^k'];
/** The cost columns, shown when some agent's runs were priced (model agents: byom/README.md's cost section). */
const COST_COLS = ['cost', 'cost / run', 'cost / success'];
const withCost = (r: ScoreReport) => r.by_agent.some((a) => a.cost_usd !== null);
/** The DOMAIN_BLOCKED column (requests the navigation guard blocked, and in how many runs), shown when some run had a guard. */
const GUARD_COL = 'DOMAIN_BLOCKED (runs)';
const withGuard = (r: ScoreReport) => r.by_agent.some((a) => a.domain_blocked !== null);
const aggColumns = (cost: boolean, guard = false) => [...AGG_COLS, ...(cost ? COST_COLS : []), ...(guard ? [GUARD_COL] : [])];
const guardCell = (a: AggregateRow) => (a.domain_blocked === null ? '–' : `${a.domain_blocked} (${a.domain_blocked_runs})`);
const aggCells = (a: AggregateRow, cost: boolean, guard = false) => [
  ...baseCells(a),
  ...(cost ? [usd(a.cost_usd), usd(a.avg_cost_usd), usd(a.cost_per_success)] : []),
  ...(guard ? [guardCell(a)] : []),
];
const baseCells = (a: AggregateRow) => [
  String(a.runs),
  `${pct(a.success_rate)} (${a.successes}${assistedText(a)})`,
  pct(a.proper_stop_rate),
  pct(a.complete_rate),
  num(a.avg_steps),
  secs(a.avg_duration_ms),
  stoppedText(a),
  String(a.infra_errors),
  String(a.invalid),
  String(a.tasks),
  String(a.k),
  pct(a.pass_at_1),
  pct(a.pass_at_k),
  pct(a.pass_hat_k),
];

/** The runs counted apart: `0`, or `3 (needs_human 2, cost_cap 1)`. */
function stoppedText(a: AggregateRow): string {
  const parts = Object.entries(a.stopped).filter(([, n]) => n > 0);
  const total = parts.reduce((s, [, n]) => s + n, 0);
  return total === 0 ? '0' : `${total} (${parts.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

/** `1, 3` */
const list = (ns: readonly number[]) => (ns.length === 0 ? '–' : ns.join(', '));

type TaskRow = { task: string; resolution: string; group: string; cells: Map<string, RunScore[]> };

/** Rows of the side-by-side table: one per (task, resolution), in order; each cell holds an agent's runs (its repeats). */
function taskRows(r: ScoreReport): TaskRow[] {
  const rows = new Map<string, TaskRow>();
  const sorted = [...r.runs].sort(
    (a, b) =>
      a.group.localeCompare(b.group) || a.task_id.localeCompare(b.task_id) || r.resolutions.indexOf(a.resolution) - r.resolutions.indexOf(b.resolution) || a.repeat - b.repeat,
  );
  for (const run of sorted) {
    const k = `${run.task_id}\0${run.resolution}`;
    let row = rows.get(k);
    if (!row) rows.set(k, (row = { task: run.task_id, resolution: run.resolution, group: run.group, cells: new Map() }));
    const runs = row.cells.get(run.agent);
    if (runs) runs.push(run);
    else row.cells.set(run.agent, [run]);
  }
  return [...rows.values()];
}

/** Short text of one run: `✓ 7 steps` / `✗ 50 steps (max_steps)` / `infra error` / `invalid`. */
function runText(run: RunScore): string {
  if (run.invalid) return 'invalid';
  if (run.infra_error) return 'infra error';
  if (run.stopped) return `■ ${run.stopped}${run.reason ? `: ${clip(run.reason)}` : ''}`;
  const mark = run.success ? '✓' : '✗';
  const extra = run.status === 'finished' || run.status === 'unknown' ? '' : ` (${run.status})`;
  return `${mark} ${run.steps_performed} step${run.steps_performed === 1 ? '' : 's'}${run.proper_stop ? ', stopped' : ''}${extra}`;
}

function mdTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A cell of the markdown per-task table: one run, or `#n` + the run per repeat. */
function mdRuns(runs: readonly RunScore[]): string {
  const one = (run: RunScore) => {
    const cell = run.link ? `[${runText(run)}](${href(run.link)})` : runText(run);
    return run.success_link ? `${cell} ([step ${run.success_index}](${href(run.success_link)}))` : cell;
  };
  if (runs.length === 1 && runs[0]!.repeat === 1) return one(runs[0]!);
  return runs.map((run) => `#${run.repeat} ${one(run)}`).join('<br>');
}

/** The first line of `s`, at most 80 characters. */
function clip(s: string): string {
  const line = s.split('\n')[0]!;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

const SUMMARY =
  'Runs the agent stopped for a reason (ambiguity, needs_human, sensitive_action, problem) or a cost cap stopped (cost_cap) are counted apart ("stopped", ■): neither successes nor failures, not in the rates; their cost is in the cost columns. Infra errors and invalid runs are listed apart and excluded from the rates. pass@1: mean per-task success share over its repeats; pass@k / pass^k: share of tasks with k counted repeats that succeeded at least once / every time.';

/** scores.md. */
export function renderScoresMarkdown(r: ScoreReport): string {
  const cost = withCost(r);
  const guard = withGuard(r);
  const aggCols = aggColumns(cost, guard);
  const out: string[] = [`# Scores`, '', `${r.runs.length} runs under \`${r.root}\`, scored ${r.generated_at}. ${SUMMARY}`, ''];
  out.push(
    '## Per agent',
    '',
    mdTable(
      ['agent', ...aggCols],
      r.by_agent.map((a) => [a.agent, ...aggCells(a, cost, guard)]),
    ),
    '',
  );
  out.push(
    '## Per resolution',
    '',
    mdTable(
      ['agent', 'resolution', ...aggCols],
      r.by_resolution.map((a) => [a.agent, a.resolution, ...aggCells(a, cost, guard)]),
    ),
    '',
  );
  out.push(
    '## Per task group',
    '',
    mdTable(
      ['agent', 'resolution', 'group', ...aggCols],
      r.by_group.map((a) => [a.agent, a.resolution, a.group, ...aggCells(a, cost, guard)]),
    ),
    '',
  );
  out.push(
    '## Per task',
    '',
    mdTable(
      ['task', 'resolution', ...r.agents],
      taskRows(r).map((row) => [
        row.task,
        row.resolution,
        ...r.agents.map((a) => {
          const runs = row.cells.get(a);
          return runs ? mdRuns(runs) : '';
        }),
      ]),
    ),
    '',
  );
  if (r.judges.length > 0) {
    out.push('## Judges', '', 'Pass rate: pass / (pass + fail) over the runs the judge decided; unknown: it could not tell; skipped: not asked (its `when`).', '');
    out.push(
      mdTable(
        ['agent', 'judge', 'type', 'pass rate', 'pass', 'fail', 'unknown', 'skipped', 'cost'],
        r.judges.map((j) => [j.agent, j.judge, j.type, pct(j.pass_rate), String(j.pass), String(j.fail), String(j.unknown), String(j.skipped), usd(j.cost_usd)]),
      ),
      '',
      '## Runs where judges disagree',
      '',
    );
    if (r.disagreements.length === 0) out.push('None.', '');
    else
      out.push(
        mdTable(
          ['agent', 'resolution', 'task', 'repeat', 'verdicts', 'run'],
          r.disagreements.map((d) => [d.agent, d.resolution, d.task_id, String(d.repeat), verdictList(d.verdicts), d.link ? `[${d.dir}](${href(d.link)})` : d.dir]),
        ),
        '',
      );
  }
  out.push('## Flaky tasks', '');
  if (r.flaky.length === 0) out.push('None.', '');
  else
    out.push(
      mdTable(
        ['agent', 'resolution', 'task', 'succeeded (repeats)', 'failed (repeats)', 'not counted'],
        r.flaky.map((f) => [f.agent, f.resolution, f.task_id, list(f.succeeded), list(f.failed), list(f.not_counted)]),
      ),
      '',
    );
  out.push('## Stopped runs (counted apart)', '');
  if (r.stopped.length === 0) out.push('None.', '');
  else
    out.push(
      mdTable(
        ['agent', 'resolution', 'task', 'repeat', 'status', 'reason'],
        r.stopped.map((e) => [e.agent, e.resolution, e.link ? `[${e.task_id}](${href(e.link)})` : e.task_id, String(e.repeat), e.status, stopWhy(e)]),
      ),
      '',
    );
  out.push('## Infra errors', '');
  if (r.infra_errors.length === 0) out.push('None.', '');
  else
    out.push(
      mdTable(
        ['agent', 'resolution', 'task', 'repeat', 'error'],
        r.infra_errors.map((e) => [e.agent, e.resolution, e.task_id, String(e.repeat), e.error ? `${e.error.code}: ${e.error.message.split('\n')[0]}` : '']),
      ),
      '',
    );
  out.push('## Invalid runs', '');
  if (r.invalid.length === 0) out.push('None.', '');
  else
    out.push(
      mdTable(
        ['agent', 'resolution', 'task', 'repeat', 'dir', 'reason'],
        r.invalid.map((e) => [e.agent, e.resolution, e.task_id, String(e.repeat), e.dir, `${e.reason.code}: ${e.reason.message.split('\n')[0]}`]),
      ),
      '',
    );
  if (r.qa?.length) {
    out.push(
      '## QA (explored apps)',
      '',
      mdTable(
        ['agent', 'app', 'url', 'findings', 'coverage', 'states', 'report'],
        r.qa.map((q) => [q.agent, q.task_id, `\`${q.url}\``, qaLine(q).split(', coverage')[0]!, `${q.coverage_pct}%`, String(q.states), `[qa-report](${href(q.link)})`]),
      ),
      '',
    );
  }
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
td.ok{background:#e7f6ea}td.fail{background:#fdecec}td.infra{background:#fff4d6}td.none{background:#fafafa}td.invalid{background:#ece7f6}td.flaky{background:#f6f2dc}td.stopped{background:#e8eef8}
td span.run{display:inline-block;margin-right:6px}
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

/** The cell class of one run. */
function runClass(run: RunScore): string {
  return run.invalid ? 'invalid' : run.infra_error ? 'infra' : run.stopped ? 'stopped' : run.success ? 'ok' : 'fail';
}

/** A stopped run's reason, else its error (`CODE: message`), first line. */
function stopWhy(e: { reason: string | null; error: { code: string; message: string } | null }): string {
  if (e.reason) return e.reason.split('\n')[0]!;
  return e.error ? `${e.error.code}: ${e.error.message.split('\n')[0]}` : '';
}

/** Hover text of one run. */
function runTitle(run: RunScore): string {
  if (run.invalid) return `${run.dir}: invalid: ${run.invalid.message}`;
  const model =
    run.model_calls === null
      ? ''
      : `; ${run.model_calls} model calls${run.input_tokens === null ? '' : `, ${run.input_tokens} in / ${run.output_tokens} out tokens`}${run.cost_usd === null ? '' : `, ${usd(run.cost_usd)}`}`;
  const blocked = run.domain_blocked === null ? '' : `; DOMAIN_BLOCKED ${run.domain_blocked}`;
  const judges = run.judges === null ? '' : `; judges: ${run.judges.map((j) => `${j.judge} ${j.skipped ? 'skipped' : j.verdict}`).join(', ')}`;
  return `${run.dir}: status ${run.status}${run.error ? `, ${run.error.code}` : ''}; success_index ${run.success_index ?? '–'}, finish_index ${run.finish_index ?? '–'}, complete ${run.complete}${model}${blocked}${judges}`;
}

function runCell(run: RunScore | undefined): string {
  if (!run) return '<td class="none"></td>';
  const text = esc(runText(run));
  const time = run.duration_ms === null ? '' : ` <small>${esc(secs(run.duration_ms))}</small>`;
  const body = run.link ? `<a href="${esc(href(run.link))}">${text}</a>` : text;
  return `<td class="${runClass(run)}" title="${esc(runTitle(run))}">${body}${firstSuccess(run)}${time}</td>`;
}

/** " step N" linking to a successful run's first successful step in its report, the evidence on hover ('' when none). */
function firstSuccess(run: RunScore): string {
  return run.success_link ? ` <a class="first" href="${esc(href(run.success_link))}" title="${esc(evidenceText(run))}">step ${run.success_index}</a>` : '';
}

/** An agent's runs of one task: one run as runCell, repeats as one link each (`#2 ✗`), the cell coloured by their agreement. */
function runsCell(runs: readonly RunScore[] | undefined): string {
  if (!runs || runs.length === 0) return '<td class="none"></td>';
  if (runs.length === 1 && runs[0]!.repeat === 1) return runCell(runs[0]);
  const counted = runs.filter((x) => !x.invalid && !x.infra_error && !x.stopped);
  const ok = counted.filter((x) => x.success).length;
  const cls = counted.length === 0 ? runClass(runs[0]!) : ok === counted.length ? 'ok' : ok === 0 ? 'fail' : 'flaky';
  const parts = runs.map((run) => {
    const mark = run.invalid ? 'invalid' : run.infra_error ? 'infra' : run.stopped ? `■ ${run.stopped}` : run.success ? '✓' : '✗';
    const text = esc(`#${run.repeat} ${mark}`);
    const body = run.link ? `<a href="${esc(href(run.link))}">${text}</a>` : text;
    return `<span class="run" title="${esc(runTitle(run))}">${body}${firstSuccess(run)}</span>`;
  });
  return `<td class="${cls}">${parts.join('')} <small>${ok}/${counted.length}</small></td>`;
}

/** scores.html (self-contained). */
export function renderScoresHtml(r: ScoreReport): string {
  const cost = withCost(r);
  const guard = withGuard(r);
  const aggCols = aggColumns(cost, guard);
  const aggNumeric = new Set(aggCols.map((_, i) => i + 1));
  const parts: string[] = [];
  parts.push(`<h1>Scores</h1><p class="meta">${r.runs.length} runs under <code>${esc(r.root)}</code>, scored ${esc(r.generated_at)}. ${esc(SUMMARY)}</p>`);
  parts.push(
    '<h2>Per agent</h2>',
    htmlTable(
      ['agent', ...aggCols],
      r.by_agent.map((a) => [esc(a.agent), ...aggCells(a, cost, guard).map(esc)]),
      aggNumeric,
    ),
  );
  // Resolutions and groups: agents side by side, success rate (runs) per cell.
  const side = (label: string, keys: Array<{ key: string[]; find: (agent: string) => AggregateRow | undefined }>, keyHeader: string[]) =>
    `<h2>${esc(label)}</h2>` +
    htmlTable(
      [...keyHeader, ...r.agents],
      keys.map((k) => [
        ...k.key.map(esc),
        ...r.agents.map((a) => {
          const agg = k.find(a);
          if (!agg) return '';
          const stopped = Object.values(agg.stopped).reduce((s, n) => s + n, 0);
          const apart = [stopped ? `${stopped} stopped` : '', agg.infra_errors ? `${agg.infra_errors} infra` : '', agg.invalid ? `${agg.invalid} invalid` : '']
            .filter(Boolean)
            .join(', ');
          const repeats =
            agg.k > 1 ? `<br><small>pass@1 ${esc(pct(agg.pass_at_1))}, pass@${agg.k} ${esc(pct(agg.pass_at_k))}, pass^${agg.k} ${esc(pct(agg.pass_hat_k))}</small>` : '';
          return `${esc(pct(agg.success_rate))} <small>(${agg.successes}/${agg.runs}${esc(assistedText(agg))}${apart ? `, ${apart}` : ''})</small>${repeats}`;
        }),
      ]),
    );
  parts.push(
    side(
      'Per resolution (success rate)',
      r.resolutions.map((res) => ({ key: [res], find: (a) => r.by_resolution.find((x) => x.agent === a && x.resolution === res) })),
      ['resolution'],
    ),
  );
  const groupKeys = [...new Map(r.by_group.map((g) => [`${g.group}\0${g.resolution}`, g])).values()].sort(
    (a, b) => a.group.localeCompare(b.group) || r.resolutions.indexOf(a.resolution) - r.resolutions.indexOf(b.resolution),
  );
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
    body.push(`<tr><td>${esc(row.task)}</td><td>${esc(row.resolution)}</td>${r.agents.map((a) => runsCell(row.cells.get(a))).join('')}</tr>`);
  }
  parts.push(
    '<h2>Per task</h2><p class="meta">✓ success, ✗ no success, ■ stopped for a reason (the status; counted apart); "stopped": finish was called once the task was complete; #n: the n-th repeat. Each cell links to the run\'s step report, or to its trace; "step N" links to the first successful step in the report (hover it for what the success check saw).</p>',
  );
  parts.push(`<table>\n${head}\n<tbody>\n${body.join('\n')}\n</tbody>\n</table>`);
  const taskLink = (e: { task_id: string; link: string | null }) => (e.link ? `<a href="${esc(href(e.link))}">${esc(e.task_id)}</a>` : esc(e.task_id));
  if (r.judges.length > 0) {
    parts.push(
      '<h2>Judges</h2><p class="meta">Pass rate: pass / (pass + fail) over the runs the judge decided; unknown: it could not tell; skipped: not asked (its <code>when</code>). Each run\'s verdicts and evidence are in its judges.json.</p>',
      htmlTable(
        ['agent', 'judge', 'type', 'pass rate', 'pass', 'fail', 'unknown', 'skipped', 'cost'],
        r.judges.map((j) => [esc(j.agent), esc(j.judge), esc(j.type), pct(j.pass_rate), String(j.pass), String(j.fail), String(j.unknown), String(j.skipped), usd(j.cost_usd)]),
        new Set([3, 4, 5, 6, 7, 8]),
      ),
      '<h2>Runs where judges disagree</h2>',
    );
    if (r.disagreements.length === 0) parts.push('<p>None.</p>');
    else
      parts.push(
        htmlTable(
          ['agent', 'resolution', 'task', 'repeat', 'verdicts', 'run'],
          r.disagreements.map((d) => [
            esc(d.agent),
            esc(d.resolution),
            taskLink(d),
            String(d.repeat),
            esc(verdictList(d.verdicts)),
            `<a class="judged-run" href="${esc(href(d.link ?? d.dir))}"><code>${esc(d.dir)}</code></a>`,
          ]),
        ),
      );
  }
  parts.push('<h2>Flaky tasks</h2>');
  if (r.flaky.length === 0) parts.push('<p>None.</p>');
  else {
    parts.push(
      htmlTable(
        ['agent', 'resolution', 'task', 'succeeded (repeats)', 'failed (repeats)', 'not counted'],
        r.flaky.map((f) => [esc(f.agent), esc(f.resolution), esc(f.task_id), esc(list(f.succeeded)), esc(list(f.failed)), esc(list(f.not_counted))]),
      ),
    );
  }
  parts.push('<h2>Stopped runs (counted apart)</h2>');
  if (r.stopped.length === 0) parts.push('<p>None.</p>');
  else {
    parts.push(
      htmlTable(
        ['agent', 'resolution', 'task', 'repeat', 'status', 'reason'],
        r.stopped.map((e) => [esc(e.agent), esc(e.resolution), taskLink(e), String(e.repeat), `<code>${esc(e.status)}</code>`, esc(stopWhy(e))]),
      ),
    );
  }
  parts.push('<h2>Infra errors</h2>');
  if (r.infra_errors.length === 0) parts.push('<p>None.</p>');
  else {
    parts.push(
      htmlTable(
        ['agent', 'resolution', 'task', 'repeat', 'error'],
        r.infra_errors.map((e) => [esc(e.agent), esc(e.resolution), taskLink(e), String(e.repeat), e.error ? `<code>${esc(e.error.code)}</code> ${esc(e.error.message)}` : '']),
      ),
    );
  }
  parts.push('<h2>Invalid runs</h2>');
  if (r.invalid.length === 0) parts.push('<p>None.</p>');
  else {
    parts.push(
      htmlTable(
        ['agent', 'resolution', 'task', 'repeat', 'dir', 'reason'],
        r.invalid.map((e) => [
          esc(e.agent),
          esc(e.resolution),
          taskLink(e),
          String(e.repeat),
          `<code>${esc(e.dir)}</code>`,
          `<code>${esc(e.reason.code)}</code> ${esc(e.reason.message)}`,
        ]),
      ),
    );
  }
  if (r.qa?.length) {
    parts.push(
      '<h2>QA (explored apps)</h2>',
      htmlTable(
        ['agent', 'app', 'url', 'findings', 'coverage', 'states'],
        r.qa.map((q) => [
          esc(q.agent),
          `<a href="${esc(href(q.link))}">${esc(q.task_id)}</a>`,
          `<code>${esc(q.url)}</code>`,
          esc(qaLine(q).split(', coverage')[0]!),
          `${q.coverage_pct}%`,
          String(q.states),
        ]),
      ),
    );
  }
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Scores</title><style>${CSS}</style></head>\n<body>\n${parts.join('\n')}\n</body></html>\n`;
}
