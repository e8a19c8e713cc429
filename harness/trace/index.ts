/** Traces: the shared clock, the crash-safe writer, readers and schemas of execution.json / result.json, uitask's format both ways. */
export { now, roundMs } from './clock.ts';
export { TraceWriter, TRACE_FILES, type TraceWriterOptions } from './writer.ts';
export { readTrace, readResult, type ReadTrace } from './reader.ts';
export { parseExecution, parseUitaskExecution, detectSource, type TraceSource } from './parse.ts';
export {
  exportUitaskTrace,
  normalizeUitaskEntry,
  toUitaskEntry,
  uitaskKeysToChord,
  hasUitaskShape,
  pythonJson,
  type UitaskEntry,
  type UitaskExport,
} from './uitask.ts';
export { formatRunError } from './error-text.ts';
export { writeFileAtomic, type AtomicWriteOptions } from './atomic.ts';
export * from './schema.ts';
