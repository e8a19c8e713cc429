/**
 * Test-only: a Chat Completions server on 127.0.0.1:0 (POST /v1/chat/completions) playing a
 * scripted model. Answers are ChatCompletion objects typed by the `openai` SDK itself, so the
 * wire shapes are the SDK's; the script may also answer an HTTP error, a raw body, or hang.
 */
import type { ChatCompletion, ChatCompletionContentPart, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { startScriptedServer, type Reply, type ScriptedServer } from '../../http/test-helpers/servers.ts';

/** What the script returns: the assistant's text, a raw HTTP reply, or `{ hang: true }` (never answer). */
export type ChatReply = string | Exclude<Reply, string> | { hang: true };

/** A running fake chat server. */
export interface ChatServer {
  /** baseURL for the SDK (…/v1). */
  baseURL: string;
  /** Request bodies, parsed, in order. */
  bodies: ChatCompletionCreateParamsNonStreaming[];
  server: ScriptedServer;
  close(): Promise<void>;
}

/** The usage the server reports for call `n`. */
export function usageFor(n: number): NonNullable<ChatCompletion['usage']> {
  return { prompt_tokens: 1000 + n, completion_tokens: 20 + n, total_tokens: 1020 + 2 * n };
}

/** A ChatCompletion with `content` as the assistant's message (call `n`). */
export function completion(content: string, n: number, model = 'test-vlm'): ChatCompletion {
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000 + n,
    model,
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content, refusal: null } }],
    usage: usageFor(n),
  };
}

/** A ChatCompletion in which the model refused: `message.content` null and `message.refusal` the text (call `n`). */
export function refusalCompletion(refusal: string, n: number, model = 'test-vlm'): ChatCompletion {
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000 + n,
    model,
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: null, refusal } }],
    usage: usageFor(n),
  };
}

/** Start a server answering call n (1-based) with `script(body, n)`. */
export async function startChatServer(script: (body: ChatCompletionCreateParamsNonStreaming, n: number) => ChatReply | Promise<ChatReply>): Promise<ChatServer> {
  const bodies: ChatCompletionCreateParamsNonStreaming[] = [];
  const server = await startScriptedServer(async (req, n) => {
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') return { status: 404, body: { error: { message: `no route ${req.method} ${req.path}` } } };
    const body = JSON.parse(req.body) as ChatCompletionCreateParamsNonStreaming;
    bodies.push(body);
    const reply = await script(body, n);
    if (typeof reply === 'string') return { body: completion(reply, n, body.model) };
    return 'hang' in reply ? 'hang' : reply;
  });
  return { baseURL: `${server.url}v1`, bodies, server, close: () => server.close() };
}

/** The text of every part of a message's content. */
export function texts(content: ChatCompletionCreateParamsNonStreaming['messages'][number]['content']): string[] {
  if (typeof content === 'string') return [content];
  return ((content ?? []) as ChatCompletionContentPart[]).flatMap((p) => (p.type === 'text' ? [p.text] : []));
}

/** The image URLs (data: URLs) of a request, in order. */
export function images(body: ChatCompletionCreateParamsNonStreaming): string[] {
  return body.messages
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as ChatCompletionContentPart[]) : []))
    .flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
}
