/**
 * `ChatPlanner`: the explorer's Layer 2 (harness/agent/planner.ts NextActionPlanner) over any OpenAI-compatible
 * chat-completions endpoint with image input, through the `openai` SDK. It reuses ChatAgent's parts: the system
 * prompt (one JSON action per reply, screen-pixel coordinates), the JSON extraction and the strict action validation.
 * One request per call, no re-ask: an answer that is not one usable action is EXPLORER_ERR_MODEL_ANSWER (its cost in
 * `details.costUsd`), a failed call EXPLORER_ERR_MODEL_CALL; the explorer logs either on one line and goes on.
 */
import OpenAI from 'openai';
import type { NextActionPlanner, PlannerAnswer, PlannerInput } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { costUsd, findPrice, usageTokens, type Prices } from '../pricing.ts';
import { validateChatAction } from './actions.ts';
import type { CoordinateFrame } from './coordinates.ts';
import { extractJsonObject } from './extract.ts';
import { defaultSystemPrompt } from './prompt.ts';

/** Options of ChatPlanner. */
export interface ChatPlannerOptions {
  /** The model name the server serves. */
  model: string;
  /** The API's base URL (default: the SDK's, OpenAI's). */
  baseURL?: string;
  /** API key (default "EMPTY", for local servers). */
  apiKey?: string;
  /** USD per 1M tokens by model (byom/pricing.ts), for the cost cap; the built-in table otherwise. */
  prices?: Prices;
  /** Retries of a failed request by the SDK (default 1). */
  maxRetries?: number;
  /** Timeout of one request (default 60 000 ms). */
  requestTimeoutMs?: number;
  maxTokens?: number;
}

/** A NextActionPlanner over an OpenAI-compatible vision model (see the file comment). */
export class ChatPlanner implements NextActionPlanner {
  readonly #client: OpenAI;

  constructor(readonly options: ChatPlannerOptions) {
    this.#client = new OpenAI({
      apiKey: options.apiKey ?? 'EMPTY',
      baseURL: options.baseURL ?? null,
      maxRetries: options.maxRetries ?? 1,
      timeout: options.requestTimeoutMs ?? 60_000,
    });
  }

  async next(input: PlannerInput, { signal }: { signal: AbortSignal }): Promise<PlannerAnswer | null> {
    const frame: CoordinateFrame = { space: 'absolute', screen: input.screen, image: input.screen };
    const done = input.history.length ? `Latest actions, oldest first: ${input.history.map((s) => JSON.stringify(s)).join('; ')}.\n` : '';
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: this.options.model,
      messages: [
        { role: 'system', content: defaultSystemPrompt({ task: input.task, frame, historyScreens: 1 }) },
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: `Task: ${input.task}\n${input.url ? `Page: ${input.url}\n` : ''}${done}The screen now (${input.screen.width}x${input.screen.height}). What is the next action?`,
            },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${input.screenshotPng}` } },
          ],
        },
      ],
    };
    if (this.options.maxTokens !== undefined) body.max_tokens = this.options.maxTokens;
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(body, { signal });
    } catch (e) {
      if (signal.aborted && !(signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError')) throw e;
      throw new VncuaError('EXPLORER_ERR_MODEL_CALL', `The explorer's model call to ${this.#client.baseURL} failed: ${(e as Error)?.message ?? String(e)}.`, {
        cause: e,
        details: { url: this.#client.baseURL, model: this.options.model },
      });
    }
    const tokens = usageTokens(completion?.usage);
    const price = findPrice(this.options.model, this.options.prices);
    const cost = tokens && price ? costUsd(tokens, price.price) : undefined;
    const usage = {
      ...(cost !== undefined ? { costUsd: cost } : {}),
      ...(tokens ? { tokens: { input: tokens.uncached + tokens.cacheRead + tokens.cacheWrite + tokens.cacheWrite1h, output: tokens.output } } : {}),
    };
    const text = completion?.choices?.[0]?.message?.content;
    const found = extractJsonObject(typeof text === 'string' ? text : '');
    const v = found.ok ? validateChatAction(found.value, frame) : found;
    if (!v.ok) {
      throw new VncuaError(
        'EXPLORER_ERR_MODEL_ANSWER',
        `The explorer's model answered no usable action: ${v.error}; answer: ${JSON.stringify(String(text ?? '').slice(0, 120))}.`,
        {
          details: { model: this.options.model, ...(cost !== undefined ? { costUsd: cost } : {}) },
        },
      );
    }
    return { step: v.step, ...usage };
  }
}
