/**
 * The problems planted in the explorer's test app (app/), in one place: the end-to-end test and the bench
 * (bench/explorer-findings.ts) check a run found each of them, and nothing else reads the app's source for them.
 */
import type { Finding, FindingKind } from '../types.ts';

/** One planted problem: the kind of finding it must produce and how to recognise that finding. */
export interface PlantedProblem {
  /** Short name, for messages. */
  id: string;
  kind: FindingKind;
  /** Where it is and how to trigger it. */
  how: string;
  /** Matches the finding's message or excerpt. */
  match: RegExp;
}

/** What is planted in app/ (see app/app.js and server.ts). */
export const PLANTED: readonly PlantedProblem[] = [
  { id: 'console-error', kind: 'console_error', how: 'index.html: open the "Errors" tab', match: /planted: the error log failed to load/ },
  { id: 'http-500', kind: 'http_error', how: 'index.html: follow the "Billing" link (/broken answers 500)', match: /HTTP 500\b.*\/broken/ },
  { id: 'frozen', kind: 'frozen', how: 'index.html: click "Recalculate totals" (its handler never returns)', match: /froze/ },
  { id: 'modal-form-exception', kind: 'uncaught_exception', how: 'index.html: click "Contact us", fill the form in the modal, click "Send"', match: /planted: cannot read the reply/ },
];

/** The finding that shows `p` was found, if any. */
export function findingFor(p: PlantedProblem, findings: readonly Finding[]): Finding | undefined {
  return findings.find((f) => f.kind === p.kind && (p.match.test(f.message) || p.match.test(f.excerpt ?? '')));
}

/** The planted problems no finding shows. */
export function missedPlanted(findings: readonly Finding[]): PlantedProblem[] {
  return PLANTED.filter((p) => !findingFor(p, findings));
}
