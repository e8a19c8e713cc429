/**
 * One step of a run as the page lists it (the trace viewer's step list and the live view's): action, params,
 * duration, verdict and evidence, error, and the model calls and messages an adapter recorded in `meta`.
 */

import { esc, usd } from './common.ts';

/** A trace entry as the page receives it (harness/trace/schema.ts TraceEntry, in JSON). */
export interface Entry {
  index: number;
  action: string;
  params: Record<string, unknown>;
  task_marked_complete: boolean | null;
  started_at?: number;
  ended_at?: number;
  duration_ms?: number;
  error?: { code: string; message: string };
  success_check?: { phase: string; rule: string; pattern: string; snippet: string; url: string; at: number };
  meta?: Record<string, unknown>;
  /** "human" for what a person did during a takeover. */
  actor?: 'agent' | 'human';
}

/** The step's element (`.step#step-INDEX`, `data-index`), as HTML. */
export function stepHtml(e: Entry): string {
  const verdict = e.task_marked_complete === null ? '' : `<span class="verdict-${e.task_marked_complete}">${e.task_marked_complete ? 'complete' : 'not complete'}</span>`;
  const ev = e.success_check ? `<div class="meta">evidence (${esc(e.success_check.phase)}, ${esc(e.success_check.rule)}): ${esc(e.success_check.snippet)}</div>` : '';
  const err = e.error ? `<div class="err">${esc(e.error.code)}: ${esc(e.error.message)}</div>` : '';
  const meta = e.meta ? `<div class="meta">${esc(describeMeta(e.meta))}</div>` : '';
  const actor = e.actor === 'human' ? ' <span class="actor-human" title="a person did this (takeover)">person</span>' : '';
  return `<div class="step${e.actor === 'human' ? ' human' : ''}" id="step-${e.index}" data-index="${e.index}"><span class="act">#${e.index} ${esc(e.action)}</span>${actor} ${e.duration_ms == null ? '' : `${e.duration_ms.toFixed(0)} ms`} ${verdict}<div class="params">${esc(JSON.stringify(e.params))}</div>${err}${ev}${meta}</div>`;
}

/** Model calls (latency, tokens, cost), the model's text and reasoning, and anything else the adapter recorded. */
function describeMeta(meta: Record<string, unknown>): string {
  const lines: string[] = [];
  const calls = Array.isArray(meta.model_calls) ? (meta.model_calls as Array<Record<string, unknown>>) : [];
  for (const c of calls) {
    const u = (c.usage ?? {}) as Record<string, unknown>;
    const t = (c.tokens ?? {}) as Record<string, number | undefined>;
    // The adapters' normalized tokens (the whole prompt, cache included) when recorded, else the API's own usage names.
    const tok =
      typeof t.input === 'number'
        ? [`in ${t.input}${t.cached_input ? ` (${t.cached_input} cached)` : ''}${t.cache_write ? ` (${t.cache_write} cache writes)` : ''}`, `out ${t.output}`]
        : ['input_tokens', 'output_tokens', 'prompt_tokens', 'completion_tokens', 'total_tokens'].filter((k) => typeof u[k] === 'number').map((k) => `${k} ${u[k]}`);
    lines.push(
      `model call: ${typeof c.latency_ms === 'number' ? `${Math.round(c.latency_ms)} ms` : ''} ${tok.join(', ')}${typeof c.cost_usd === 'number' ? `, ${usd(c.cost_usd)}` : ''}`.trim(),
    );
  }
  for (const [k, v] of Object.entries(meta)) {
    if (k === 'model_calls') continue;
    lines.push(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return lines.join('\n');
}
