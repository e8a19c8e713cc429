/** vncua: the package root. Everything users import comes from here. */
export { VncuaError, isVncuaError, ERROR_CODES } from './harness/errors.ts';
export type { ErrorCode } from './harness/errors.ts';
export { launchDesktop } from './harness/desktop/index.ts';
export type { Desktop, LaunchDesktopOptions, VncServerKind } from './harness/desktop/index.ts';
export { connectVnc, VncClient, DEFAULT_ENCODINGS } from './harness/rfb/index.ts';
export type { ConnectOptions, Screenshot } from './harness/rfb/index.ts';
export { Agent } from './harness/agent/index.ts';
export type { AgentOptions, AgentRunResult, RunOptions, Point, MouseButton, ClickType, ScrollDirection, NavigationDirection } from './harness/agent/index.ts';
export { SuccessChecker } from './harness/cdp/success.ts';
export type { Sentinel } from './harness/cdp/success.ts';
export { readTrace } from './harness/trace/index.ts';
export { reenact } from './harness/agent/index.ts';
export type { ReenactOptions, AgentBuilder, AgentContext } from './harness/agent/index.ts';
export { ScriptedAgent } from './agents/index.ts';

// Recording is on by default in every Agent run: importing the package root registers the recording proxy.
import './recorder/register.ts';
export { ReplayAgent, RandomAgent } from './agents/index.ts';
export type { ReplayAgentOptions, RandomAgentOptions } from './agents/index.ts';

// Bring your own model: the four adapters, and the base class with their shared loop guards.
export { ModelAgent } from './byom/model-agent.ts';
export type { ModelOptions, ModelAgentOptions } from './byom/model-agent.ts';
export { OpenAICuaAgent } from './byom/openai-cua/agent.ts';
export type { OpenAICuaOptions } from './byom/openai-cua/agent.ts';
export { AnthropicCuaAgent } from './byom/anthropic/agent.ts';
export type { AnthropicCuaOptions } from './byom/anthropic/agent.ts';
export { ChatAgent } from './byom/chat/agent.ts';
export type { ChatAgentOptions } from './byom/chat/agent.ts';
export { HttpPlannerAgent } from './byom/http/agent.ts';
export type { HttpPlannerAgentOptions } from './byom/http/agent.ts';

// Recordings: the proxy, the post-processor, the step report and the video.
export { startRecordingProxy } from './recorder/proxy/index.ts';
export type { RecordingProxy, RecordingProxyOptions } from './recorder/proxy/index.ts';
export { processRun, processRoot } from './recorder/process/index.ts';
export type { ProcessRunOptions, ProcessRunResult, ProcessRootOptions, ProcessRootResult } from './recorder/process/index.ts';
export { writeStepReport } from './recorder/report/index.ts';
export { writeVideo } from './recorder/video/index.ts';

// Benchmark runs: task files, the runner and the scores.
export { loadTaskFile, parseTasks } from './eval/tasks.ts';
export type { EvalTask, TaskFile } from './eval/tasks.ts';
export { runSuite } from './eval/runner.ts';
export type { RunSuiteOptions, SuiteSummary } from './eval/runner.ts';
export { writeScores, scoreRoot } from './eval/score.ts';
export type { ScoreReport, RunScore } from './eval/score.ts';
