/**
 * Test-only: a local OpenAI Responses API (POST /v1/responses on 127.0.0.1:0) that plays a scripted
 * model. Bodies are built from the `openai` SDK's own types, so fixtures cannot drift from the wire
 * format the SDK expects. Like the real API it keeps every response it gave (ids `resp_…`), rejects
 * a `previous_response_id` it never issued, demands a `computer_call_output` for every computer call
 * of the previous response and the acknowledgement of every pending safety check, and reports
 * `usage` (input tokens: text/4 plus 85 + 170 per 512-px tile of each image, as OpenAI counts
 * high-detail images).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  ComputerAction,
  Response,
  ResponseComputerToolCall,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseUsage,
} from 'openai/resources/responses/responses';

/** A response body as it goes over the wire (the SDK adds `output_text` itself). */
export type WireResponse = Omit<Response, 'output_text'>;

/** One request the server received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body. */
  body: ResponseCreateParamsNonStreaming;
  /** Size of the body in bytes. */
  bytes: number;
}

/** What the scripted model does for one request. */
export type Turn =
  /** Answer with these output items (a function gets the request). */
  | { reply: ResponseOutputItem[] | ((req: ReceivedRequest) => ResponseOutputItem[]); status?: Response['status']; error?: Response['error'] }
  /** Answer with an API error: HTTP status and OpenAI's error JSON (`headers` replace the default retry hint: `retry-after-ms: 10` on 429 and 5xx). */
  | { httpError: number; message?: string; type?: string; code?: string | null; headers?: Record<string, string> }
  /** Answer with exactly these bytes (malformed bodies). */
  | { raw: string; contentType: string; httpStatus?: number }
  /** Never answer (the client times out). */
  | { hang: true };

/** A script: turns in order, or a function of the request and its index. */
export type Script = Turn[] | ((req: ReceivedRequest, index: number) => Turn);

/** The running server. */
export interface FakeResponsesServer {
  /** The SDK's baseURL: http://127.0.0.1:P/v1 */
  baseURL: string;
  /** Every request received, in order. */
  requests: ReceivedRequest[];
  /** Every response sent, by id. */
  responses: Map<string, WireResponse>;
  close(): Promise<void>;
}

let seq = 0;
const nextId = (prefix: string) => `${prefix}_${(++seq).toString(16).padStart(8, '0')}${Math.random().toString(16).slice(2, 10)}`;

/**
 * One batch of actions for the events page (test-helpers/desktops.ts): a move, a click into the text box, typing,
 * Ctrl+A (the page cancels it), BackSpace, more typing, a double click, a right click, a 240 px scroll, a drag and drop.
 */
export const EVENTS_PAGE_ACTIONS: readonly ComputerAction[] = [
  { type: 'move', x: 100, y: 100 },
  { type: 'click', button: 'left', x: 700, y: 100 },
  { type: 'type', text: 'ab' },
  { type: 'keypress', keys: ['CTRL', 'A'] },
  { type: 'keypress', keys: ['BACKSPACE'] },
  { type: 'type', text: 'cd' },
  { type: 'double_click', x: 300, y: 150, keys: null },
  { type: 'click', button: 'right', x: 310, y: 160 },
  { type: 'scroll', x: 150, y: 420, scroll_x: 0, scroll_y: 240 },
  {
    type: 'drag',
    path: [
      { x: 380, y: 380 },
      { x: 630, y: 410 },
    ],
  },
];

/** A computer_call item (the preview tool's `action`, or the batched tool's `actions`). */
export function computerCall(opts: { action?: ComputerAction; actions?: ComputerAction[]; checks?: ResponseComputerToolCall.PendingSafetyCheck[] }): ResponseComputerToolCall {
  const call: ResponseComputerToolCall = {
    id: nextId('cu'),
    call_id: nextId('call'),
    type: 'computer_call',
    status: 'completed',
    pending_safety_checks: opts.checks ?? [],
  };
  if (opts.action) call.action = opts.action;
  if (opts.actions) call.actions = opts.actions;
  return call;
}

/** An assistant message item. */
export function message(text: string): ResponseOutputMessage {
  return { id: nextId('msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** An assistant message whose content is a refusal part (the Responses API's `{ type: "refusal", refusal }`: the model declined). */
export function refusalMessage(refusal: string): ResponseOutputMessage {
  return { id: nextId('msg'), type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal }] };
}

/** A reasoning item with a summary. */
export function reasoning(summary: string): ResponseReasoningItem {
  return { id: nextId('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] };
}

/** A pending safety check. */
export function safetyCheck(code: string, msg = `check ${code}`): ResponseComputerToolCall.PendingSafetyCheck {
  return { id: nextId('cu_sc'), code, message: msg };
}

/** Width and height of a PNG or JPEG given as a data URL (null when it is neither). */
export function imageSize(dataUrl: string): { width: number; height: number; mimeType: string } | null {
  const m = /^data:(image\/(?:png|jpeg));base64,(.*)$/s.exec(dataUrl);
  if (!m) return null;
  const bytes = Buffer.from(m[2]!, 'base64');
  if (m[1] === 'image/png') {
    if (bytes.length < 24 || bytes.toString('latin1', 1, 4) !== 'PNG' || bytes.toString('latin1', 12, 16) !== 'IHDR') return null;
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), mimeType: m[1] };
  }
  for (let i = 2; i + 9 < bytes.length; ) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1]!;
    const len = bytes.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xc3) return { width: bytes.readUInt16BE(i + 7), height: bytes.readUInt16BE(i + 5), mimeType: m[1]! };
    i += 2 + len;
  }
  return null;
}

/** Image tokens as OpenAI counts a high-detail image: fit in 2048², shortest side to 768, 85 + 170 per 512-px tile. */
function imageTokens(w: number, h: number): number {
  let s = Math.min(1, 2048 / Math.max(w, h));
  w *= s;
  h *= s;
  s = Math.min(1, 768 / Math.min(w, h));
  w *= s;
  h *= s;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Every image data URL in a request's input. */
export function imagesIn(body: ResponseCreateParamsNonStreaming): string[] {
  const urls: string[] = [];
  const walk = (v: unknown, key = ''): void => {
    if (typeof v === 'string') {
      if (key === 'image_url' && v.startsWith('data:')) urls.push(v);
    } else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(body.input);
  return urls;
}

function usageOf(body: ResponseCreateParamsNonStreaming, output: ResponseOutputItem[]): ResponseUsage {
  const images = imagesIn(body);
  let input = Math.ceil((JSON.stringify(body.input).length - images.reduce((n, u) => n + u.length, 0)) / 4);
  for (const u of images) {
    const s = imageSize(u);
    if (s) input += imageTokens(s.width, s.height);
  }
  const out = Math.ceil(JSON.stringify(output).length / 4);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: out,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + out,
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': nextId('req'), ...headers });
  res.end(text);
}

function apiError(res: ServerResponse, status: number, msg: string, type: string, code: string | null, param: string | null = null, headers?: Record<string, string>): void {
  // OpenAI sends retry hints; a short one keeps the SDK's retries fast in tests.
  sendJson(res, status, { error: { message: msg, type, param, code } }, headers ?? (status === 429 || status >= 500 ? { 'retry-after-ms': '10' } : {}));
}

/** What the real API would reject in a follow-up request (null when it is fine). */
function chainProblem(body: ResponseCreateParamsNonStreaming, responses: Map<string, WireResponse>): string | null {
  const prevId = body.previous_response_id;
  if (prevId === undefined || prevId === null) return null;
  const prev = responses.get(prevId);
  if (!prev) return `Previous response with id '${prevId}' not found.`;
  const items = Array.isArray(body.input) ? (body.input as ResponseInputItem[]) : [];
  const outputs = new Map<string, ResponseInputItem.ComputerCallOutput>();
  for (const i of items) if (i.type === 'computer_call_output') outputs.set(i.call_id, i);
  for (const o of prev.output) {
    if (o.type !== 'computer_call') continue;
    const out = outputs.get(o.call_id);
    if (!out) return `No tool output found for computer call ${o.call_id}.`;
    const acked = new Set((out.acknowledged_safety_checks ?? []).map((c) => c.id));
    const missing = o.pending_safety_checks.filter((c) => !acked.has(c.id));
    if (missing.length > 0) return `Pending safety checks were not acknowledged: ${missing.map((c) => c.id).join(', ')}.`;
  }
  return null;
}

/** Start the server; it plays `script`, one turn per request (retries included). */
export async function startFakeResponses(script: Script): Promise<FakeResponsesServer> {
  const requests: ReceivedRequest[] = [];
  const responses = new Map<string, WireResponse>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method !== 'POST' || path !== '/v1/responses') {
        apiError(res, 404, `Invalid URL (${req.method} ${path})`, 'invalid_request_error', null);
        return;
      }
      let body: ResponseCreateParamsNonStreaming;
      try {
        body = JSON.parse(raw.toString('utf8')) as ResponseCreateParamsNonStreaming;
      } catch {
        apiError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
        return;
      }
      const received: ReceivedRequest = { method: req.method, path, headers: req.headers, body, bytes: raw.length };
      const index = requests.length;
      requests.push(received);
      const turn = typeof script === 'function' ? script(received, index) : script[index];
      if (!turn) {
        apiError(res, 400, `fake model: no turn scripted for request ${index}`, 'invalid_request_error', 'script_exhausted');
        return;
      }
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
        const s = turn.httpError;
        const type = turn.type ?? (s === 401 ? 'invalid_request_error' : s === 429 ? 'requests' : s >= 500 ? 'server_error' : 'invalid_request_error');
        const code = turn.code !== undefined ? turn.code : s === 401 ? 'invalid_api_key' : s === 429 ? 'rate_limit_exceeded' : null;
        apiError(res, s, turn.message ?? `fake error ${s}`, type, code, null, turn.headers);
        return;
      }
      const problem = chainProblem(body, responses);
      if (problem) {
        apiError(res, 400, problem, 'invalid_request_error', null, 'input');
        return;
      }
      const output = typeof turn.reply === 'function' ? turn.reply(received) : turn.reply;
      const response: WireResponse = {
        id: nextId('resp'),
        object: 'response',
        created_at: Math.floor(Date.now() / 1000),
        status: turn.status ?? 'completed',
        error: turn.error ?? null,
        incomplete_details: null,
        instructions: typeof body.instructions === 'string' ? body.instructions : null,
        metadata: {},
        model: `${String(body.model)}-2025-03-11`,
        output,
        parallel_tool_calls: true,
        temperature: 1,
        tool_choice: 'auto',
        tools: body.tools ?? [],
        top_p: 1,
        max_output_tokens: null,
        previous_response_id: body.previous_response_id ?? null,
        reasoning: { effort: 'medium', summary: null },
        service_tier: 'default',
        text: { format: { type: 'text' } },
        truncation: body.truncation ?? 'disabled',
        usage: usageOf(body, output),
      };
      responses.set(response.id, response);
      sendJson(res, 200, response);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    responses,
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
