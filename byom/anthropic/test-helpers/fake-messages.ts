/**
 * Test-only: a local Anthropic Messages API (POST /v1/messages on 127.0.0.1:0) that plays a
 * scripted model. Bodies are built from the `@anthropic-ai/sdk` beta types, so fixtures cannot
 * drift from the wire format the SDK expects. Like the real API it rejects what a real server
 * would: no `anthropic-version` header, a wrong key (401 authentication_error), a computer tool
 * without its beta flag in `anthropic-beta`, turns that do not alternate, a tool_use without its
 * tool_result (same id) at the start of the next user turn or a tool_result for no tool_use,
 * and image blocks whose bytes are not the declared PNG/JPEG. It reports `usage` (input tokens:
 * text/4 plus width·height/750 per image, as Anthropic estimates images).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  BetaContentBlock,
  BetaContentBlockParam,
  BetaImageBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaRefusalStopDetails,
  BetaStopReason,
  BetaTextBlock,
  BetaToolResultBlockParam,
  BetaToolUseBlock,
  BetaUsage,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ComputerInput } from '../actions.ts';

/** The beta flag each computer tool type needs. */
const TOOL_BETAS: Record<string, string> = {
  computer_20251124: 'computer-use-2025-11-24',
  computer_20250124: 'computer-use-2025-01-24',
  computer_20241022: 'computer-use-2024-10-22',
};

/** A request body as it arrives (the SDK moves `betas` into the anthropic-beta header). */
export type WireRequest = Omit<MessageCreateParamsNonStreaming, 'betas'>;

/** One request the server received (also the rejected ones). */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined when it was not JSON). */
  body: WireRequest;
  /** Size of the body in bytes. */
  bytes: number;
  /** When the server rejected it as invalid: its 4xx status and message. */
  rejected?: { status: number; message: string };
}

/** What the scripted model does for one request. */
export type Turn =
  /** Answer with these content blocks (a function gets the request). stop_reason defaults to tool_use when there is a tool_use, else end_turn. */
  | { reply: BetaContentBlock[] | ((req: ReceivedRequest) => BetaContentBlock[]); stopReason?: BetaStopReason; stopDetails?: BetaRefusalStopDetails; usage?: Partial<BetaUsage> }
  /** Answer with an API error: HTTP status and Anthropic's error JSON (`headers` replace the default retry hint: `retry-after-ms: 5` on 429 and 5xx). */
  | { httpError: number; type?: string; message?: string; headers?: Record<string, string> }
  /** Answer with exactly these bytes (malformed bodies). */
  | { raw: string; contentType: string; httpStatus?: number }
  /** Never answer (the client times out). */
  | { hang: true };

/** A script: turns in order (the last one repeats), or a function of the request and its index. */
export type Script = Turn[] | ((req: ReceivedRequest, index: number) => Turn);

/** The running server. */
export interface FakeMessagesServer {
  /** The SDK's baseURL: http://127.0.0.1:P */
  baseURL: string;
  /** The key it accepts. */
  apiKey: string;
  /** Every request received, in order (rejected ones too, with `rejected`). */
  requests: ReceivedRequest[];
  /** The requests it answered with the script (not rejected). */
  readonly accepted: ReceivedRequest[];
  /** Every message it sent, in order. */
  messages: BetaMessage[];
  close(): Promise<void>;
}

let seq = 0;
const nextId = (prefix: string) => `${prefix}_${(++seq).toString(36).padStart(6, '0')}${Math.random().toString(36).slice(2, 12)}`;

/** A computer tool_use block. */
export function toolUse(input: ComputerInput | Record<string, unknown>, name = 'computer'): BetaToolUseBlock {
  return { type: 'tool_use', id: nextId('toolu'), name, input };
}

/** A text block. */
export function text(t: string): BetaTextBlock {
  return { type: 'text', text: t, citations: null };
}

/** Width, height and type of a PNG or JPEG (null when it is neither). */
export function imageInfo(bytes: Buffer): { width: number; height: number; type: 'image/png' | 'image/jpeg' } | null {
  if (bytes.length >= 24 && bytes.toString('latin1', 1, 4) === 'PNG' && bytes.toString('latin1', 12, 16) === 'IHDR') {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), type: 'image/png' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    for (let i = 2; i + 9 < bytes.length; ) {
      if (bytes[i] !== 0xff) return null;
      const marker = bytes[i + 1]!;
      const len = bytes.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xc3) return { width: bytes.readUInt16BE(i + 7), height: bytes.readUInt16BE(i + 5), type: 'image/jpeg' };
      i += 2 + len;
    }
  }
  return null;
}

/** Where an image block sits in a request: message index, block index, and the tool_result it is in (if any). */
export interface ImageAt {
  message: number;
  block: number;
  toolUseId: string | null;
  image: BetaImageBlockParam;
  bytes: Buffer;
}

/** Every image block of a request, oldest first. */
export function requestImages(body: WireRequest): ImageAt[] {
  const out: ImageAt[] = [];
  body.messages.forEach((m, mi) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((b, bi) => {
      const push = (image: BetaImageBlockParam, toolUseId: string | null) => {
        const src = image.source;
        out.push({ message: mi, block: bi, toolUseId, image, bytes: src.type === 'base64' ? Buffer.from(src.data, 'base64') : Buffer.alloc(0) });
      };
      if (b.type === 'image') push(b, null);
      else if (b.type === 'tool_result' && Array.isArray(b.content)) for (const c of b.content) if (c.type === 'image') push(c, b.tool_use_id);
    });
  });
  return out;
}

/** The tool_result blocks of the request's last user turn. */
export function lastToolResults(body: WireRequest): BetaToolResultBlockParam[] {
  const last = body.messages[body.messages.length - 1];
  if (last?.role !== 'user' || !Array.isArray(last.content)) return [];
  return last.content.filter((b): b is BetaToolResultBlockParam => b.type === 'tool_result');
}

/** The text of a tool_result's text blocks, joined. */
export function resultText(r: BetaToolResultBlockParam): string {
  if (typeof r.content === 'string') return r.content;
  return (r.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

class Invalid extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function blocksOf(m: BetaMessageParam): BetaContentBlockParam[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
}

/** Validate a request as the real API would; returns its image sizes and text length (for usage). */
function validate(req: ReceivedRequest, apiKey: string): { images: Array<{ width: number; height: number }>; chars: number } {
  const h = req.headers;
  if (req.method !== 'POST' || req.path !== '/v1/messages') throw new Invalid(404, 'not_found_error', `Not found: ${req.method} ${req.path}`);
  const version = h['anthropic-version'];
  if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version)) throw new Invalid(400, 'invalid_request_error', 'anthropic-version: header is required');
  const key = typeof h['x-api-key'] === 'string' ? h['x-api-key'] : typeof h.authorization === 'string' ? h.authorization.replace(/^Bearer /, '') : undefined;
  if (key !== apiKey) throw new Invalid(401, 'authentication_error', 'invalid x-api-key');
  const body = req.body as WireRequest | undefined;
  if (typeof body !== 'object' || body === null) throw new Invalid(400, 'invalid_request_error', 'The request body is not valid JSON.');
  if (typeof body.model !== 'string' || body.model === '') throw new Invalid(400, 'invalid_request_error', 'model: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw new Invalid(400, 'invalid_request_error', 'max_tokens: must be a positive integer');
  const betas = String(h['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim());
  (body.tools ?? []).forEach((t, i) => {
    const need = TOOL_BETAS[(t as { type?: string }).type ?? ''];
    if (need && !betas.includes(need))
      throw new Invalid(400, 'invalid_request_error', `tools.${i}: the tool type ${(t as { type: string }).type} requires the beta header ${need}`);
    if (need) {
      const c = t as { name?: string; display_width_px?: number; display_height_px?: number };
      if (c.name !== 'computer') throw new Invalid(400, 'invalid_request_error', `tools.${i}.name: must be "computer"`);
      if (!Number.isInteger(c.display_width_px) || !Number.isInteger(c.display_height_px) || c.display_width_px! < 1 || c.display_height_px! < 1) {
        throw new Invalid(400, 'invalid_request_error', `tools.${i}: display_width_px and display_height_px must be positive integers`);
      }
    }
  });
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new Invalid(400, 'invalid_request_error', 'messages: at least one message is required');
  const images: Array<{ width: number; height: number }> = [];
  let chars = typeof body.system === 'string' ? body.system.length : 0;
  const checkImage = (b: BetaImageBlockParam, where: string) => {
    if (b.source.type !== 'base64') throw new Invalid(400, 'invalid_request_error', `${where}: only base64 images are accepted here`);
    const info = imageInfo(Buffer.from(b.source.data, 'base64'));
    if (!info || info.type !== b.source.media_type) throw new Invalid(400, 'invalid_request_error', `${where}: the image data is not a valid ${b.source.media_type}`);
    images.push(info);
  };
  body.messages.forEach((m, i) => {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== expected) throw new Invalid(400, 'invalid_request_error', `messages.${i}.role: roles must alternate between "user" and "assistant", starting with "user"`);
    const blocks = blocksOf(m);
    if (blocks.length === 0) throw new Invalid(400, 'invalid_request_error', `messages.${i}: content must not be empty`);
    const uses = m.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id) : [];
    blocks.forEach((b, j) => {
      if (b.type === 'text') chars += b.text.length;
      else if (b.type === 'image') checkImage(b, `messages.${i}.content.${j}`);
      else if (b.type === 'tool_use') chars += JSON.stringify(b.input).length;
      else if (b.type === 'tool_result') {
        if (m.role !== 'user') throw new Invalid(400, 'invalid_request_error', `messages.${i}.content.${j}: tool_result blocks belong in user turns`);
        const prev = body.messages[i - 1];
        const ids = prev
          ? blocksOf(prev)
              .filter((x) => x.type === 'tool_use')
              .map((x) => (x as { id: string }).id)
          : [];
        if (!ids.includes(b.tool_use_id))
          throw new Invalid(
            400,
            'invalid_request_error',
            `messages.${i}.content.${j}: unexpected tool_use_id found in tool_result blocks: ${b.tool_use_id}. Each tool_result block must have a corresponding tool_use block in the previous message.`,
          );
        if (typeof b.content === 'string') chars += b.content.length;
        else
          for (const [k, c] of (b.content ?? []).entries()) {
            if (c.type === 'text') chars += c.text.length;
            else if (c.type === 'image') checkImage(c, `messages.${i}.content.${j}.content.${k}`);
          }
      }
    });
    if (uses.length > 0 && i + 1 < body.messages.length) {
      const next = blocksOf(body.messages[i + 1]!);
      const lead: string[] = [];
      for (const b of next) {
        if (b.type !== 'tool_result') break;
        lead.push(b.tool_use_id);
      }
      const missing = uses.filter((id) => !lead.includes(id));
      if (missing.length > 0) {
        throw new Invalid(
          400,
          'invalid_request_error',
          `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}. Each tool_use block must have a corresponding tool_result block in the next message.`,
        );
      }
      if (next.filter((b) => b.type === 'tool_result').length !== lead.length)
        throw new Invalid(400, 'invalid_request_error', `messages.${i + 1}: tool_result blocks must come first in the user turn`);
    }
  });
  return { images, chars };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': nextId('req'), 'content-length': Buffer.byteLength(data), ...headers });
  res.end(data);
}

function sendError(res: ServerResponse, status: number, type: string, message: string, headers?: Record<string, string>): void {
  // Short retry hints, so the SDK's retries of 429 and 5xx do not slow the tests down.
  const retry: Record<string, string> = headers ?? (status === 429 || status >= 500 ? { 'retry-after-ms': '5' } : {});
  sendJson(res, status, { type: 'error', error: { type, message }, request_id: nextId('req') }, retry);
}

/** Default error type of an HTTP status, as the API names them. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** Start the server playing `script`; every request must carry `apiKey`. */
export async function startFakeMessages(script: Script, options: { apiKey?: string } = {}): Promise<FakeMessagesServer> {
  const apiKey = options.apiKey ?? 'sk-ant-test';
  const requests: ReceivedRequest[] = [];
  const messages: BetaMessage[] = [];
  let turns = 0;
  const hanging = new Set<ServerResponse>();

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const received: ReceivedRequest = { method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, headers: req.headers, body: body as WireRequest, bytes: raw.length };
    requests.push(received);
    let info: { images: Array<{ width: number; height: number }>; chars: number };
    try {
      info = validate(received, apiKey);
    } catch (e) {
      if (!(e instanceof Invalid)) throw e;
      received.rejected = { status: e.status, message: e.message };
      sendError(res, e.status, e.type, e.message);
      return;
    }
    const index = turns++;
    const turn = typeof script === 'function' ? script(received, index) : script[Math.min(index, script.length - 1)];
    if (!turn) throw new Error('fake Messages API: empty script');
    if ('hang' in turn) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if ('raw' in turn) {
      res.writeHead(turn.httpStatus ?? 200, { 'content-type': turn.contentType });
      res.end(turn.raw);
      return;
    }
    if ('httpError' in turn) {
      sendError(res, turn.httpError, turn.type ?? errorType(turn.httpError), turn.message ?? `scripted HTTP ${turn.httpError}`, turn.headers);
      return;
    }
    const content = typeof turn.reply === 'function' ? turn.reply(received) : turn.reply;
    const hasTool = content.some((b) => b.type === 'tool_use');
    const usage: BetaUsage = {
      input_tokens: Math.ceil(info.chars / 4) + info.images.reduce((n, im) => n + Math.ceil((im.width * im.height) / 750), 0),
      output_tokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
      fallback_credit: null,
      inference_geo: null,
      iterations: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
      ...turn.usage,
    };
    const message: BetaMessage = {
      id: nextId('msg'),
      type: 'message',
      role: 'assistant',
      model: received.body.model,
      content,
      stop_reason: turn.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      stop_details: turn.stopDetails ?? null,
      container: null,
      context_management: null,
      diagnostics: null,
      usage,
    };
    messages.push(message);
    sendJson(res, 200, message);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (e) {
        sendError(res, 500, 'api_error', `fake server failure: ${(e as Error).message}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    get accepted() {
      return requests.filter((r) => !r.rejected);
    },
    messages,
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
