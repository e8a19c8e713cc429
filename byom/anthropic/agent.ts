/**
 * `AnthropicCuaAgent`: Anthropic computer use through the Messages API (beta) and the official
 * `@anthropic-ai/sdk`.
 *
 * One act() is one Messages call plus the actions it asks for:
 * 1. capture the screen, scaled to the display size (`fitDisplay`: within 1280×800 and 1.15 MP,
 *    e.g. 1920×1080 → 1280×720; or `screenshotSize`);
 * 2. first call: a user turn with the task and that screenshot; later calls: a user turn with a
 *    `tool_result` for every `tool_use` of the last reply (same ids, same order), the screenshot
 *    in the last one (after the tool results when that one is an error or a zoom, which holds its
 *    own image); older screenshots beyond `historyScreens` are replaced by text;
 * 3. the request carries the computer tool (`computer_20251124` with the beta flag
 *    `computer-use-2025-11-24`, or `computer_20250124` with `computer-use-2025-01-24`) with
 *    `display_width_px` / `display_height_px` = the screenshot's size;
 * 4. a reply without tool_use ends the run: `finish` with the model's text as `message`;
 * 5. otherwise every tool_use is mapped (actions.ts) and performed in order; an error (unknown
 *    action, bad field, unknown key, held keys during a click) becomes an `is_error` tool_result
 *    with the message, and the tool_uses after it in the same reply are answered as skipped. A
 *    model whose every tool_use failed `maxFailedTurns` replies in a row ends the run with status
 *    `parse_error` (AGENT_ERR_PARSE).
 * stop_reason: `refusal` ends the run with status `sensitive_action` (MODEL_ERR_REFUSAL; result.json's reason: the
 * stop_details explanation, else the model's text, else the category); `max_tokens`
 * (MODEL_ERR_MAX_TOKENS) and `model_context_window_exceeded` (MODEL_ERR_CONTEXT_WINDOW) end it with
 * status `error`; `pause_turn` sends the conversation back as it is on the next step.
 * Each call's latency, usage (cache tokens included, as the API reports them), message id, model
 * and attempts go into `meta.model_calls` of the next trace entry, the request size into
 * `meta.request_bytes`, the model's text beside its tool calls into `meta.model_text`.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type {
  BetaContentBlockParam,
  BetaImageBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolComputerUse20250124,
  BetaToolComputerUse20251124,
  BetaToolUseBlock,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import sharp from 'sharp';
import type { ScreenCapture } from '../../harness/agent/index.ts';
import { z } from 'zod';
import type { ScreenSize } from '../../harness/desktop/size.ts';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import type { RateCall } from '../../harness/agent/rate-gate.ts';
import { ModelAgent, modelAgentOptionsSchema, type ModelAgentOptions } from '../model-agent.ts';
import { positiveMs, requireApiKey, requiredTask, wholeNumber } from '../options.ts';
import { ComputerActionMapper, TOOL_VERSIONS, type ScreenRect, type ToolVersion } from './actions.ts';
import { mapApiError, type CallContext } from './api-errors.ts';
import { assistantParams, imageBlock, textBlock, toolResult, trimImages } from './conversation.ts';
import { DisplayMap, fitDisplay } from './display.ts';

/** Default model: Claude Sonnet 4.6, which takes computer_20251124. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-6';
/** The beta flag each tool version needs (sent as `anthropic-beta`). */
export const BETA_FLAGS: Readonly<Record<ToolVersion, AnthropicBeta>> = {
  computer_20251124: 'computer-use-2025-11-24',
  computer_20250124: 'computer-use-2025-01-24',
};
/** Default `max_tokens` of each call. */
export const DEFAULT_MAX_TOKENS = 4096;
/** Default number of screenshots kept in the conversation. */
export const DEFAULT_HISTORY_SCREENS = 3;
/** Default timeout of one Messages call (ms). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
/** Default retries of one Messages call (the SDK's: 408, 409, 429, 5xx, connection errors). */
export const DEFAULT_MAX_RETRIES = 2;
/** Default number of replies in a row whose every tool_use failed before the run ends as parse_error. */
export const DEFAULT_MAX_FAILED_TURNS = 3;
/** The default system prompt. */
export const DEFAULT_SYSTEM_PROMPT =
  'You control a Linux desktop through the computer tool. It usually shows one web page in a full-screen browser ' +
  '(Chromium in kiosk mode: no address bar and no tabs; use alt+Left and alt+Right to go back and forward). ' +
  "Every screenshot shows the whole screen. Carry out the user's task with as few actions as possible. " +
  'When the task is done, or cannot be done, stop calling the tool and answer with a short summary.';

/** Models that take computer_20250124 (the others get computer_20251124 by default). */
const OLD_TOOL_MODELS = /^claude-(?:sonnet-4-5|haiku-4-5|opus-4-1|sonnet-4(?:-0|-2\d{7})?$|opus-4(?:-0|-2\d{7})?$|3-7-sonnet)/;

/** AnthropicCuaAgent's own options (besides the Agent's and the ModelAgent's). */
export interface AnthropicCuaOwnOptions {
  /** `computer_20251124` (beta computer-use-2025-11-24; Claude Opus 4.5+, Sonnet 4.6) or `computer_20250124` (computer-use-2025-01-24; Sonnet 4.5, Haiku 4.5, Opus 4.1, …). Default: computer_20250124 for those older models, else computer_20251124. */
  toolVersion?: ToolVersion;
  /** `max_tokens` of each call (default 4096). */
  maxTokens?: number;
  /** The system prompt (default DEFAULT_SYSTEM_PROMPT; "" sends none). */
  system?: string;
  /** Screenshots kept in the conversation; older image blocks become text (default 3; at least 1). */
  historyScreens?: number;
  /** Send `enable_zoom` with computer_20251124 and answer zoom actions (default true). */
  enableZoom?: boolean;
  /** Timeout of one Messages call in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** Retries of one Messages call by the SDK (default 2). */
  maxRetries?: number;
  /** Replies in a row whose every tool_use failed before the run ends with status parse_error (default 3). */
  maxFailedTurns?: number;
}

/** Options of AnthropicCuaAgent: the Agent's, the ModelAgent's (`screenshotSize` overrides the display size) and its own. */
export type AnthropicCuaOptions = ModelAgentOptions & AnthropicCuaOwnOptions;

/** Schema of AnthropicCuaAgent's options (AGENT_ERR_BAD_OPTIONS naming the field). */
export const anthropicCuaOptionsSchema = modelAgentOptionsSchema
  .extend({
    task: requiredTask,
    toolVersion: z.enum(TOOL_VERSIONS, { error: `must be one of ${TOOL_VERSIONS.join(', ')}` }).optional(),
    maxTokens: wholeNumber(1, 1_000_000).optional(),
    system: z.string({ error: 'must be a string' }).optional(),
    historyScreens: wholeNumber(1, 1000).optional(),
    enableZoom: z.boolean({ error: 'must be true or false' }).optional(),
    requestTimeoutMs: positiveMs.optional(),
    maxRetries: wholeNumber(0, 10).optional(),
    maxFailedTurns: wholeNumber(1, 1000).optional(),
  })
  .superRefine(requireApiKey('ANTHROPIC_API_KEY'));

/** The tool version for a model name when none is given. */
export function defaultToolVersion(model: string): ToolVersion {
  return OLD_TOOL_MODELS.test(model) ? 'computer_20250124' : 'computer_20251124';
}

/** One tool_result waiting to be sent with the next request. */
interface PendingResult {
  id: string;
  content: Array<BetaTextBlockParam | BetaImageBlockParam>;
  isError: boolean;
  /** The result already holds the image the model asked for (zoom): the next screenshot goes after the results, not into it. */
  hasOwnImage: boolean;
}

/** The state of one run's conversation. */
interface Conversation {
  messages: BetaMessageParam[];
  pending: PendingResult[];
  /** The last reply stopped with pause_turn: send the conversation back as it is. */
  paused: boolean;
  failedTurns: number;
  mapper: ComputerActionMapper | null;
}

/** An Agent driven by Anthropic's computer-use tool through the Messages API. */
export class AnthropicCuaAgent extends ModelAgent<z.output<typeof anthropicCuaOptionsSchema>> {
  /** The adapter's name in `--rate-limit` rules and backoffs. */
  static override adapterName = 'anthropic';
  /** The SDK client (baseURL, key, retries and timeout as configured). */
  readonly client: Anthropic;
  /** The model name sent. */
  readonly modelName: string;
  /** The computer tool version sent. */
  readonly toolVersion: ToolVersion;
  readonly #own: Required<Omit<AnthropicCuaOwnOptions, 'toolVersion'>>;
  #conv: Conversation = newConversation();

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field) and makes the SDK client. Connects nothing. */
  constructor(options: AnthropicCuaOptions) {
    super(options, anthropicCuaOptionsSchema);
    const o = this.settings;
    this.modelName = o.model ?? DEFAULT_ANTHROPIC_MODEL;
    this.toolVersion = o.toolVersion ?? defaultToolVersion(this.modelName);
    this.#own = {
      maxTokens: o.maxTokens ?? DEFAULT_MAX_TOKENS,
      system: o.system ?? DEFAULT_SYSTEM_PROMPT,
      historyScreens: o.historyScreens ?? DEFAULT_HISTORY_SCREENS,
      enableZoom: o.enableZoom ?? true,
      requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      maxRetries: o.maxRetries ?? DEFAULT_MAX_RETRIES,
      maxFailedTurns: o.maxFailedTurns ?? DEFAULT_MAX_FAILED_TURNS,
    };
    this.client = new Anthropic({
      apiKey: o.apiKey ?? process.env.ANTHROPIC_API_KEY,
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
    this.#conv = newConversation();
    return super.run(...args);
  }

  /** One Messages call and the actions it asks for; true when the model stopped calling the tool. */
  override async act(): Promise<boolean> {
    const conv = this.#conv;
    if (!conv.paused) {
      const screen = await this.clientResolution();
      const shot = await this.observe({ size: this.model.screenshotSize ?? fitDisplay(screen) });
      if (this.signal.aborted) return false;
      const map = new DisplayMap({ width: shot.width, height: shot.height }, { width: shot.screenWidth, height: shot.screenHeight });
      const mapperOptions = { map, toolVersion: this.toolVersion, zoom: this.#zoomEnabled() };
      if (conv.mapper) conv.mapper.update(mapperOptions);
      else conv.mapper = new ComputerActionMapper(mapperOptions);
      const content = conv.messages.length === 0 ? [textBlock(this.task!), shotBlock(shot)] : this.#resultsWith(shot);
      const blocked = this.domainObservation();
      // After the tool_results (the API wants them first): what the navigation guard blocked.
      conv.messages.push({ role: 'user', content: blocked ? [...content, textBlock(blocked)] : content });
      conv.pending = [];
    }
    conv.paused = false;
    trimImages(conv.messages, this.#own.historyScreens);
    const resp = await this.#create(this.#body(conv.mapper!.displaySize()));
    conv.messages.push({ role: 'assistant', content: assistantParams(resp.content) });

    const text = resp.content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('\n')
      .trim();
    switch (resp.stop_reason) {
      case 'refusal': {
        const d = resp.stop_details;
        this.endRun(
          'sensitive_action',
          {
            code: 'MODEL_ERR_REFUSAL',
            message:
              `The model refused to go on (message ${resp.id}${d?.category ? `, category ${d.category}` : ''})${d?.explanation ? `: ${d.explanation}` : ''}.` +
              (text ? ` It said: ${JSON.stringify(text.slice(0, 500))}` : ''),
          },
          d?.explanation || text || `The model refused (${d?.category ?? 'no category given'}).`,
        );
        return false;
      }
      case 'max_tokens':
        throw new VncuaError('MODEL_ERR_MAX_TOKENS', `The reply ${resp.id} was cut off at max_tokens (${this.#own.maxTokens}); raise the maxTokens option.`, {
          details: { id: resp.id, maxTokens: this.#own.maxTokens },
        });
      case 'model_context_window_exceeded':
        throw new VncuaError(
          'MODEL_ERR_CONTEXT_WINDOW',
          `The conversation no longer fits the context window of ${this.modelName} (message ${resp.id}); lower historyScreens (now ${this.#own.historyScreens}) or maxSteps.`,
          {
            details: { id: resp.id, historyScreens: this.#own.historyScreens },
          },
        );
      case 'pause_turn':
        conv.paused = true;
        if (text) this.attachMeta({ model_text: [text] });
        return false;
      default:
        break;
    }
    const uses = resp.content.filter((b): b is BetaToolUseBlock => b.type === 'tool_use');
    if (uses.length === 0) {
      await this.finish({ message: text });
      return true;
    }
    if (text) this.attachMeta({ model_text: [text] });
    await this.#perform(uses);
    if (this.signal.aborted) return false;
    if (conv.pending.every((p) => p.isError)) conv.failedTurns++;
    else conv.failedTurns = 0;
    if (conv.failedTurns >= this.#own.maxFailedTurns) {
      const last = conv.pending[conv.pending.length - 1];
      const lastText = last?.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ') ?? '';
      this.endRun('parse_error', {
        code: 'AGENT_ERR_PARSE',
        message: `Every tool call of the model's last ${conv.failedTurns} replies failed (maxFailedTurns: ${this.#own.maxFailedTurns}); the last error: ${lastText.slice(0, 500)}`,
      });
    }
    return false;
  }

  #zoomEnabled(): boolean {
    return this.toolVersion === 'computer_20251124' && this.#own.enableZoom;
  }

  /** The request body for a display of `display` size. */
  #body(display: ScreenSize): MessageCreateParamsNonStreaming {
    const tool: BetaToolComputerUse20251124 | BetaToolComputerUse20250124 =
      this.toolVersion === 'computer_20251124'
        ? {
            type: 'computer_20251124',
            name: 'computer',
            display_width_px: display.width,
            display_height_px: display.height,
            ...(this.#own.enableZoom ? { enable_zoom: true } : {}),
          }
        : { type: 'computer_20250124', name: 'computer', display_width_px: display.width, display_height_px: display.height };
    return {
      model: this.modelName,
      max_tokens: this.#own.maxTokens,
      ...(this.#own.system !== '' ? { system: this.#own.system } : {}),
      tools: [tool],
      messages: this.#conv.messages,
      betas: [BETA_FLAGS[this.toolVersion]],
    };
  }

  /** The tool results of the last reply, with this screenshot in the last one (or after them when it is an error or holds its own image). */
  #resultsWith(shot: ScreenCapture): BetaContentBlockParam[] {
    const pending = this.#conv.pending;
    const out: BetaContentBlockParam[] = pending.map((p) => toolResult(p.id, p.content, p.isError));
    const last = pending[pending.length - 1];
    if (last && !last.isError && !last.hasOwnImage) {
      out[out.length - 1] = toolResult(last.id, [...last.content, shotBlock(shot)]);
    } else {
      out.push(shotBlock(shot));
    }
    return out;
  }

  /** Perform the tool_uses of one reply in order, collecting their results. */
  async #perform(uses: BetaToolUseBlock[]): Promise<void> {
    const conv = this.#conv;
    const mapper = conv.mapper!;
    let failedAt: string | null = null;
    for (let k = 0; k < uses.length; k++) {
      const use = uses[k]!;
      const result = (content: Array<BetaTextBlockParam | BetaImageBlockParam>, isError = false, hasOwnImage = false) =>
        conv.pending.push({ id: use.id, content, isError, hasOwnImage });
      if (this.signal.aborted) return;
      if (failedAt !== null) {
        result([textBlock(`Skipped: the earlier ${failedAt} in this reply failed, so nothing after it was done.`)], true);
        continue;
      }
      if (use.name !== 'computer') {
        result([textBlock(`Unknown tool ${JSON.stringify(use.name)}: the only tool is "computer".`)], true);
        failedAt = `call of ${use.name}`;
        continue;
      }
      const action = String((use.input as { action?: unknown } | null)?.action ?? '?');
      const m = mapper.map(use.input);
      switch (m.kind) {
        case 'error':
          result([textBlock(m.message)], true);
          failedAt = action;
          break;
        case 'text':
          result([textBlock(m.text)]);
          break;
        case 'screenshot':
          // The last one is answered with the screenshot taken at the next step; an earlier one needs it now.
          if (k < uses.length - 1) result([shotBlock(await this.captureScreen({ size: mapper.displaySize() }))]);
          else result([]);
          break;
        case 'zoom':
          result([await this.#zoomImage(m.rect, mapper.displaySize())], false, true);
          break;
        case 'steps': {
          if (m.note) this.attachMeta({ anthropic_notes: [m.note] });
          let error: string | null = null;
          for (const step of m.steps) {
            if (this.signal.aborted) return;
            try {
              await this.perform(step);
            } catch (e) {
              // A bad argument (unknown key, control character) is the model's to fix; anything else ends the run.
              if (!isVncuaError(e) || !e.code.startsWith('ACTION_ERR_') || this.signal.aborted) throw e;
              error = e.message;
              break;
            }
          }
          if (error !== null) {
            result([textBlock(m.note ? `${error} ${m.note}` : error)], true);
            failedAt = action;
          } else {
            result(m.note ? [textBlock(m.note)] : []);
          }
          break;
        }
      }
    }
  }

  /** The screen region `rect` at full resolution, scaled down only to fit the display size. */
  async #zoomImage(rect: ScreenRect, display: ScreenSize): Promise<BetaImageBlockParam> {
    const full = await this.captureScreen({});
    const s = Math.min(1, display.width / rect.width, display.height / rect.height);
    let img = sharp(Buffer.from(full.base64, 'base64')).extract(rect);
    if (s < 1) img = img.resize(Math.max(1, Math.round(rect.width * s)), Math.max(1, Math.round(rect.height * s)), { fit: 'fill', kernel: 'lanczos3' });
    const png = await img.png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer();
    return imageBlock(png.toString('base64'), 'image/png');
  }

  /** messages.create through callModel: mapped errors, a checked body, the call noted for the trace. */
  #create(body: MessageCreateParamsNonStreaming): Promise<BetaMessage> {
    const ctx: CallContext = { baseURL: this.client.baseURL, model: this.modelName, maxRetries: this.#own.maxRetries, timeoutMs: this.#own.requestTimeoutMs };
    return this.callModel({
      send: ({ signal }) => this.client.beta.messages.create(body, { signal }) as Promise<unknown>,
      mapError: (e, run) => mapApiError(e, ctx, run),
      read: (raw) => {
        const m = checkMessage(raw);
        return { value: m, usage: m.usage, responseId: m.id, model: typeof m.model === 'string' ? m.model : this.modelName };
      },
    });
  }
}

function newConversation(): Conversation {
  return { messages: [], pending: [], paused: false, failedTurns: 0, mapper: null };
}

function shotBlock(shot: ScreenCapture): BetaImageBlockParam {
  return imageBlock(shot.base64, shot.mimeType);
}

/** MODEL_ERR_BAD_RESPONSE naming what is wrong. */
function badResponse(why: string, details: Record<string, unknown> = {}): VncuaError {
  return new VncuaError('MODEL_ERR_BAD_RESPONSE', `The Anthropic API answered with a body that is not a Messages API message: ${why}.`, { details });
}

/** Check the parts of a message this adapter relies on (the SDK does not validate bodies). */
function checkMessage(raw: unknown): BetaMessage {
  const m = raw as Partial<BetaMessage> | null;
  if (typeof m !== 'object' || m === null || Array.isArray(m))
    throw badResponse(`the body is ${Array.isArray(m) ? 'an array' : m === null ? 'null' : typeof m}, not a message object`);
  if (typeof m.id !== 'string' || m.id === '') throw badResponse('it has no id');
  if (m.type !== 'message') throw badResponse(`its type is ${JSON.stringify(m.type)}, not "message"`, { id: m.id });
  if (!Array.isArray(m.content)) throw badResponse('it has no content list', { id: m.id });
  if (m.stop_reason !== null && m.stop_reason !== undefined && typeof m.stop_reason !== 'string') throw badResponse('its stop_reason is not a string', { id: m.id });
  m.content.forEach((b, i) => {
    if (typeof b !== 'object' || b === null || typeof (b as { type?: unknown }).type !== 'string') throw badResponse(`content[${i}] is not a content block`, { id: m.id });
    if (b.type === 'tool_use') {
      if (typeof b.id !== 'string' || b.id === '') throw badResponse(`content[${i}] is a tool_use without id`, { id: m.id });
      if (typeof b.name !== 'string') throw badResponse(`content[${i}] is a tool_use without name`, { id: m.id });
    } else if (b.type === 'text' && typeof b.text !== 'string') {
      throw badResponse(`content[${i}] is a text block without text`, { id: m.id });
    }
  });
  return m as BetaMessage;
}
