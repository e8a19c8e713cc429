/**
 * The Agent's constructor options and run() options: zod schemas, and their resolution into
 * the VNC URL, the CDP URL and the rest. A bad option throws AGENT_ERR_BAD_OPTIONS naming the field.
 */
import { z } from 'zod';
import { compileSentinel, type Sentinel } from '../cdp/sentinel.ts';
import { checkCdpUrl } from '../cdp/success.ts';
import { VncuaError } from '../errors.ts';
import { allowLayers, compileDomainPolicy, type AllowedDomains, type DomainPolicy } from '../guard/patterns.ts';
import { redactUrl } from '../redact.ts';
import { parseVncUrl } from '../rfb/transport.ts';
import { CostBudget } from './cost-budget.ts';
import type { RateGate } from './rate-gate.ts';
import { resolveRunSecrets, type RunSecrets } from '../secrets/run-secrets.ts';
import type { AuthBindingInput } from '../secrets/auth-bindings.ts';
import type { SecretRef } from '../secrets/sources.ts';
import type { RecorderFactory } from './recording.ts';

/** What the Agent's constructor takes. */
export interface AgentOptions {
  /** Directory for execution.json / partial_execution.json / result.json / error.txt (created if missing). */
  outputDir: string;
  /** The desktop's VNC endpoint: ws://, wss:// or tcp://host:port. Or give vncHost/vncPort (and vncScheme). */
  vncUrl?: string;
  /** Scheme used with vncHost/vncPort (default 'ws'). */
  vncScheme?: 'ws' | 'wss' | 'tcp';
  /** Host used with vncPort (default 127.0.0.1). */
  vncHost?: string;
  /** Port of the VNC endpoint, when vncUrl is not given. */
  vncPort?: number;
  /** Chromium's DevTools endpoint (http://host:port) for the success check; or give cdpPort. Without either, checks answer null. */
  cdpUrl?: string;
  /** DevTools port on vncHost (default 127.0.0.1), when cdpUrl is not given. */
  cdpPort?: number;
  /** VNC password (VNC Authentication). */
  password?: string;
  /**
   * Record the session's RFB streams into `outputDir/recording/` (default true; takes effect when the
   * Agent has a recorder: the `recorder` option, else its class's `defaultRecorder`).
   */
  record?: boolean;
  /**
   * What records a run (e.g. `recordingProxyRecorder` from `vncua/recorder`): default the class's
   * `defaultRecorder`, which is the recording proxy for the package root's Agent (`import { Agent } from 'vncua'`)
   * and none for the bare one (`vncua/agent`); null records nothing.
   */
  recorder?: RecorderFactory | null;
  /** The success sentinel checked after each action (default 'default': the page's HTML contains `>code#1</`, uitask's rule). */
  successCheck?: Sentinel;
  /**
   * After an action whose success check said "not yet", re-check in the background for this long (ms) while the
   * screen settles, and attribute a success seen then to that action (default 1000; 0 turns the re-checks off,
   * the run's final check stays).
   */
  successGraceMs?: number;
  /** The task given to the agent (available to subclasses as `this.task`). */
  task?: string;
  /** Longest time one act() call may take, in ms (default: no limit); past it the run ends with AGENT_ERR_STEP_TIMEOUT. */
  stepTimeoutMs?: number;
  /**
   * When outputDir already holds a finished run (execution.json or result.json): false (default) makes
   * run() end with OUTPUT_ERR_RUN_EXISTS, touching nothing; true moves that directory aside to
   * `outputDir.1` (`.2`, …) and runs into a fresh one. Nothing is ever deleted.
   */
  overwrite?: boolean;
  /**
   * Serve the run live while it runs (default true): watchers see the agent's screen and status, and a person
   * may take over (`vncua serve`'s live view; `<outputDir>/live.json` announces the endpoint, harness/live/endpoint.ts,
   * the Agent class's `liveEndpoint`).
   */
  live?: boolean;
  /**
   * The navigation guard (harness/guard): hosts the browser may reach. Empty or absent: everything not blocked.
   * A list of patterns (example.com, *.example.com, https://*.example.com, example.com:8443, file:), or several
   * lists a URL must all pass (outer to inner, e.g. CLI, suite, task). Enforced for every request over CDP
   * (needs cdpUrl); a malformed pattern is GUARD_ERR_BAD_PATTERN.
   */
  allowedDomains?: AllowedDomains;
  /** Hosts the browser must never reach (same patterns); blocked always wins over allowedDomains. */
  blockedDomains?: readonly string[];
  /**
   * The gate every model API request of this agent goes through (harness/agent/rate-gate.ts): `--rate-limit` and a
   * 429's backoff, shared by the runs that share the gate (the byom adapters use it; default none).
   */
  rateGate?: RateGate | null;
  /**
   * Per-domain authentication (harness/secrets/auth-bindings.ts): `{ domain, type, …Env }` bindings applied in the
   * browser over CDP (needs cdpUrl) on the first request to a matching domain. Values come from the variables named.
   */
  auth?: readonly AuthBindingInput[];
  /** Secrets an agent types with `{{secret:NAME}}`: name → `{ env: VARIABLE }` or (TS API only) the value itself. */
  secrets?: Readonly<Record<string, SecretRef>>;
  /** A .json or dotenv file the named variables are looked up in first (harness/secrets/sources.ts). */
  secretsFile?: string;
  /**
   * Cost cap of one run in USD (`--max-cost`): once the model calls recorded in the run (meta.model_calls[].cost_usd)
   * reach it, the run stops before its next model call (and before its next act()) with status `cost_cap`
   * (AGENT_ERR_COST_CAP). A call without a price with a cap set ends the run `error` (AGENT_ERR_COST_UNKNOWN). Default none.
   */
  maxCostUsd?: number;
  /** A cap shared by several runs (harness/agent/cost-budget.ts; `vncua eval --max-suite-cost`): reached, the run stops the same way (EVAL_ERR_SUITE_COST_CAP). */
  costBudget?: CostBudget | null;
  /**
   * What `finish({ status: 'needs_human' })` does: 'end' (default) ends the run with status needs_human; 'ask', while the
   * run is served live, asks for help instead (askForHelp(reason): the run pauses after the step until a person hands
   * back or resumes, then the agent goes on). Without a live endpoint 'ask' ends the run as 'end' does.
   */
  needsHuman?: 'end' | 'ask';
}

/** The options after validation, with the endpoints resolved. */
export interface ResolvedAgentOptions {
  outputDir: string;
  vncUrl: string;
  cdpUrl: string | null;
  password: string | undefined;
  record: boolean;
  /** The recorder runs use (null: none); runs record when `record` is on and this is set. */
  recorder: RecorderFactory | null;
  successCheck: Sentinel;
  successGraceMs: number;
  task: string | undefined;
  stepTimeoutMs: number;
  overwrite: boolean;
  live: boolean;
  /** The allow layers (each non-empty); empty: everything not blocked. */
  allowedDomains: string[][];
  /** The blocked patterns. */
  blockedDomains: string[];
  /** The compiled guard policy; null: no guard. */
  domainPolicy: DomainPolicy | null;
  /** The rate gate of model calls (null: none). */
  rateGate: RateGate | null;
  /** The run's secrets and auth bindings (values kept out of `options`: the Agent holds this privately). */
  secrets: RunSecrets;
  /** The run's cost cap in USD (null: none). */
  maxCostUsd: number | null;
  /** The shared cost cap (null: none). */
  costBudget: CostBudget | null;
  /** What finish({ status: 'needs_human' }) does. */
  needsHuman: 'end' | 'ask';
}

/** What run() takes. */
export interface RunOptions {
  /** Stop after this many act() calls (default 50). */
  maxSteps?: number;
  /** Cancel the run: the current act() is abandoned at once and the run ends 'cancelled'. */
  signal?: AbortSignal;
  /**
   * Settles once the desktop is ready for the first act() (the eval runner passes the task page's
   * waitForPageReady()): the run starts its recording and VNC connection meanwhile, and ends with status
   * `error` and this promise's error (0 steps) if it rejects. A function is called once the run's navigation guard
   * and auth bindings are attached (the eval runner opens a task page that needs a binding this way, so its very
   * first request carries it), and its promise is waited for the same way.
   */
  ready?: Promise<unknown> | (() => Promise<unknown>);
}

/** Default of run()'s maxSteps. */
export const DEFAULT_MAX_STEPS = 50;

/** Default of the successGraceMs option. */
export const DEFAULT_SUCCESS_GRACE_MS = 1000;
/** Largest successGraceMs accepted (a minute). */
export const MAX_SUCCESS_GRACE_MS = 60_000;

const port = z.number().int().min(1).max(65535);
const positiveMs = z.number().positive();

/** Schema of the constructor options (unknown keys are rejected, so a misspelt option is reported). */
export const agentOptionsSchema = z.strictObject({
  outputDir: z.string().min(1),
  vncUrl: z.string().min(1).optional(),
  vncScheme: z.enum(['ws', 'wss', 'tcp']).optional(),
  vncHost: z.string().min(1).optional(),
  vncPort: port.optional(),
  cdpUrl: z.string().min(1).optional(),
  cdpPort: port.optional(),
  password: z.string().optional(),
  record: z.boolean().optional(),
  recorder: z
    .custom<RecorderFactory>((v) => typeof v === 'function', 'must be a recorder function (options) => Promise<RecordingHandle>, or null')
    .nullable()
    .optional(),
  // Checked by compileSentinel below, for its precise message.
  successCheck: z.unknown().optional(),
  successGraceMs: z.number().int().min(0).max(MAX_SUCCESS_GRACE_MS).optional(),
  task: z.string().optional(),
  stepTimeoutMs: positiveMs.optional(),
  overwrite: z.boolean().optional(),
  live: z.boolean().optional(),
  allowedDomains: z.union([z.array(z.string()), z.array(z.array(z.string()))]).optional(),
  blockedDomains: z.array(z.string()).optional(),
  rateGate: z
    .custom<RateGate>(
      (v) => typeof v === 'object' && v !== null && ['acquire', 'backoff', 'onBackoff'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
      'must be a rate gate (an object with acquire, backoff and onBackoff: harness/agent/rate-gate.ts), or null',
    )
    .nullable()
    .optional(),
  // Checked by resolveRunSecrets, for codes naming the binding.
  auth: z.array(z.unknown()).optional(),
  secrets: z.record(z.string(), z.unknown()).optional(),
  secretsFile: z.string().min(1).optional(),
  maxCostUsd: z.number().positive().refine(Number.isFinite, 'must be a finite number').optional(),
  costBudget: z
    .custom<CostBudget>((v) => v instanceof CostBudget, 'must be a CostBudget (harness/agent/cost-budget.ts), or null')
    .nullable()
    .optional(),
  needsHuman: z.enum(['end', 'ask']).optional(),
});

/** Schema of run()'s options. */
export const runOptionsSchema = z.strictObject({
  maxSteps: z.number().int().min(1).optional(),
  signal: z.instanceof(AbortSignal).optional(),
  ready: z.union([z.instanceof(Promise), z.function()]).optional(),
});

/** AGENT_ERR_BAD_OPTIONS for `field`. */
export function badOption(field: string, value: unknown, why: string, cause?: unknown): VncuaError {
  // details never carry a secret: no password, and URLs (which may hold a desktop's token) redacted.
  const shown = field === 'password' ? '(not shown)' : typeof value === 'string' && /url|host/i.test(field) ? redactUrl(value) : value;
  return new VncuaError('AGENT_ERR_BAD_OPTIONS', `Agent option ${field}: ${why}.`, { cause, details: { field, value: shown } });
}

/** Turn the first zod issue into AGENT_ERR_BAD_OPTIONS naming the field. */
function fromZod(error: z.ZodError, input: unknown, what: string): VncuaError {
  const issue = error.issues[0]!;
  let field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') field = issue.keys[0] ?? field;
  const value = field && typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : input;
  const hint = issue.code === 'unrecognized_keys' ? `is not a known ${what} option` : issue.message;
  return badOption(field || '(options)', value, hint);
}

/**
 * Validate the constructor options and resolve the VNC and CDP endpoints; throws AGENT_ERR_BAD_OPTIONS.
 * `defaultRecorder` is the recorder when the options give none (the Agent passes its class's).
 */
export function resolveAgentOptions(input: unknown, defaultRecorder: RecorderFactory | null = null): ResolvedAgentOptions {
  const parsed = agentOptionsSchema.safeParse(input);
  if (!parsed.success) throw fromZod(parsed.error, input, 'Agent');
  const o = parsed.data;

  let vncUrl: string;
  if (o.vncUrl !== undefined) {
    if (o.vncPort !== undefined || o.vncScheme !== undefined) {
      throw badOption('vncUrl', o.vncUrl, 'give either vncUrl or vncPort (with vncHost/vncScheme), not both');
    }
    vncUrl = o.vncUrl;
  } else if (o.vncPort !== undefined) {
    const host = o.vncHost ?? '127.0.0.1';
    vncUrl = `${o.vncScheme ?? 'ws'}://${host.includes(':') ? `[${host}]` : host}:${o.vncPort}`;
  } else {
    throw badOption('vncUrl', undefined, 'the desktop is unknown: give vncUrl (ws://, wss:// or tcp://host:port) or vncPort');
  }
  try {
    parseVncUrl(vncUrl);
  } catch (e) {
    throw badOption(o.vncUrl !== undefined ? 'vncUrl' : 'vncHost', vncUrl, (e as Error).message, e);
  }

  let cdpUrl: string | null = null;
  if (o.cdpUrl !== undefined) {
    if (o.cdpPort !== undefined) throw badOption('cdpUrl', o.cdpUrl, 'give either cdpUrl or cdpPort, not both');
    cdpUrl = o.cdpUrl;
  } else if (o.cdpPort !== undefined) {
    const host = o.vncHost ?? '127.0.0.1';
    cdpUrl = `http://${host.includes(':') ? `[${host}]` : host}:${o.cdpPort}`;
  }
  if (cdpUrl !== null) {
    try {
      checkCdpUrl(cdpUrl);
    } catch (e) {
      throw badOption(o.cdpUrl !== undefined ? 'cdpUrl' : 'vncHost', cdpUrl, (e as Error).message, e);
    }
  }

  const successCheck = (o.successCheck ?? 'default') as Sentinel;
  try {
    compileSentinel(successCheck);
  } catch (e) {
    throw badOption('successCheck', o.successCheck, (e as Error).message, e);
  }

  // A bad pattern is GUARD_ERR_BAD_PATTERN itself (it names the pattern); a guard needs CDP to be enforced.
  const domainPolicy = compileDomainPolicy({ allowedDomains: o.allowedDomains, blockedDomains: o.blockedDomains });
  if (domainPolicy && cdpUrl === null) {
    throw new VncuaError('GUARD_ERR_NO_CDP', 'allowedDomains / blockedDomains need the browser over CDP to be enforced: give cdpUrl (or cdpPort) too.', {
      details: { field: o.allowedDomains ? 'allowedDomains' : 'blockedDomains' },
    });
  }

  const secrets = resolveRunSecrets({
    auth: o.auth,
    secrets: o.secrets as Record<string, SecretRef> | undefined,
    secretsFile: o.secretsFile,
    allowLiterals: true,
    where: 'Agent option',
  });
  if (secrets.bindings.length > 0 && cdpUrl === null) {
    throw new VncuaError('AUTH_ERR_NO_CDP', 'auth bindings are applied in the browser over CDP: give cdpUrl (or cdpPort) too.', { details: { field: 'auth' } });
  }

  return {
    outputDir: o.outputDir,
    vncUrl,
    cdpUrl,
    password: o.password,
    record: o.record ?? true,
    recorder: o.recorder === undefined ? defaultRecorder : o.recorder,
    successCheck,
    successGraceMs: o.successGraceMs ?? DEFAULT_SUCCESS_GRACE_MS,
    task: o.task,
    stepTimeoutMs: o.stepTimeoutMs ?? Infinity,
    overwrite: o.overwrite ?? false,
    live: o.live ?? true,
    allowedDomains: allowLayers(o.allowedDomains),
    blockedDomains: [...(o.blockedDomains ?? [])],
    domainPolicy,
    rateGate: o.rateGate ?? null,
    secrets,
    maxCostUsd: o.maxCostUsd ?? null,
    costBudget: o.costBudget ?? null,
    needsHuman: o.needsHuman ?? 'end',
  };
}

/** Validate run()'s options; throws AGENT_ERR_BAD_OPTIONS. */
export function resolveRunOptions(input: unknown): {
  maxSteps: number;
  signal: AbortSignal | undefined;
  ready: Promise<unknown> | (() => Promise<unknown>) | undefined;
} {
  const parsed = runOptionsSchema.safeParse(input ?? {});
  if (!parsed.success) throw fromZod(parsed.error, input, 'run()');
  return { maxSteps: parsed.data.maxSteps ?? DEFAULT_MAX_STEPS, signal: parsed.data.signal, ready: parsed.data.ready as Promise<unknown> | (() => Promise<unknown>) | undefined };
}
