/**
 * vncua: the package root. Everything users import is here; the subpath entries (`vncua/rfb`,
 * `vncua/desktop`, `vncua/agent`, `vncua/recorder`, `vncua/eval`, `vncua/agents`, `vncua/byom/*`)
 * each load only their own part (and `vncua/rfb` neither a model SDK nor playwright-core).
 *
 * Recording is on by default here: the Agent classes exported below are the bare ones (harness/,
 * agents/, byom/) with the recording proxy as their `defaultRecorder`, so every run records into
 * `<outputDir>/recording/` unless given `record: false` or `recorder: null`. The bare classes
 * (`vncua/agent`, `vncua/agents`, `vncua/byom/*`) record only when given a `recorder`.
 * Importing this module has no side effect.
 */
import { Agent as BareAgent, type RecorderFactory } from './harness/agent/index.ts';
import * as agents from './agents/index.ts';
import { ModelAgent as BareModelAgent, type ModelOptions } from './byom/model-agent.ts';
import { OpenAICuaAgent as BareOpenAICuaAgent } from './byom/openai-cua/agent.ts';
import { AnthropicCuaAgent as BareAnthropicCuaAgent } from './byom/anthropic/agent.ts';
import { ChatAgent as BareChatAgent } from './byom/chat/agent.ts';
import { HttpPlannerAgent as BareHttpPlannerAgent } from './byom/http/agent.ts';
import { recordingProxyRecorder } from './recorder/recorder-factory.ts';

export { VncuaError, isVncuaError, ERROR_CODES } from './harness/errors.ts';
export type { ErrorCode } from './harness/errors.ts';
export { launchDesktop } from './harness/desktop/index.ts';
export type { Desktop, LaunchDesktopOptions, VncServerKind } from './harness/desktop/index.ts';
export { connectVnc, VncClient, DEFAULT_ENCODINGS } from './harness/rfb/index.ts';
export type { ConnectOptions, Screenshot } from './harness/rfb/index.ts';
export type { AgentOptions, AgentRunResult, FinishParams, RunOptions, Point, MouseButton, ClickType, ScrollDirection, NavigationDirection } from './harness/agent/index.ts';
export type { RecorderFactory, RecorderStartOptions, RecordingHandle } from './harness/agent/index.ts';
export { SuccessChecker } from './harness/cdp/success.ts';
export type { Sentinel } from './harness/cdp/success.ts';
export { readTrace } from './harness/trace/index.ts';
export { reenact } from './harness/agent/index.ts';
export type { ReenactOptions, AgentBuilder, AgentContext } from './harness/agent/index.ts';
export { CostBudget, LocalRateGate, parseRateLimits } from './harness/agent/index.ts';
export type { RateGate, RateCall, RateGrant, RateBackoff, RateRule } from './harness/agent/index.ts';

/** The base class of every agent (subclass it, implement act()); its runs record through the recording proxy by default. */
export abstract class Agent extends BareAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}

// The shipped agents, recording by default like Agent.
export class ScriptedAgent extends agents.ScriptedAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class ReplayAgent extends agents.ReplayAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class RandomAgent extends agents.RandomAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export type { ReplayAgentOptions, RandomAgentOptions, ScriptedAgentOptions } from './agents/index.ts';

// Bring your own model: the four adapters, and the base class with their shared loop guards (recording by default like Agent).
export abstract class ModelAgent<S extends ModelOptions = ModelOptions> extends BareModelAgent<S> {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class OpenAICuaAgent extends BareOpenAICuaAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class AnthropicCuaAgent extends BareAnthropicCuaAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class ChatAgent extends BareChatAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export class HttpPlannerAgent extends BareHttpPlannerAgent {
  static override defaultRecorder: RecorderFactory | null = recordingProxyRecorder;
}
export type { ModelOptions, ModelAgentOptions } from './byom/model-agent.ts';
export type { OpenAICuaOptions } from './byom/openai-cua/agent.ts';
export type { AnthropicCuaOptions } from './byom/anthropic/agent.ts';
export type { ChatAgentOptions } from './byom/chat/agent.ts';
export type { HttpPlannerAgentOptions } from './byom/http/agent.ts';

// Recordings: the proxy (and recordingProxyRecorder, the Agent's recorder option), the post-processor, the step report and the video.
export { recordingProxyRecorder };
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
