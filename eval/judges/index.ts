/** Judges beside the success sentinel: specs, verdicts in judges.json, the final page, the heuristic and LLM judges. */
export { judgeRun, sampleDraw, unsure, FINAL_SCREEN_PNG, type JudgeRunOptions } from './judge.ts';
export { JUDGES_FILE, readJudges, writeJudges, disagrees, type JudgeRecord, type JudgesFile, type Verdict } from './record.ts';
export { captureFinalPage, readFinalPage, FINAL_PAGE_FILE, FINAL_PAGE_PNG, type FinalPage } from './page.ts';
export { parseJudgeArg, parseJudgeSpec, judgeSpecProblem, judgeNames, withSentinel, needsLivePage, type JudgeSpec } from './spec.ts';
export { askLlmJudge, parseLlmAnswer, type PriceFn, type LlmJudgeInput } from './llm.ts';
export { findSigns, screenHashes, HEURISTIC_DEFAULTS, type Sign } from './heuristic.ts';
export { matchUrl, globToRegExp } from './url-match.ts';
