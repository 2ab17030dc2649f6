import Anthropic, { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { MessageCreateParamsBase, Message, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { abortedError, ModelError, type ModelErrorKind } from './model.errors';
import type { ModelAdapter, ModelMessage, ModelRequest, ModelToolCall, ModelTurn, ModelUsage } from './model.types';

export const DEFAULT_MODEL_MAX_RETRIES = 4;
const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
/**
 * The longest retry-after the SDK may sleep on within one call. A longer one ends the call, retryable
 * with the wait, so that the step is put off for it (`retryAfterMs`) instead of holding a worker's
 * slot, and its run's stop, for as long as the API says (an hour is allowed).
 */
const LONGEST_SDK_RETRY_WAIT_MS = 10_000;
/** Set by {@link boundRetryWaits} on an answer whose wait was too long for the SDK: the wait, in ms. */
const LONG_WAIT_HEADER = 'x-parley-retry-after-ms';

export interface AnthropicAdapterOptions {
  apiKey: string;
  /** Defaults to the public API; never read from the environment here. */
  baseURL?: string;
  model: string;
  max_tokens: number;
  /**
   * Accepted from agent files but not sent: API version 2026-10-21 (which SDK 1.x speaks) answers
   * 400 to any temperature, top_p or top_k, even the default value.
   */
  temperature?: number;
  /** Retries of 408/409/429/5xx and connection failures, with the SDK's backoff and retry-after. */
  maxRetries?: number;
  /** Per attempt, until response headers; also the longest silence allowed inside the stream. */
  timeoutMs?: number;
}

/** Talks to the Anthropic Messages API, streaming each text delta to `request.onTextDelta`. */
export class AnthropicModelAdapter implements ModelAdapter {
  private readonly client: Anthropic;
  private readonly timeoutMs: number;

  constructor(private readonly options: AnthropicAdapterOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client = new Anthropic({
      apiKey: options.apiKey,
      // Explicit, so the SDK does not fall back to ANTHROPIC_BASE_URL behind the config's back.
      baseURL: options.baseURL ?? 'https://api.anthropic.com',
      maxRetries: options.maxRetries ?? DEFAULT_MODEL_MAX_RETRIES,
      timeout: this.timeoutMs,
      fetch: boundRetryWaits(globalThis.fetch),
    });
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    if (request.signal?.aborted) {
      throw abortedError(request.signal);
    }
    const params: MessageCreateParamsBase = {
      model: this.options.model,
      max_tokens: this.options.max_tokens,
      messages: withCacheBreakpoints(request.messages),
      ...(request.system === '' ? {} : { system: [{ type: 'text', text: request.system, cache_control: CACHED }] }),
      ...toolParams(request),
    };
    const stream = this.client.messages.stream(params, { signal: request.signal });

    let callbackError: { error: unknown } | undefined;
    const onTextDelta = request.onTextDelta;
    if (onTextDelta !== undefined) {
      stream.on('text', (delta) => {
        if (callbackError !== undefined) {
          return;
        }
        try {
          onTextDelta(delta);
        } catch (error) {
          // The caller's own failure: stop the stream and rethrow it as is, not as a model error.
          callbackError = { error };
          stream.abort();
        }
      });
    }

    // The SDK's timeout ends at the response headers; a stream that goes silent needs its own.
    let idle = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdleTimer = (): void => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idle = true;
        stream.abort();
      }, this.timeoutMs);
    };
    stream.on('connect', armIdleTimer);
    stream.on('streamEvent', armIdleTimer);

    let message: Message;
    try {
      message = await stream.finalMessage();
    } catch (error) {
      if (callbackError !== undefined) {
        throw callbackError.error;
      }
      const failure = idle ? new ModelError(`model stream silent for ${this.timeoutMs} ms`, { kind: 'timeout', retryable: true, cause: error }) : toModelError(error, request.signal);
      const partial = stream.currentMessage;
      if (partial) {
        failure.usage = usageOf(partial);
      }
      throw failure;
    } finally {
      clearTimeout(idleTimer);
    }
    return toTurn(message);
  }
}

/**
 * Prompt-cache breakpoints, 4 at most as the API allows: the tools, the system prompt, and the last
 * block of each of the last two messages. A run's conversation only grows by appending, so each
 * turn reads the prefix the turn before wrote; the second-to-last breakpoint still finds one when the
 * last turn's write was not kept. (Prefixes shorter than the model's minimum are not cached, at no cost.)
 */
const CACHED = { type: 'ephemeral' } as const;

function toTool(tool: ModelRequest['tools'][number], cached: boolean): Tool {
  return { name: tool.name, description: tool.description, input_schema: tool.input_schema as Tool.InputSchema, ...(cached ? { cache_control: CACHED } : {}) };
}

/**
 * The offered tools. With none offered (an operator took the agent's tools away mid-run, a stage
 * denies them all), a history that holds tool calls still needs tool definitions: the API refuses
 * `tool_use` and `tool_result` blocks in a request without them (400). The tools the history names
 * are then declared again and the model is told to call none.
 */
function toolParams(request: ModelRequest): Pick<MessageCreateParamsBase, 'tools' | 'tool_choice'> {
  if (request.tools.length > 0) {
    return { tools: request.tools.map((tool, i) => toTool(tool, i === request.tools.length - 1)) };
  }
  const used = new Set(request.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : []))));
  if (used.size === 0) {
    return {};
  }
  const tools = [...used].map((name) => ({ name, description: 'No longer offered: do not call it.', input_schema: { type: 'object' as const } }));
  return { tools, tool_choice: { type: 'none' } };
}

function withCacheBreakpoints(messages: ModelMessage[]): MessageParam[] {
  return messages.map((message, i) =>
    i < messages.length - 2 || message.content.length === 0
      ? message
      : { ...message, content: message.content.map((block, j) => (j === message.content.length - 1 ? { ...block, cache_control: CACHED } : block)) },
  );
}

function toTurn(message: Message): ModelTurn {
  if (message.stop_reason === null) {
    // No message_delta came: what did may be any part of the reply (a tool input cut mid-way reads
    // as far as it went), so it is not taken for a whole one.
    throw new ModelError('model stream ended without a stop reason', { kind: 'protocol', retryable: true });
  }
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  for (const [i, block] of message.content.entries()) {
    if (block.type === 'text') {
      // Blocks one after the other (citations split them) are one text; a tool call between two is a break.
      const afterCall = text !== '' && message.content[i - 1]?.type === 'tool_use';
      text += afterCall ? `\n\n${block.text}` : block.text;
    } else if (block.type === 'tool_use') {
      if (!isRecord(block.input)) {
        throw new ModelError(`tool_use ${block.id} has an input that is not an object`, { kind: 'protocol', retryable: true });
      }
      toolCalls.push({ id: block.id, name: block.name, input: block.input });
    }
  }
  return { text, toolCalls, stopReason: message.stop_reason, usage: usageOf(message) };
}

function usageOf(message: Message): ModelUsage {
  return {
    input: message.usage.input_tokens,
    output: message.usage.output_tokens,
    cacheRead: message.usage.cache_read_input_tokens ?? 0,
    cacheWrite: message.usage.cache_creation_input_tokens ?? 0,
  };
}

/** Classifies an SDK failure; what the SDK retries is what stays retryable once its retries are spent. */
function toModelError(error: unknown, signal: AbortSignal | undefined): ModelError {
  if (error instanceof APIUserAbortError || signal?.aborted) {
    return abortedError(signal);
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError('model request timed out', { kind: 'timeout', retryable: true, cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ModelError(`cannot reach the model API: ${error.message}`, { kind: 'connection', retryable: true, cause: error });
  }
  if (isApiError(error)) {
    return fromApiError(error);
  }
  if (error instanceof AnthropicError) {
    // Mostly a stream cut short (the connection dropped after the headers).
    return new ModelError(`model stream failed: ${error.message}`, { kind: 'protocol', retryable: true, cause: error });
  }
  return new ModelError(`model call failed: ${String(error)}`, { kind: 'protocol', retryable: false, cause: error });
}

function fromApiError(error: APIError): ModelError {
  const status = error.status;
  let message = `model API error${status === undefined ? '' : ` ${status}`}: ${error.apiMessage ?? error.message}`;
  if (status === undefined) {
    // An `error` event inside a 200 stream: only its type tells what happened.
    const kind = error.type === null ? undefined : STREAM_ERROR_KINDS[error.type];
    return new ModelError(message, { kind: kind ?? 'rejected', retryable: kind !== undefined, cause: error });
  }
  // A wait too long for the SDK to sleep on (boundRetryWaits): its `x-should-retry: false` is ours,
  // and the call may pass once the wait is over.
  const longWait = Number(error.headers?.get(LONG_WAIT_HEADER) ?? NaN);
  const shouldRetry = Number.isFinite(longWait) ? null : error.headers?.get('x-should-retry');
  const waitMs = Number.isFinite(longWait) ? longWait : error.headers && retryAfterMs(error.headers);
  const known = { status, cause: error, ...(waitMs === undefined ? {} : { retryAfterMs: waitMs }) };
  if (Number.isFinite(longWait)) {
    message += ` (asked to wait ${Math.round(longWait / 1000)} s)`;
  }
  if (status === 429) {
    return new ModelError(message, { kind: 'rate_limited', retryable: shouldRetry !== 'false', ...known });
  }
  if (status === 529) {
    return new ModelError(message, { kind: 'overloaded', retryable: shouldRetry !== 'false', ...known });
  }
  if (retriedBySdk(status)) {
    return new ModelError(message, { kind: 'server', retryable: shouldRetry !== 'false', ...known });
  }
  return new ModelError(message, { kind: 'rejected', retryable: shouldRetry === 'true', ...known });
}

/**
 * The SDK sleeps on any retry-after up to 2^31 ms before its next try. An error answer asking for
 * more than LONGEST_SDK_RETRY_WAIT_MS is marked not to be retried by it (`x-should-retry: false`),
 * with the wait in LONG_WAIT_HEADER for fromApiError.
 */
function boundRetryWaits(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    const waitMs = retriedBySdk(response.status) ? retryAfterMs(response.headers) : undefined;
    if (waitMs === undefined || waitMs <= LONGEST_SDK_RETRY_WAIT_MS) {
      return response;
    }
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    headers.set(LONG_WAIT_HEADER, String(Math.ceil(waitMs)));
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

/** The statuses the SDK retries (and fromApiError calls retryable). */
function retriedBySdk(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** An answer's retry-after-ms, or retry-after (seconds or an HTTP date), in ms. */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms)) {
    return ms;
  }
  const value = headers.get('retry-after');
  if (value === null) {
    return undefined;
  }
  const seconds = Number(value);
  const waitMs = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(waitMs) ? waitMs : undefined;
}

const STREAM_ERROR_KINDS: Partial<Record<NonNullable<APIError['type']>, ModelErrorKind>> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate_limited',
  api_error: 'server',
  timeout_error: 'server',
};

// A predicate, because `instanceof` on the generic class narrows to APIError<any, any, any>.
function isApiError(error: unknown): error is APIError {
  return error instanceof APIError;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
