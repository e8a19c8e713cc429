/**
 * `ChatAgent`: any OpenAI-compatible chat-completions endpoint that takes image input (vLLM,
 * Ollama, LM Studio, hosted APIs) as an agent, through the official `openai` SDK.
 *
 * Each act(): take a screenshot, append it to the conversation (the last `historyScreens` stay,
 * older ones become a placeholder), call the model, find the JSON object in the reply
 * (extract.ts), validate it (actions.ts), map its coordinates back to the screen
 * (coordinates.ts) and perform it. A reply that cannot be used is answered with the validation
 * error and asked again, up to `maxReasks` (2) times; then the run ends with status
 * `parse_error` (AGENT_ERR_PARSE). Each call's latency and usage go into the trace (meta.model_calls).
 * A reply with `message.refusal` (the model refused) ends the run with status `sensitive_action` and the refusal as
 * result.json's reason; `{"action": "finish", "status": "...", "reason": "..."}` ends it with that stop status.
 */
import OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { AgentRunResult, RunOptions, ScreenCapture } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { ModelAgent, modelAgentOptionsSchema, type FetchFn, type ModelAgentOptions } from '../model-agent.ts';
import { wholeNumber } from '../options.ts';
import { validateChatAction, type ChatAction } from './actions.ts';
import { chatApiError } from './api-errors.ts';
import { COORDINATE_SPACES, type CoordinateFrame, type CoordinateSpace } from './coordinates.ts';
import { extractJsonObject } from './extract.ts';
import { Conversation } from './history.ts';
import { defaultSystemPrompt, type PromptInputs } from './prompt.ts';

/** ChatAgent's own options (besides the Agent's and ModelAgent's). */
export interface ChatOptions {
  /** How many of the latest screenshots stay in the conversation (default 3; older ones become a text placeholder). */
  historyScreens?: number;
  /** The coordinate space the model answers in (default 'absolute'; see coordinates.ts). */
  coordinates?: CoordinateSpace;
  /** Replace the default system prompt: a string, or a function of the same inputs the default uses. */
  systemPrompt?: string | ((inputs: PromptInputs) => string);
  /** Re-asks after a reply that cannot be used, before the run ends as parse_error (default 2). */
  maxReasks?: number;
  /** Sampling temperature (sent only when given). */
  temperature?: number;
  /** max_tokens of each reply (sent only when given). */
  maxTokens?: number;
  /** Retries of the SDK on 408/409/429/5xx and connection errors (default 2). */
  maxRetries?: number;
  /** Timeout of each API request in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** Screenshot encoding sent to the model (default 'png'). */
  imageFormat?: 'png' | 'jpeg';
  /** The fetch the SDK uses (default: the global one), e.g. one with a proxy dispatcher, or instrumentation. */
  fetch?: FetchFn;
}

/**
 * The options of ChatAgent. `model` is required; `apiKey` may be any string for local servers (default "EMPTY");
 * `screenshotSize` (the size the screenshots are scaled to) is required with coordinates 'resized', optional with
 * 'normalized1000', not allowed with 'absolute'.
 */
export type ChatAgentOptions = ModelAgentOptions & ChatOptions & { model: string };

/** Schema of ChatAgent's options (AGENT_ERR_BAD_OPTIONS naming the field). */
export const chatAgentOptionsSchema = modelAgentOptionsSchema
  .extend({
    model: z
      .string({ error: 'give the model name the server serves (e.g. "Qwen/Qwen2.5-VL-7B-Instruct")' })
      .min(1, 'give the model name the server serves (e.g. "Qwen/Qwen2.5-VL-7B-Instruct")'),
    historyScreens: wholeNumber(1).optional(),
    coordinates: z.enum(COORDINATE_SPACES, { error: `must be one of ${COORDINATE_SPACES.join(', ')}` }).optional(),
    systemPrompt: z
      .union([z.string(), z.custom<(inputs: PromptInputs) => string>((v) => typeof v === 'function')], { error: 'must be a string or a function (inputs) => string' })
      .optional(),
    maxReasks: wholeNumber(0).optional(),
    temperature: z.number({ error: 'must be a number' }).optional(),
    maxTokens: wholeNumber(1).optional(),
    maxRetries: wholeNumber(0).optional(),
    requestTimeoutMs: wholeNumber(1).optional(),
    imageFormat: z.enum(['png', 'jpeg'], { error: "must be 'png' or 'jpeg'" }).optional(),
    fetch: z.custom<FetchFn>((v) => typeof v === 'function', 'must be a fetch function').optional(),
  })
  .superRefine((o, ctx) => {
    const space = o.coordinates ?? 'absolute';
    if (space === 'resized' && !o.screenshotSize) {
      ctx.addIssue({ code: 'custom', path: ['screenshotSize'], message: "coordinates 'resized' needs screenshotSize, the { width, height } the screenshots are scaled to" });
    }
    if (space === 'absolute' && o.screenshotSize) {
      ctx.addIssue({
        code: 'custom',
        path: ['screenshotSize'],
        message: "coordinates 'absolute' are screen pixels, so screenshots are not scaled; use coordinates 'resized' with screenshotSize",
      });
    }
  });

/** Defaults of ChatOptions. */
export const CHAT_DEFAULTS = { historyScreens: 3, coordinates: 'absolute', maxReasks: 2, maxRetries: 2, requestTimeoutMs: 120_000, imageFormat: 'png' } as const;

/** Text of the re-ask after a reply that could not be used. */
export function reaskText(error: string): string {
  return `Your reply could not be used: ${error}. Reply again with exactly one JSON object as the system message describes.`;
}

/** An agent driven by an OpenAI-compatible chat model with image input. */
export class ChatAgent extends ModelAgent<z.output<typeof chatAgentOptionsSchema>> {
  /** The adapter's name in `--rate-limit` rules and backoffs. */
  static override adapterName = 'chat';
  /** The chat options, defaults applied. */
  readonly chat: Readonly<
    Required<Pick<ChatOptions, 'historyScreens' | 'coordinates' | 'maxReasks' | 'maxRetries' | 'requestTimeoutMs' | 'imageFormat'>> &
      Omit<ChatOptions, 'historyScreens' | 'coordinates' | 'maxReasks' | 'maxRetries' | 'requestTimeoutMs' | 'imageFormat'>
  >;
  readonly #client: OpenAI;
  #conversation: Conversation | null = null;
  #lastDone = '';

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field); makes no request. */
  constructor(options: ChatAgentOptions) {
    super(options, chatAgentOptionsSchema);
    const o = this.settings;
    const c = {
      historyScreens: o.historyScreens ?? CHAT_DEFAULTS.historyScreens,
      coordinates: o.coordinates ?? CHAT_DEFAULTS.coordinates,
      maxReasks: o.maxReasks ?? CHAT_DEFAULTS.maxReasks,
      maxRetries: o.maxRetries ?? CHAT_DEFAULTS.maxRetries,
      requestTimeoutMs: o.requestTimeoutMs ?? CHAT_DEFAULTS.requestTimeoutMs,
      imageFormat: o.imageFormat ?? CHAT_DEFAULTS.imageFormat,
      systemPrompt: o.systemPrompt,
      temperature: o.temperature,
      maxTokens: o.maxTokens,
      fetch: o.fetch,
    };
    this.chat = Object.freeze(c);
    this.#client = new OpenAI({
      apiKey: o.apiKey ?? 'EMPTY',
      baseURL: o.baseURL ?? null,
      maxRetries: c.maxRetries,
      timeout: c.requestTimeoutMs,
      // Through modelFetch(): each request (retries included) passes the rate gate and is counted for the trace.
      fetch: this.modelFetch(c.fetch),
    });
  }

  /** The API's base URL (for messages). */
  get baseURL(): string {
    return this.#client.baseURL;
  }

  /** run() with a fresh conversation. */
  override run(options: RunOptions = {}): Promise<AgentRunResult> {
    this.#conversation = null;
    this.#lastDone = '';
    return super.run(options);
  }

  override async act(): Promise<boolean> {
    const shot = await this.observe({ format: this.chat.imageFormat });
    const frame = frameOf(this.chat.coordinates, shot);
    const conversation = (this.#conversation ??= new Conversation(this.#systemPrompt(frame), this.chat.historyScreens));
    const n = conversation.screenshots + 1;
    const intro =
      n === 1
        ? `${this.task !== undefined ? `Task: ${this.task}` : 'No task was given: look at the screen and finish when there is nothing to do.'}\nScreenshot 1 (${shot.width}x${shot.height}): the screen now. What is the next action?`
        : `${this.#lastDone}Screenshot ${n} (${shot.width}x${shot.height}): the screen now. What is the next action?`;
    const blocked = this.domainObservation();
    conversation.addUser(blocked ? `${blocked}\n${intro}` : intro, { base64: shot.base64, mimeType: shot.mimeType });

    let lastError = '';
    let lastReply = '';
    for (let attempt = 0; attempt <= this.chat.maxReasks; attempt++) {
      if (attempt > 0) conversation.addUser(reaskText(lastError));
      const { text: reply, refusal } = await this.#complete(conversation);
      if (refusal !== null) {
        // The model refused (message.refusal): the run stops as sensitive_action, with the refusal as the reason.
        await this.finish({ status: 'sensitive_action', reason: refusal });
        return true;
      }
      conversation.addAssistant(reply);
      lastReply = reply;
      const found = extractJsonObject(reply);
      const v = found.ok ? validateChatAction(found.value, frame) : found;
      if (!v.ok) {
        lastError = v.error;
        continue;
      }
      if (v.thought !== undefined) this.attachMeta({ thought: v.thought });
      if (attempt > 0) this.attachMeta({ reasks: attempt });
      this.#lastDone = `Done: ${describe(v.action)}.\n`;
      await this.perform(v.step);
      return v.step.action === 'finish';
    }
    this.endRun('parse_error', {
      code: 'AGENT_ERR_PARSE',
      message: `The model's reply could not be used after ${this.chat.maxReasks} re-ask${this.chat.maxReasks === 1 ? '' : 's'}: ${lastError}. Last reply: ${JSON.stringify(lastReply.slice(0, 300))}`,
    });
    return false;
  }

  #systemPrompt(frame: CoordinateFrame): string {
    const inputs: PromptInputs = { task: this.task, frame, historyScreens: this.chat.historyScreens };
    const custom = this.chat.systemPrompt;
    if (typeof custom === 'string') return custom;
    if (typeof custom === 'function') return custom(inputs);
    return defaultSystemPrompt(inputs);
  }

  /** One chat completion call through callModel (its latency and usage go to the trace). Returns the reply text, and the refusal when the model refused (message.refusal). */
  #complete(conversation: Conversation): Promise<{ text: string; refusal: string | null }> {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: this.settings.model, messages: conversation.messages() };
    if (this.chat.temperature !== undefined) body.temperature = this.chat.temperature;
    if (this.chat.maxTokens !== undefined) body.max_tokens = this.chat.maxTokens;
    return this.callModel({
      send: ({ signal }) => this.#client.chat.completions.create(body, { signal }),
      mapError: (e) => chatApiError(e, this.baseURL),
      read: (completion: ChatCompletion) => {
        const message = typeof completion === 'object' && completion !== null && Array.isArray(completion.choices) ? completion.choices[0]?.message : undefined;
        if (!message || typeof message !== 'object') {
          throw new VncuaError(
            'MODEL_ERR_BAD_RESPONSE',
            `The chat completions API at ${this.baseURL} answered without choices[0].message; check that baseURL points at an OpenAI-compatible chat completions API.`,
            {
              details: { url: this.baseURL, body: JSON.stringify(completion)?.slice(0, 300) ?? String(completion) },
            },
          );
        }
        const text = typeof message.content === 'string' ? message.content : '';
        const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : null;
        return {
          value: { text, refusal },
          usage: completion.usage ?? undefined,
          responseId: typeof completion.id === 'string' ? completion.id : undefined,
          model: typeof completion.model === 'string' ? completion.model : undefined,
        };
      },
    });
  }
}

/** The coordinate frame of a screenshot taken for the model. */
function frameOf(space: CoordinateSpace, shot: ScreenCapture): CoordinateFrame {
  return { space, screen: { width: shot.screenWidth, height: shot.screenHeight }, image: { width: shot.width, height: shot.height } };
}

/** The action as the model gave it, without its thought, for the next user turn. */
function describe(a: ChatAction): string {
  const { thought: _thought, ...rest } = a;
  return JSON.stringify(rest);
}
