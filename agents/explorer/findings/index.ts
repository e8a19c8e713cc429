/** The explorer's findings: the monitor (an ExplorerObserver), the event classifiers and the blank-frame test. */
export { FindingsMonitor, type FindingsMonitorOptions } from './monitor.ts';
export { isBlankFrame, type BlankOptions, type BlankVerdict, type FramePixels } from './blank.ts';
export { isReportedStatus, type RawFinding } from './classify.ts';
