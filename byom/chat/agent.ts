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
 */
import OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { badOption } from '../../harness/agent/options.ts';
import type { AgentRunResult, RunOptions, ScreenCapture } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { ModelAgent, splitOptions, type ModelAgentOptions } from '../model-agent.ts';
import { validateChatAction, type ChatAction } from './actions.ts';
import { chatApiError } from './api-errors.ts';
import { COORDINATE_SPACES, type CoordinateFrame, type CoordinateSpace, type Size } from './coordinates.ts';
import { extractJsonObject } from './extract.ts';
import { Conversation } from './history.ts';
import { defaultSystemPrompt, type PromptInputs } from './prompt.ts';

/** ChatAgent's own options (besides the Agent's and ModelAgent's). */
export interface ChatOptions {
  /** How many of the latest screenshots stay in the conversation (default 3; older ones become a text placeholder). */
  historyScreens?: number;
  /** The coordinate space the model answers in (default 'absolute'; see coordinates.ts). */
  coordinates?: CoordinateSpace;
  /** Size the screenshots are scaled to: required with 'resized', optional with 'normalized1000', not allowed with 'absolute'. */
  imageSize?: Size;
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
  fetch?: typeof globalThis.fetch;
}

/** The options of ChatAgent. `model` is required; `apiKey` may be any string for local servers (default "EMPTY"). */
export type ChatAgentOptions = ModelAgentOptions & ChatOptions & { model: string };

const CHAT_KEYS = ['historyScreens', 'coordinates', 'imageSize', 'systemPrompt', 'maxReasks', 'temperature', 'maxTokens', 'maxRetries', 'requestTimeoutMs', 'imageFormat', 'fetch'] as const;

/** Defaults of ChatOptions. */
export const CHAT_DEFAULTS = { historyScreens: 3, coordinates: 'absolute', maxReasks: 2, maxRetries: 2, requestTimeoutMs: 120_000, imageFormat: 'png' } as const;

/** Text of the re-ask after a reply that could not be used. */
export function reaskText(error: string): string {
  return `Your reply could not be used: ${error}. Reply again with exactly one JSON object as the system message describes.`;
}

/** An agent driven by an OpenAI-compatible chat model with image input. */
export class ChatAgent extends ModelAgent {
  /** The chat options, defaults applied. */
  readonly chat: Readonly<Required<Pick<ChatOptions, 'historyScreens' | 'coordinates' | 'maxReasks' | 'maxRetries' | 'requestTimeoutMs' | 'imageFormat'>> & Omit<ChatOptions, 'historyScreens' | 'coordinates' | 'maxReasks' | 'maxRetries' | 'requestTimeoutMs' | 'imageFormat'>>;
  readonly #client: OpenAI;
  readonly #imageSize: Size | undefined;
  #conversation: Conversation | null = null;
  #lastDone = '';

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field); makes no request. */
  constructor(options: ChatAgentOptions) {
    const [chat, rest] = splitOptions(options, CHAT_KEYS);
    super(rest);
    const c = { ...CHAT_DEFAULTS, ...definedOnly(chat) };
    if (typeof this.model.model !== 'string' || this.model.model === '') throw badOption('model', this.model.model, 'give the model name the server serves (e.g. "Qwen/Qwen2.5-VL-7B-Instruct")');
    if (!(COORDINATE_SPACES as readonly string[]).includes(c.coordinates)) throw badOption('coordinates', c.coordinates, `must be one of ${COORDINATE_SPACES.join(', ')}`);
    for (const k of ['historyScreens', 'maxReasks', 'maxRetries', 'requestTimeoutMs', 'maxTokens'] as const) {
      const v = c[k];
      const min = k === 'historyScreens' || k === 'requestTimeoutMs' || k === 'maxTokens' ? 1 : 0;
      if (v !== undefined && !(Number.isInteger(v) && v >= min)) throw badOption(k, v, `must be a whole number >= ${min}`);
    }
    const size = c.imageSize ?? this.model.screenshotSize;
    if (size !== undefined && !(isSide(size.width) && isSide(size.height))) throw badOption('imageSize', size, 'must be { width, height } with whole numbers of pixels >= 1');
    if (c.coordinates === 'resized' && !size) throw badOption('imageSize', undefined, "coordinates 'resized' needs imageSize, the { width, height } the screenshots are scaled to");
    if (c.coordinates === 'absolute' && size) throw badOption('imageSize', size, "coordinates 'absolute' are screen pixels, so screenshots are not scaled; use coordinates 'resized' with imageSize");
    if (!['png', 'jpeg'].includes(c.imageFormat)) throw badOption('imageFormat', c.imageFormat, "must be 'png' or 'jpeg'");
    this.chat = Object.freeze(c);
    this.#imageSize = size;
    this.#client = new OpenAI({
      apiKey: this.model.apiKey ?? 'EMPTY',
      baseURL: this.model.baseURL ?? null,
      maxRetries: c.maxRetries,
      timeout: c.requestTimeoutMs,
      ...(c.fetch ? { fetch: c.fetch } : {}),
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
    const shot = await this.observe({ format: this.chat.imageFormat, ...(this.#imageSize ? { size: this.#imageSize } : {}) });
    const frame = frameOf(this.chat.coordinates, shot);
    const conversation = (this.#conversation ??= new Conversation(this.#systemPrompt(frame), this.chat.historyScreens));
    const n = conversation.screenshots + 1;
    const intro =
      n === 1
        ? `${this.task !== undefined ? `Task: ${this.task}` : 'No task was given: look at the screen and finish when there is nothing to do.'}\nScreenshot 1 (${shot.width}x${shot.height}): the screen now. What is the next action?`
        : `${this.#lastDone}Screenshot ${n} (${shot.width}x${shot.height}): the screen now. What is the next action?`;
    conversation.addUser(intro, { base64: shot.base64, mimeType: shot.mimeType });

    let lastError = '';
    let lastReply = '';
    for (let attempt = 0; attempt <= this.chat.maxReasks; attempt++) {
      if (attempt > 0) conversation.addUser(reaskText(lastError));
      const reply = await this.#complete(conversation);
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

  /** One chat completion call; its latency and usage go to the trace. Returns the reply text. */
  async #complete(conversation: Conversation): Promise<string> {
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: this.model.model!, messages: conversation.messages() };
    if (this.chat.temperature !== undefined) body.temperature = this.chat.temperature;
    if (this.chat.maxTokens !== undefined) body.max_tokens = this.chat.maxTokens;
    // The SDK never removes the abort listener it adds to the signal it is given: give it a
    // per-call signal linked to the run's, so the run's signal does not collect one per call.
    const call = new AbortController();
    const run = this.signal;
    const onAbort = () => call.abort(run.reason);
    if (run.aborted) onAbort();
    else run.addEventListener('abort', onAbort, { once: true });
    const t0 = performance.now();
    let completion: ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(body, { signal: call.signal });
    } catch (e) {
      throw chatApiError(e, this.baseURL);
    } finally {
      run.removeEventListener('abort', onAbort);
    }
    const latencyMs = performance.now() - t0;
    const message = typeof completion === 'object' && completion !== null && Array.isArray(completion.choices) ? completion.choices[0]?.message : undefined;
    if (!message || typeof message !== 'object') {
      throw new VncuaError('MODEL_ERR_BAD_RESPONSE', `The chat completions API at ${this.baseURL} answered without choices[0].message; check that baseURL points at an OpenAI-compatible chat completions API.`, {
        details: { url: this.baseURL, body: JSON.stringify(completion)?.slice(0, 300) ?? String(completion) },
      });
    }
    this.noteModelCall({
      latencyMs,
      ...(completion.usage ? { usage: completion.usage } : {}),
      ...(typeof completion.id === 'string' ? { responseId: completion.id } : {}),
      ...(typeof completion.model === 'string' ? { model: completion.model } : {}),
    });
    if (typeof message.content === 'string') return message.content;
    if (typeof message.refusal === 'string') return message.refusal;
    return '';
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

function isSide(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1;
}

function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
