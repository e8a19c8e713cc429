/** Import of recordings made by the Python uitask harness: timing inferred from the client's input. */
export { ALIGN_WARNINGS, alignUitaskTrace } from './align.ts';
export type { ActionMatch, AlignedEntry, AlignOptions, AlignResult, AlignWarning, AlignWarningCode, ClientInputEvent } from './align.ts';
export { POSITION_TOLERANCE_PX } from './expect.ts';
