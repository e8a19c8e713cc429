/**
 * `OpenAICuaAgent`: OpenAI computer use through the Responses API and the official `openai` SDK.
 *
 * One act() is one Responses call plus the actions of its computer call(s):
 * 1. capture the screen (scaled to `screenshotSize`, if given);
 * 2. first call: a user message with the task and that screenshot; later calls: a
 *    `computer_call_output` per pending computer call, with the screenshot as a data URL, the page's
 *    `current_url` (from CDP) and the safety checks the policy acknowledged; chained to the last
 *    response by `previous_response_id`;
 * 3. a response with no computer call ends the run: `finish` with the model's text as `message`; when its
 *    message holds a `refusal` content part, `finish({ status: 'sensitive_action', reason })` with the refusal;
 * 4. otherwise: safety checks the policy does not acknowledge end the run with status
 *    `sensitive_action` (AGENT_ERR_SAFETY_CHECK, the checks as result.json's reason); else each action (one with the preview tool, several with the batched
 *    `computer` tool) is mapped to vncua primitives (see actions.ts) and performed.
 * Each call's latency, usage, response id and attempts go into `meta.model_calls` of the next trace
 * entry (and the request's size in bytes into `meta.request_bytes`).
 *
 * Tool forms: `preview` sends `{ type: "computer_use_preview", display_width, display_height,
 * environment }` (for the `computer-use-preview` model); `computer` sends the GA `{ type: "computer" }`
 * tool, whose computer calls carry batched `actions` (for `gpt-5.4` and later). Default: `preview`
 * when the model's name starts with `computer-use-preview`, else `computer`.
 */
import OpenAI from 'openai';
import type {
  ComputerTool,
  ComputerUsePreviewTool,
  Response,
  ResponseComputerToolCall,
  ResponseComputerToolCallOutputScreenshot,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { z } from 'zod';
import type { ScreenCapture } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import type { RateCall } from '../../harness/agent/rate-gate.ts';
import { ModelAgent, modelAgentOptionsSchema, type ModelAgentOptions } from '../model-agent.ts';
import { positiveMs, requireApiKey, requiredTask, wholeNumber } from '../options.ts';
import { mapComputerAction } from './actions.ts';
import { mapApiError, type CallContext } from './api-errors.ts';
import { coordinateMap } from './coords.ts';

/** A pending safety check as the API sends it. */
export type SafetyCheck = ResponseComputerToolCall.PendingSafetyCheck;

/** Which safety checks to acknowledge: a list of check codes, or a function of the check. */
export type SafetyCheckPolicy = readonly string[] | ((check: SafetyCheck) => boolean);

/** The computer tool's two forms. */
export type ToolForm = 'preview' | 'computer';

/** Default model. */
export const DEFAULT_OPENAI_CUA_MODEL = 'computer-use-preview';
/** Default timeout of one Responses call (ms). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
/** Default retries of one Responses call (the SDK's: 429, 5xx, 408, 409, connection errors). */
export const DEFAULT_MAX_RETRIES = 2;

/** OpenAICuaAgent's own options (besides the Agent's and the ModelAgent's, whose `screenshotSize` is also the display told to the preview tool). */
export interface OpenAICuaOwnOptions {
  /** `preview` (computer_use_preview tool) or `computer` (the batched GA tool). Default: from the model name (see the file comment). */
  toolForm?: ToolForm;
  /** The preview tool's `environment` (default `browser`). */
  environment?: ComputerUsePreviewTool['environment'];
  /** The request's `truncation` (default `auto`, which the preview tool requires). */
  truncation?: 'auto' | 'disabled';
  /** Safety checks to acknowledge (default none: any pending safety check ends the run with status safety_check). */
  acknowledgeSafetyChecks?: SafetyCheckPolicy;
  /** The request's `instructions` (system prompt), if any. */
  instructions?: string;
  /** Send `current_url` with each screenshot (default: true with the preview tool, false with the computer tool). */
  sendCurrentUrl?: boolean;
  /** Timeout of one Responses call in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** Retries of one Responses call by the SDK (default 2). */
  maxRetries?: number;
}

/** Options of OpenAICuaAgent: the Agent's, the ModelAgent's and its own. */
export type OpenAICuaOptions = ModelAgentOptions & OpenAICuaOwnOptions;

/** Schema of OpenAICuaAgent's options (AGENT_ERR_BAD_OPTIONS naming the field). */
export const openAICuaOptionsSchema = modelAgentOptionsSchema
  .extend({
    task: requiredTask,
    toolForm: z.enum(['preview', 'computer'], { error: 'must be "preview" or "computer"' }).optional(),
    environment: z.enum(['browser', 'linux', 'ubuntu', 'windows', 'mac'], { error: 'must be browser, linux, ubuntu, windows or mac' }).optional(),
    truncation: z.enum(['auto', 'disabled'], { error: 'must be "auto" or "disabled"' }).optional(),
    acknowledgeSafetyChecks: z
      .union([z.array(z.string()), z.custom<(check: SafetyCheck) => boolean>((v) => typeof v === 'function')], {
        error: 'must be a list of safety check codes or a function (check) => boolean',
      })
      .optional(),
    instructions: z.string({ error: 'must be a string' }).optional(),
    sendCurrentUrl: z.boolean({ error: 'must be true or false' }).optional(),
    requestTimeoutMs: positiveMs.optional(),
    maxRetries: wholeNumber(0, 10).optional(),
  })
  .superRefine(requireApiKey('OPENAI_API_KEY'));

/** One computer call waiting for its output (sent with the next request). */
interface PendingCall {
  callId: string;
  acknowledged: SafetyCheck[];
}

/** The user message that starts the conversation: the task and the first screenshot. */
function firstInput(task: string, shot: ScreenCapture, detail: 'auto' | 'original'): ResponseInputItem[] {
  return [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: task },
        { type: 'input_image', image_url: dataUrl(shot), detail },
      ],
    },
  ];
}

function dataUrl(shot: ScreenCapture): string {
  return `data:${shot.mimeType};base64,${shot.base64}`;
}

/** The text of a response's message items (refusals included), joined. */
function responseText(resp: Response): string {
  const parts: string[] = [];
  for (const item of resp.output) {
    if (item.type !== 'message') continue;
    for (const c of item.content) {
      if (c.type === 'output_text') parts.push(c.text);
      else if (c.type === 'refusal') parts.push(c.refusal);
    }
  }
  return parts.join('');
}

/** The text of the refusal content parts of a response's messages, or null when there is none. */
function responseRefusal(resp: Response): string | null {
  const parts: string[] = [];
  for (const item of resp.output) {
    if (item.type !== 'message') continue;
    for (const c of item.content) if (c.type === 'refusal' && typeof c.refusal === 'string') parts.push(c.refusal);
  }
  return parts.length === 0 ? null : parts.join('\n');
}

/** Reasoning summaries in a response, if the model gave any. */
function reasoningSummaries(resp: Response): string[] {
  const out: string[] = [];
  for (const item of resp.output) {
    if (item.type !== 'reasoning') continue;
    for (const s of item.summary ?? []) if (typeof s?.text === 'string' && s.text) out.push(s.text);
  }
  return out;
}

/** MODEL_ERR_BAD_RESPONSE naming what is wrong. */
function badResponse(why: string, details: Record<string, unknown> = {}): VncuaError {
  return new VncuaError('MODEL_ERR_BAD_RESPONSE', `The OpenAI API answered with a response that does not match the Responses API: ${why}.`, { details });
}

/** Check the parts of a response this adapter relies on (the SDK does not validate bodies). */
function checkResponse(resp: unknown): Response {
  const r = resp as Partial<Response> | null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw badResponse(`the body is ${Array.isArray(r) ? 'an array' : typeof r}, not a response object`);
  if (typeof r.id !== 'string' || r.id === '') throw badResponse('it has no id');
  if (!Array.isArray(r.output)) throw badResponse('it has no output list', { id: r.id });
  r.output.forEach((item, i) => {
    if (typeof item !== 'object' || item === null) throw badResponse(`output[${i}] is not an object`, { id: r.id });
    if (item.type === 'computer_call') {
      const c = item as Partial<ResponseComputerToolCall>;
      if (typeof c.call_id !== 'string' || c.call_id === '') throw badResponse(`output[${i}] is a computer_call without call_id`, { id: r.id });
      if (c.action === undefined && !Array.isArray(c.actions)) throw badResponse(`output[${i}] is a computer_call with neither action nor actions`, { id: r.id });
      if (c.pending_safety_checks !== undefined && c.pending_safety_checks !== null && !Array.isArray(c.pending_safety_checks)) {
        throw badResponse(`output[${i}].pending_safety_checks is not a list`, { id: r.id });
      }
    } else if (item.type === 'message' && !Array.isArray((item as { content?: unknown }).content)) {
      throw badResponse(`output[${i}] is a message without content`, { id: r.id });
    }
  });
  return r as Response;
}

/** A response whose status says the model failed: MODEL_ERR_* from its `error`. */
function failedResponse(resp: Response): VncuaError | null {
  if (resp.status !== 'failed' && !resp.error) return null;
  const code = resp.error?.code ?? 'unknown';
  const msg = resp.error?.message ?? 'no message';
  const details = { id: resp.id, api_code: code };
  if (code === 'rate_limit_exceeded') return new VncuaError('MODEL_ERR_RATE_LIMITED', `The OpenAI response ${resp.id} failed: ${msg} (${code}).`, { details });
  if (code === 'server_error') return new VncuaError('MODEL_ERR_SERVER', `The OpenAI response ${resp.id} failed: ${msg} (${code}).`, { details });
  return new VncuaError('MODEL_ERR_REQUEST', `The OpenAI response ${resp.id} failed: ${msg} (${code}).`, { details });
}

/** An Agent driven by OpenAI's computer-use tool through the Responses API. */
export class OpenAICuaAgent extends ModelAgent<z.output<typeof openAICuaOptionsSchema>> {
  /** The adapter's name in `--rate-limit` rules and backoffs. */
  static override adapterName = 'openai-cua';
  /** The SDK client (baseURL, key, retries and timeout as configured). */
  readonly client: OpenAI;
  /** The model name sent. */
  readonly modelName: string;
  /** The tool form in use. */
  readonly toolForm: ToolForm;
  readonly #own: Required<Pick<OpenAICuaOwnOptions, 'environment' | 'truncation' | 'sendCurrentUrl' | 'requestTimeoutMs' | 'maxRetries'>> &
    Pick<OpenAICuaOwnOptions, 'acknowledgeSafetyChecks' | 'instructions'>;
  #previousResponseId: string | undefined;
  #pending: PendingCall[] = [];
  #started = false;

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field) and makes the SDK client. Connects nothing. */
  constructor(options: OpenAICuaOptions) {
    super(options, openAICuaOptionsSchema);
    const o = this.settings;
    this.modelName = o.model ?? DEFAULT_OPENAI_CUA_MODEL;
    this.toolForm = o.toolForm ?? (this.modelName.startsWith('computer-use-preview') ? 'preview' : 'computer');
    this.#own = {
      environment: o.environment ?? 'browser',
      truncation: o.truncation ?? 'auto',
      sendCurrentUrl: o.sendCurrentUrl ?? this.toolForm === 'preview',
      requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      maxRetries: o.maxRetries ?? DEFAULT_MAX_RETRIES,
      acknowledgeSafetyChecks: o.acknowledgeSafetyChecks,
      instructions: o.instructions,
    };
    this.client = new OpenAI({
      apiKey: o.apiKey ?? process.env.OPENAI_API_KEY,
      baseURL: o.baseURL,
      maxRetries: this.#own.maxRetries,
      timeout: this.#own.requestTimeoutMs,
      fetch: this.modelFetch(),
    });
  }

  /** Calls are keyed by the model actually sent (its default included). */
  protected override rateCall(): RateCall {
    return { ...super.rateCall(), model: this.modelName };
  }

  /** A new run starts a new conversation. */
  override run(...args: Parameters<ModelAgent['run']>): ReturnType<ModelAgent['run']> {
    this.#previousResponseId = undefined;
    this.#pending = [];
    this.#started = false;
    return super.run(...args);
  }

  /** One Responses call and the actions of its computer call(s); true when the model stopped calling the tool. */
  override async act(): Promise<boolean> {
    const shot = await this.observe();
    if (this.signal.aborted) return false;
    const map = coordinateMap({ width: shot.width, height: shot.height }, { width: shot.screenWidth, height: shot.screenHeight });
    const input = this.#started ? await this.#callOutputs(shot) : firstInput(this.task!, shot, this.toolForm === 'computer' ? 'original' : 'auto');
    const blocked = this.domainObservation();
    if (blocked) input.push({ role: 'user', content: [{ type: 'input_text', text: blocked }] });
    const tool: ComputerUsePreviewTool | ComputerTool =
      this.toolForm === 'preview'
        ? { type: 'computer_use_preview', display_width: shot.width, display_height: shot.height, environment: this.#own.environment }
        : { type: 'computer' };
    const body: ResponseCreateParamsNonStreaming = {
      model: this.modelName,
      tools: [tool],
      input,
      truncation: this.#own.truncation,
      ...(this.#previousResponseId !== undefined ? { previous_response_id: this.#previousResponseId } : {}),
      ...(this.#own.instructions !== undefined ? { instructions: this.#own.instructions } : {}),
    };
    const resp = await this.#create(body);
    this.#previousResponseId = resp.id;
    this.#started = true;
    this.#pending = [];

    const summaries = reasoningSummaries(resp);
    if (summaries.length > 0) this.attachMeta({ reasoning: summaries });
    const calls = resp.output.filter((o): o is ResponseComputerToolCall => o.type === 'computer_call');
    const text = responseText(resp);
    if (calls.length === 0) {
      const refusal = responseRefusal(resp);
      // A refusal content part: the model will not go on; the run stops as sensitive_action, the refusal its reason.
      await this.finish(refusal === null ? { message: text } : { message: text, status: 'sensitive_action', reason: refusal });
      return true;
    }
    if (text) this.attachMeta({ model_text: text });

    // Safety checks: every pending check must be acknowledged by the policy, or the run stops here.
    const refused: SafetyCheck[] = [];
    for (const call of calls) {
      const acknowledged: SafetyCheck[] = [];
      for (const check of call.pending_safety_checks ?? []) (this.#acknowledges(check) ? acknowledged : refused).push(check);
      this.#pending.push({ callId: call.call_id, acknowledged });
    }
    if (refused.length > 0) {
      const list = refused.map((c) => `${c.id} (${c.code ?? 'no code'}: ${c.message ?? 'no message'})`).join('; ');
      // A check asks a person to approve the next action: the agent does not act without that approval.
      this.endRun(
        'sensitive_action',
        {
          code: 'AGENT_ERR_SAFETY_CHECK',
          message: `The model raised safety checks that acknowledgeSafetyChecks does not cover: ${list}. Acknowledge these codes to continue past them.`,
        },
        `Safety checks need a person's approval: ${list}`,
      );
      return false;
    }
    const acknowledged = this.#pending.flatMap((p) => p.acknowledged);
    if (acknowledged.length > 0) this.attachMeta({ safety_checks_acknowledged: acknowledged });

    for (const call of calls) {
      const actions: unknown[] = Array.isArray(call.actions) ? call.actions : [call.action];
      for (const action of actions) {
        const { steps, notes } = mapComputerAction(action, map);
        if (notes) this.attachMeta({ openai_notes: [notes] });
        for (const step of steps) {
          if (this.signal.aborted) return false;
          await this.perform(step);
        }
      }
    }
    return false;
  }

  /** The computer_call_output items for the calls of the last response, all with this screenshot. */
  async #callOutputs(shot: ScreenCapture): Promise<ResponseInputItem[]> {
    const url = this.#own.sendCurrentUrl ? await this.currentUrl() : null;
    const image = dataUrl(shot);
    return this.#pending.map((p): ResponseInputItem.ComputerCallOutput => {
      const output: ResponseComputerToolCallOutputScreenshot & { current_url?: string } = { type: 'computer_screenshot', image_url: image };
      if (url) output.current_url = url;
      return {
        type: 'computer_call_output',
        call_id: p.callId,
        output,
        ...(p.acknowledged.length > 0 ? { acknowledged_safety_checks: p.acknowledged.map((c) => ({ id: c.id, code: c.code ?? null, message: c.message ?? null })) } : {}),
      };
    });
  }

  #acknowledges(check: SafetyCheck): boolean {
    const policy = this.#own.acknowledgeSafetyChecks;
    if (policy === undefined) return false;
    if (typeof policy === 'function') return policy(check) === true;
    return typeof check.code === 'string' && policy.includes(check.code);
  }

  /** responses.create through callModel: mapped errors, a checked body, the call noted for the trace; a failed response throws. */
  async #create(body: ResponseCreateParamsNonStreaming): Promise<Response> {
    const ctx: CallContext = { baseURL: this.client.baseURL, model: this.modelName, maxRetries: this.#own.maxRetries, timeoutMs: this.#own.requestTimeoutMs };
    const resp = await this.callModel({
      send: ({ signal }) => this.client.responses.create(body, { signal }) as Promise<unknown>,
      mapError: (e, run) => mapApiError(e, ctx, run),
      read: (raw) => {
        const r = checkResponse(raw);
        return { value: r, usage: r.usage, responseId: r.id, model: typeof r.model === 'string' ? r.model : this.modelName };
      },
    });
    const failed = failedResponse(resp);
    if (failed) throw failed;
    return resp;
  }
}
