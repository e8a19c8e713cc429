/**
 * `QaExplorerAgent`: the explorer as `vncua run|eval --agent explorer` runs it: the findings monitor
 * (agents/explorer/findings/) watches the run beside any observers given, and once run() ends (whatever the reason)
 * the QA report is written into the output directory (qa-report.json, .md, .html), with the requests the navigation
 * guard blocked that the monitor could not see (the trace's meta.domain_blocked: findings/blocked.ts). A report that cannot be written
 * is one line in the log (its code and message); the run's result stays as it was.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunResult, RunOptions } from '../../../harness/agent/index.ts';
import { errorInfo } from '../../../harness/errors.ts';
import { ExplorerAgent } from '../agent.ts';
import { readTrace } from '../../../harness/trace/reader.ts';
import { blockedFromTrace } from '../findings/blocked.ts';
import { FindingsMonitor, type FindingsMonitorOptions } from '../findings/monitor.ts';
import type { ExplorerAgentOptions } from '../options.ts';
import { writeQaReport } from './write.ts';

/** Options of QaExplorerAgent: the explorer's, plus the findings monitor's (false: no monitor). */
export interface QaExplorerOptions extends ExplorerAgentOptions {
  findings?: FindingsMonitorOptions | false;
}

/** The explorer with its findings monitor and QA report (see the file comment). */
export class QaExplorerAgent extends ExplorerAgent {
  /** The run's findings monitor (null when turned off). */
  readonly monitor: FindingsMonitor | null;
  readonly #logLine: (line: string) => void;

  constructor(options: QaExplorerOptions) {
    const { findings, ...rest } = options;
    const monitor = findings === false ? null : new FindingsMonitor(findings ?? {});
    super({ ...rest, observers: [...(monitor ? [monitor] : []), ...(rest.observers ?? [])] });
    this.monitor = monitor;
    this.#logLine = rest.log ?? ((line) => void process.stderr.write(`${line}\n`));
  }

  /**
   * run(), then the QA report: when the exploration started (it wrote explorer-summary.json), and also when the run
   * ended in error before it could start (an unreachable start page: the report says so, with result.json's error),
   * but never into a directory the run refused to write (OUTPUT_ERR_RUN_EXISTS, a run already in progress).
   */
  override async run(options: RunOptions = {}): Promise<AgentRunResult> {
    const startedAt = new Date().toISOString();
    let result: AgentRunResult | undefined;
    try {
      result = await super.run(options);
      return result;
    } finally {
      this.monitor?.close();
      const dir = this.options.outputDir;
      const explored = existsSync(join(dir, 'explorer-summary.json'));
      const refused = result?.error?.code === 'OUTPUT_ERR_RUN_EXISTS' || result?.error?.code === 'AGENT_ERR_ILLEGAL_STATE';
      if (explored || (result?.status === 'error' && !refused)) {
        try {
          const summary = this.summary();
          if (!explored) {
            summary.endReason = 'error';
            summary.startedAt ||= startedAt;
          }
          const findings = this.findings();
          // Requests the guard blocked that the monitor could not see over CDP (from the trace's meta.domain_blocked).
          const trace = await readTrace(dir).catch(() => null);
          if (trace) findings.push(...blockedFromTrace(trace.entries, findings));
          await writeQaReport(dir, summary, findings);
        } catch (e) {
          const { code, message } = errorInfo(e, 'QA_ERR_WRITE');
          this.#logLine(`explorer: the QA report was not written: ${code}: ${message}`);
        }
      }
    }
  }
}
