import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContentBlock, Message, RawMessageStreamEvent, StopReason } from '@anthropic-ai/sdk/resources/messages';

/**
 * A local stand-in for the Anthropic Messages API (POST /v1/messages, JSON and SSE), for tests of
 * the model adapter and end-to-end tests. Every request is recorded and validated like the real
 * API does it (tool_use/tool_result pairing, removed sampling parameters); an invalid request is
 * answered 400 `invalid_request_error` and recorded in `violations`.
 */

/** A content block as sent on the wire; only `type` is known before validation. */
export interface WireBlock {
  type: string;
  [key: string]: unknown;
}

export interface WireMessage {
  role: string;
  content: string | WireBlock[];
}

/** A recorded request body. Fields are typed for convenience; `validateMessagesRequest` checks them. */
export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  messages: WireMessage[];
  system?: string | WireBlock[];
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown> }>;
  stream?: boolean;
  [key: string]: unknown;
}

export type ViolationKind =
  | 'missing_tool_result'
  | 'orphan_tool_result'
  | 'tool_result_not_first'
  | 'duplicate_tool_use_id'
  | 'invalid_request'
  | 'invalid_json'
  | 'unauthenticated'
  | 'unscripted'
  | 'responder_error';

export interface RequestViolation {
  kind: ViolationKind;
  /** Worded like the real API's error message. */
  message: string;
  messageIndex?: number;
  toolUseId?: string;
}

/**
 * The pairing rule of the Messages API: every `tool_use` of an assistant message has a
 * `tool_result` with its id in the very next message (a user message, results first), and every
 * `tool_result` answers a `tool_use` of the message right before it. Tool-use ids are unique.
 */
export function checkToolPairing(messages: readonly WireMessage[]): RequestViolation[] {
  const violations: RequestViolation[] = [];
  const seen = new Set<string>();
  messages.forEach((message, index) => {
    const blocks = blocksOf(message);
    if (message.role === 'assistant') {
      const ids = toolUseIds(blocks);
      for (const id of ids) {
        if (seen.has(id)) {
          violations.push({
            kind: 'duplicate_tool_use_id',
            messageIndex: index,
            toolUseId: id,
            message: `messages.${index}: \`tool_use\` ids must be unique: ${id}`,
          });
        }
        seen.add(id);
      }
      const next = messages[index + 1] as WireMessage | undefined;
      const answered = next?.role === 'user' ? toolResultIds(blocksOf(next)) : [];
      const missing = ids.filter((id) => !answered.includes(id));
      if (missing.length > 0) {
        violations.push({
          kind: 'missing_tool_result',
          messageIndex: index,
          toolUseId: missing[0],
          message:
            `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
            `${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        });
      }
      return;
    }
    const previous = index > 0 ? messages[index - 1] : undefined;
    const offered = previous?.role === 'assistant' ? toolUseIds(blocksOf(previous)) : [];
    let sawOtherBlock = false;
    blocks.forEach((block, blockIndex) => {
      if (block.type !== 'tool_result') {
        sawOtherBlock = true;
        return;
      }
      const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : String(block.tool_use_id);
      if (!offered.includes(id)) {
        violations.push({
          kind: 'orphan_tool_result',
          messageIndex: index,
          toolUseId: id,
          message:
            `messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        });
      } else if (sawOtherBlock) {
        violations.push({
          kind: 'tool_result_not_first',
          messageIndex: index,
          toolUseId: id,
          message: `messages.${index}.content.${blockIndex}: \`tool_result\` blocks must come first in the content, before any other block.`,
        });
      }
    });
  });
  return violations;
}

const SAMPLING_PARAMETERS = ['temperature', 'top_p', 'top_k'] as const;
const ROLES = ['user', 'assistant', 'system'];

/**
 * Validates a Messages API request body. `apiVersion` is the `anthropic-version` header: from
 * 2026-10-21 (what SDK 1.x sends) sampling parameters are rejected, even at their default values.
 */
export function validateMessagesRequest(body: unknown, options: { apiVersion?: string } = {}): RequestViolation[] {
  const invalid = (message: string): RequestViolation[] => [{ kind: 'invalid_request', message }];
  if (!isRecord(body)) {
    return invalid('the request body must be a JSON object');
  }
  if (typeof body.model !== 'string' || body.model === '') {
    return invalid('model: Field required');
  }
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return invalid('max_tokens: Field required (a positive integer)');
  }
  if (options.apiVersion !== '2023-06-01') {
    for (const name of SAMPLING_PARAMETERS) {
      if (name in body) {
        return invalid(`${name}: Extra inputs are not permitted`);
      }
    }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return invalid('messages: at least one message is required');
  }
  const messages: unknown[] = body.messages;
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || typeof message.role !== 'string' || !ROLES.includes(message.role)) {
      return invalid(`messages.${index}.role: Input should be 'user', 'assistant' or 'system'`);
    }
    const content = message.content;
    if (typeof content !== 'string' && !(Array.isArray(content) && content.every((block) => isRecord(block) && typeof block.type === 'string'))) {
      return invalid(`messages.${index}.content: Input should be a string or a list of content blocks`);
    }
  }
  const toolBlocks = messages.some((message) => isRecord(message) && Array.isArray(message.content) && (message.content as unknown[]).some((block) => isRecord(block) && (block.type === 'tool_use' || block.type === 'tool_result')));
  if (toolBlocks && !(Array.isArray(body.tools) && body.tools.length > 0)) {
    return invalid('Requests which include `tool_use` or `tool_result` blocks must define tools.');
  }
  if (body.tool_choice !== undefined && !(isRecord(body.tool_choice) && ['auto', 'any', 'tool', 'none'].includes(String(body.tool_choice.type)))) {
    return invalid("tool_choice: Input tag should be 'auto', 'any', 'tool' or 'none'");
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) {
      return invalid('tools: Input should be a valid list');
    }
    const tools: unknown[] = body.tools;
    for (const [index, tool] of tools.entries()) {
      if (!isRecord(tool) || typeof tool.name !== 'string' || !isRecord(tool.input_schema) || tool.input_schema.type !== 'object') {
        return invalid(`tools.${index}: a tool needs a name and an input_schema of type "object"`);
      }
    }
  }
  return checkToolPairing(messages as WireMessage[]);
}

function blocksOf(message: WireMessage): WireBlock[] {
  return Array.isArray(message.content) ? message.content : [];
}

function toolUseIds(blocks: readonly WireBlock[]): string[] {
  return blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
}

function toolResultIds(blocks: readonly WireBlock[]): string[] {
  return blocks.filter((block) => block.type === 'tool_result').map((block) => String(block.tool_use_id));
}

export interface FakeToolCall {
  /** Defaults to a fresh `toolu_fake_<n>`, unique for the server's lifetime. */
  id?: string;
  name: string;
  input?: Record<string, unknown>;
}

/** A successful assistant turn. */
export interface FakeTurn {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** A text block after the tool calls. */
  trailingText?: string;
  /** Defaults to `tool_use` when there are tool calls, else `end_turn`. */
  stopReason?: StopReason;
  /** Code points per `text_delta` when streaming (default 8). */
  chunkSize?: number;
  /** Pause after each streamed delta, to let a test watch a turn in progress (default 0). */
  chunkDelayMs?: number;
  /** Streams the content, then an `error` event in place of message_delta/message_stop. */
  streamError?: { type: string; message?: string };
  /** Streams the content and message_stop without the message_delta that carries the stop reason. */
  noStopReason?: boolean;
}

/** A failed call: an HTTP error status with the API's error body. */
export interface FakeFailure {
  status: number;
  /** Defaults to the API's type for the status (429 rate_limit_error, 529 overloaded_error, ...). */
  error?: { type?: string; message?: string };
  /**
   * The `retry-after-ms` header the SDK honours before retrying. Defaults to 1 so tests stay fast;
   * `null` sends none, and the SDK then backs off exponentially from 0.5 s.
   */
  retryAfterMs?: number | null;
  /** A `retry-after` header (seconds or an HTTP date); when set, no default `retry-after-ms` is sent. */
  retryAfter?: number | string;
  headers?: Record<string, string>;
}

export type FakeReply = FakeTurn | FakeFailure;

/**
 * Chooses the reply to a valid request; `callIndex` counts every request received, retries
 * included. `undefined` means "nothing scripted": answered 400 and recorded as `unscripted`.
 */
export type FakeResponder = (
  body: MessagesRequestBody,
  callIndex: number,
) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface FakeAnthropicOptions {
  /** A function, or a list of replies played in order (request i gets entry i). Default: a short text turn. */
  responder?: FakeResponder | readonly FakeReply[];
  /** When set, a request must carry this key (`Authorization: Bearer` or `x-api-key`), else 401. */
  apiKey?: string;
}

export interface FakeCall {
  index: number;
  body: MessagesRequestBody;
  headers: IncomingHttpHeaders;
  stream: boolean;
  /** The status answered (0 until the answer starts). */
  status: number;
  violations: RequestViolation[];
}

export interface FakeAnthropic {
  /** Base URL for the SDK's `baseURL` / ANTHROPIC_BASE_URL (no trailing slash, no /v1). */
  readonly url: string;
  /** Every request body to POST /v1/messages, in arrival order: the transcript. */
  readonly requests: MessagesRequestBody[];
  /** The same requests with their headers, the status answered and their violations. */
  readonly calls: FakeCall[];
  /** Every rule a request broke, with the index of the call (-1 for a body that is not JSON). */
  readonly violations: Array<RequestViolation & { callIndex: number }>;
  setResponder(responder: FakeResponder | readonly FakeReply[]): void;
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (default 10 s). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Forgets the recorded requests and violations and restarts call indexes at 0. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_REPLY: FakeTurn = { text: 'Hello from the fake Anthropic API.' };

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  let responder = toResponder(options.responder ?? ((): FakeReply => DEFAULT_REPLY));
  const requests: MessagesRequestBody[] = [];
  const calls: FakeCall[] = [];
  const violations: Array<RequestViolation & { callIndex: number }> = [];
  const waiters = new Set<{ count: number; resolve: () => void; reject: (error: Error) => void }>();
  let sequence = 0;

  const nextId = (prefix: string): string => `${prefix}_fake_${String(++sequence).padStart(6, '0')}`;

  const recorded = (): void => {
    for (const waiter of waiters) {
      if (requests.length >= waiter.count) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages') {
      sendError(res, 404, { type: 'not_found_error', message: `fake-anthropic: no route ${req.method} ${path}` }, {}, nextId('req'));
      return;
    }
    const raw = await readBody(req);
    let body: MessagesRequestBody;
    try {
      body = JSON.parse(raw) as MessagesRequestBody;
    } catch {
      const message = 'the request body is not valid JSON';
      violations.push({ kind: 'invalid_json', message, callIndex: -1 });
      sendError(res, 400, { type: 'invalid_request_error', message }, {}, nextId('req'));
      return;
    }
    const call: FakeCall = {
      index: calls.length,
      body,
      headers: req.headers,
      stream: isRecord(body) && body.stream === true,
      status: 0,
      violations: [],
    };
    calls.push(call);
    requests.push(body);
    recorded();
    const requestId = nextId('req');
    const reject = (status: number, violation: RequestViolation, headers: Record<string, string> = {}): void => {
      call.violations.push(violation);
      violations.push({ ...violation, callIndex: call.index });
      call.status = status;
      sendError(res, status, { type: ERROR_TYPES[status] ?? 'api_error', message: violation.message }, headers, requestId);
    };

    if (options.apiKey !== undefined && !carriesKey(req.headers, options.apiKey)) {
      reject(401, { kind: 'unauthenticated', message: 'invalid x-api-key' });
      return;
    }
    if (typeof req.headers['anthropic-version'] !== 'string') {
      reject(400, { kind: 'invalid_request', message: 'anthropic-version: header is required' });
      return;
    }
    const invalid = validateMessagesRequest(body, { apiVersion: req.headers['anthropic-version'] });
    if (invalid.length > 0) {
      for (const violation of invalid.slice(1)) {
        call.violations.push(violation);
        violations.push({ ...violation, callIndex: call.index });
      }
      reject(400, invalid[0]);
      return;
    }

    let reply: FakeReply | undefined;
    try {
      reply = await responder(body, call.index);
    } catch (error) {
      // A broken test responder must not be retried by the SDK as if it were a server fault.
      reject(500, { kind: 'responder_error', message: `fake-anthropic responder threw: ${String(error)}` }, { 'x-should-retry': 'false' });
      return;
    }
    if (reply === undefined) {
      reject(400, { kind: 'unscripted', message: `fake-anthropic: no reply scripted for request #${call.index}` });
      return;
    }
    if (isFailure(reply)) {
      call.status = reply.status;
      sendError(
        res,
        reply.status,
        { type: reply.error?.type ?? ERROR_TYPES[reply.status] ?? 'api_error', message: reply.error?.message ?? `injected ${reply.status}` },
        failureHeaders(reply),
        requestId,
      );
      return;
    }
    const message = buildMessage(reply, body, nextId);
    call.status = 200;
    if (call.stream) {
      await streamMessage(res, message, reply, requestId);
    } else {
      sendJson(res, 200, message, { 'request-id': requestId });
    }
  };

  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        sendError(res, 500, { type: 'api_error', message: `fake-anthropic failed: ${String(error)}` }, { 'x-should-retry': 'false' }, 'req_fake_error');
      } else {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    calls,
    violations,
    setResponder(next) {
      responder = toResponder(next);
    },
    waitForRequests(count, timeoutMs = 10_000) {
      if (requests.length >= count) {
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`fake-anthropic: ${requests.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error: Error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        waiters.add(waiter);
      });
    },
    reset() {
      requests.length = 0;
      calls.length = 0;
      violations.length = 0;
    },
    close() {
      for (const waiter of waiters) {
        waiter.reject(new Error('fake-anthropic closed'));
      }
      waiters.clear();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets (and streams held open by a slow reply) would hold close() forever.
        server.closeAllConnections();
      });
    },
  };
}

function toResponder(responder: FakeResponder | readonly FakeReply[]): FakeResponder {
  if (typeof responder === 'function') {
    return responder;
  }
  const replies = [...responder];
  return (_body, callIndex) => (callIndex < replies.length ? replies[callIndex] : undefined);
}

function isFailure(reply: FakeReply): reply is FakeFailure {
  return 'status' in reply && typeof reply.status === 'number';
}

function carriesKey(headers: IncomingHttpHeaders, apiKey: string): boolean {
  return headers.authorization === `Bearer ${apiKey}` || headers['x-api-key'] === apiKey;
}

function failureHeaders(reply: FakeFailure): Record<string, string> {
  const headers: Record<string, string> = {};
  if (reply.retryAfter !== undefined) {
    headers['retry-after'] = String(reply.retryAfter);
  }
  const retryAfterMs = reply.retryAfterMs === undefined ? (reply.retryAfter === undefined ? 1 : null) : reply.retryAfterMs;
  if (retryAfterMs !== null) {
    headers['retry-after-ms'] = String(retryAfterMs);
  }
  return { ...headers, ...reply.headers };
}

function buildMessage(reply: FakeTurn, body: MessagesRequestBody, nextId: (prefix: string) => string): Message {
  const content: ContentBlock[] = [];
  if (reply.text !== undefined && reply.text !== '') {
    content.push({ type: 'text', text: reply.text, citations: null });
  }
  for (const call of reply.toolCalls ?? []) {
    content.push({ type: 'tool_use', id: call.id ?? nextId('toolu'), name: call.name, input: call.input ?? {}, caller: { type: 'direct' } });
  }
  if (reply.trailingText) {
    content.push({ type: 'text', text: reply.trailingText, citations: null });
  }
  const hasToolCalls = (reply.toolCalls ?? []).length > 0;
  return {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: reply.stopReason ?? (hasToolCalls ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: {
      input_tokens: Math.ceil(JSON.stringify(body.messages).length / 4),
      output_tokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
      cache_creation: null,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    },
  };
}

/** Writes `message` as the SSE events the API sends and the SDK's MessageStream accumulates. */
async function streamMessage(res: ServerResponse, message: Message, reply: FakeTurn, requestId: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
  res.flushHeaders();
  const delayMs = reply.chunkDelayMs ?? 0;
  const send = async (event: RawMessageStreamEvent | { type: 'ping' } | { type: 'error'; error: { type: string; message: string } }): Promise<boolean> => {
    if (res.destroyed) {
      return false;
    }
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    if (delayMs > 0 && event.type === 'content_block_delta') {
      await pause(res, delayMs);
    }
    return !res.destroyed;
  };

  const { stop_reason, usage, content, ...rest } = message;
  const events: Array<RawMessageStreamEvent | { type: 'ping' }> = [
    { type: 'message_start', message: { ...rest, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    { type: 'ping' },
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, text: '' } });
      for (const piece of pieces(block.text, reply.chunkSize ?? 8)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      }
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      const json = JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      for (const partial of [json.slice(0, half), json.slice(half)]) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } });
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  for (const event of events) {
    if (!(await send(event))) {
      return;
    }
  }
  if (reply.streamError !== undefined) {
    await send({ type: 'error', error: { type: reply.streamError.type, message: reply.streamError.message ?? 'injected stream error' } });
    res.end();
    return;
  }
  const closing: RawMessageStreamEvent[] = [
    {
      type: 'message_delta',
      delta: { stop_reason, stop_sequence: null, stop_details: null, container: null },
      usage: {
        output_tokens: usage.output_tokens,
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        output_tokens_details: null,
        server_tool_use: null,
      },
    },
    { type: 'message_stop' },
  ];
  for (const event of reply.noStopReason ? closing.slice(1) : closing) {
    if (!(await send(event))) {
      return;
    }
  }
  res.end();
}

/** Waits `ms`, or less if the client goes away, so a closed server leaves no timer behind. */
function pause(res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on('close', done);
  });
}

function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const step = Math.max(1, Math.floor(size));
  const out: string[] = [];
  for (let start = 0; start < chars.length; start += step) {
    out.push(chars.slice(start, start + step).join(''));
  }
  return out;
}

function sendError(
  res: ServerResponse,
  status: number,
  error: { type: string; message: string },
  headers: Record<string, string>,
  requestId: string,
): void {
  sendJson(res, status, { type: 'error', error, request_id: requestId }, { ...headers, 'request-id': requestId });
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string>): void {
  if (res.destroyed) {
    return;
  }
  const text = JSON.stringify(payload);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The system prompt of a request as one string (sent as a string or as text blocks). */
export function systemText(body: MessagesRequestBody): string {
  const system = body.system ?? '';
  return typeof system === 'string' ? system : system.map((block) => (typeof block.text === 'string' ? block.text : '')).join('');
}

/** Content blocks without their prompt-cache markers, for tests that read what a block says. */
export function withoutCacheMarkers(blocks: readonly WireBlock[]): WireBlock[] {
  return blocks.map(({ cache_control: _marker, ...block }) => block);
}
