/** `vncua/eval`: benchmark runs (task files, the runner and the scores). */
export { loadTaskFile, parseTasks } from './tasks.ts';
export type { EvalTask, TaskFile } from './tasks.ts';
export { runSuite } from './runner.ts';
export type { RunSuiteOptions, SuiteAgent, SuiteSummary } from './runner.ts';
export { writeScores, scoreRoot } from './score.ts';
export type { ScoreReport, RunScore } from './score.ts';
export { judgeRun, parseJudgeArg, parseJudgeSpec, readJudges, captureFinalPage, JUDGES_FILE } from './judges/index.ts';
export type { JudgeSpec, JudgeRecord, JudgesFile, Verdict, PriceFn } from './judges/index.ts';
