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
