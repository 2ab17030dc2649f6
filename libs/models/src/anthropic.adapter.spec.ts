import { checkToolPairing, startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions } from '../../../test/support/fake-anthropic';
import { AnthropicModelAdapter, type AnthropicAdapterOptions } from './anthropic.adapter';
import { ModelError } from './model.errors';
import type { ModelMessage, ModelRequest, ToolSpec } from './model.types';

const API_KEY = 'sk-test-key';

const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Reads a file of the workspace.',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const CACHED = { type: 'ephemeral' };

describe('AnthropicModelAdapter (real SDK against the fake API)', () => {
  let fake: FakeAnthropic | undefined;

  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  async function setup(
    fakeOptions: FakeAnthropicOptions,
    adapterOptions: Partial<AnthropicAdapterOptions> = {},
  ): Promise<{ fake: FakeAnthropic; adapter: AnthropicModelAdapter }> {
    fake = await startFakeAnthropic({ apiKey: API_KEY, ...fakeOptions });
    const adapter = new AnthropicModelAdapter({ apiKey: API_KEY, baseURL: fake.url, model: 'claude-test', max_tokens: 512, ...adapterOptions });
    return { fake, adapter };
  }

  const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
    system: 'You are terse.',
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    tools: [],
    ...extra,
  });

  it('streams text deltas in order and returns their concatenation', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, twice. 🦊🦊';
    const { fake, adapter } = await setup({ responder: [{ text, chunkSize: 5 }] }, { temperature: 0.2 });
    const deltas: string[] = [];

    const turn = await adapter.complete(ask('Say it.', { onTextDelta: (delta) => deltas.push(delta) }));

    expect(turn).toEqual({ text, toolCalls: [], stopReason: 'end_turn', usage: { input: expect.any(Number), output: 25, cacheRead: 0, cacheWrite: 0 } });
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(turn.text);
    expect(deltas[0]).toBe(Array.from(text).slice(0, 5).join(''));

    expect(fake.requests).toHaveLength(1);
    const body = fake.requests[0];
    expect(body).toMatchObject({ model: 'claude-test', max_tokens: 512, system: [{ type: 'text', text: 'You are terse.', cache_control: CACHED }], stream: true });
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Say it.', cache_control: CACHED }] }]);
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('temperature');
    expect(fake.calls[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(fake.violations).toEqual([]);
  });

  it('declares the tools a history calls, and asks for no call, when none is offered any more', async () => {
    const { fake, adapter } = await setup({ responder: () => ({ text: 'Done without tools.' }) });
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'What is in notes/a.txt?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'notes/a.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'notes/b.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'hi' }] },
    ];
    const turn = await adapter.complete({ system: '', messages, tools: [] });
    expect(turn).toMatchObject({ text: 'Done without tools.', toolCalls: [], stopReason: 'end_turn' });
    expect(fake.requests[0]).toMatchObject({ tools: [{ name: 'read_file', input_schema: { type: 'object' } }], tool_choice: { type: 'none' } });
    expect(fake.violations).toEqual([]);
  });

  it('completes a tool_use -> tool_result round trip over two calls', async () => {
    const { fake, adapter } = await setup({
      responder: (body, callIndex) =>
        callIndex === 0
          ? { text: 'Let me look.', toolCalls: [{ name: 'read_file', input: { path: 'notes/a.txt', opts: { lines: [1, 2] } } }] }
          : { text: `The file says: ${JSON.stringify(body.messages.at(-1)?.content)}` },
    });
    const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'What is in notes/a.txt?' }] }];

    const first = await adapter.complete({ system: '', messages, tools: [READ_FILE] });

    expect(first.stopReason).toBe('tool_use');
    expect(first.text).toBe('Let me look.');
    expect(first.toolCalls).toEqual([{ id: expect.stringMatching(/^toolu_/), name: 'read_file', input: { path: 'notes/a.txt', opts: { lines: [1, 2] } } }]);
    expect(fake.requests[0].tools).toEqual([{ ...READ_FILE, cache_control: CACHED }]);
    expect(fake.requests[0]).not.toHaveProperty('system');

    const call = first.toolCalls[0];
    messages.push(
      { role: 'assistant', content: [{ type: 'text', text: first.text }, { type: 'tool_use', id: call.id, name: call.name, input: call.input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '{"ok":true,"content":"hello"}', is_error: false }] },
    );
    const second = await adapter.complete({ system: '', messages, tools: [READ_FILE] });

    expect(second.stopReason).toBe('end_turn');
    expect(second.toolCalls).toEqual([]);
    expect(second.text).toContain('hello');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1].messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call.id, content: '{"ok":true,"content":"hello"}', is_error: false, cache_control: CACHED }],
    });
    // Prompt-cache breakpoints: the tools, and the last block of each of the last two messages (4 at most).
    expect(fake.requests[1].messages.map((message) => (message.content as any[]).map((block) => 'cache_control' in block))).toEqual([[false], [false, true], [true]]);
    // The caller's messages are not changed.
    expect(messages.flatMap((message) => message.content).some((block) => 'cache_control' in block)).toBe(false);
    expect(checkToolPairing(fake.requests[1].messages)).toEqual([]);
    expect(fake.violations).toEqual([]);
  });

  it('retries a 429 and succeeds', async () => {
    const { fake, adapter } = await setup({
      responder: (_body, callIndex) => (callIndex === 0 ? { status: 429, retryAfterMs: 1 } : { text: 'after the rate limit' }),
    });

    const turn = await adapter.complete(ask('hi'));

    expect(turn.text).toBe('after the rate limit');
    expect(fake.requests).toHaveLength(2);
    expect(fake.calls.map((call) => call.status)).toEqual([429, 200]);
  });

  it('does not sleep on a retry-after too long for one call: it fails retryable with the wait, for the step to be put off', async () => {
    const { fake, adapter } = await setup({ responder: () => ({ status: 429, retryAfter: 3600 }) });
    const started = Date.now();

    const error = await adapter.complete(ask('hi')).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, status: 429, retryAfterMs: 3_600_000 });
    expect((error as ModelError).message).toMatch(/asked to wait 3600 s/);
    expect(fake.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('leaves a refusal refused, however long its retry-after', async () => {
    const { fake, adapter } = await setup({ responder: () => ({ status: 400, retryAfter: 3600 }) });

    const error = await adapter.complete(ask('hi')).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ kind: 'rejected', retryable: false, status: 400 });
    expect(fake.requests).toHaveLength(1);
  });

  it("keeps the API's retry-after of the last try, when the SDK's retries are spent", async () => {
    const { fake, adapter } = await setup({ responder: () => ({ status: 529, retryAfterMs: 5 }) }, { maxRetries: 1 });

    const error = await adapter.complete(ask('hi')).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ kind: 'overloaded', retryable: true, status: 529, retryAfterMs: 5 });
    expect(fake.requests).toHaveLength(2);
  });

  it('gives up after maxRetries on repeated 500s with a retryable ModelError', async () => {
    const { fake, adapter } = await setup({ responder: () => ({ status: 500 }) }, { maxRetries: 3 });

    const error = await adapter.complete(ask('hi')).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'model_error', kind: 'server', retryable: true, status: 500 });
    expect((error as ModelError).cause).toBeInstanceOf(Error);
    expect(fake.requests).toHaveLength(4);
  });

  it('does not retry a 400 and reports it as not retryable', async () => {
    const { fake, adapter } = await setup({
      responder: () => ({ status: 400, error: { type: 'invalid_request_error', message: 'messages: bad shape' } }),
    });

    const error = await adapter.complete(ask('hi')).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'model_error', kind: 'rejected', retryable: false, status: 400 });
    expect((error as ModelError).message).toContain('messages: bad shape');
    expect(fake.requests).toHaveLength(1);
  });

  it('does not retry a bad API key', async () => {
    const { fake, adapter } = await setup({}, { apiKey: 'sk-wrong' });

    await expect(adapter.complete(ask('hi'))).rejects.toMatchObject({ kind: 'rejected', retryable: false, status: 401 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.violations.map((violation) => violation.kind)).toEqual(['unauthenticated']);
  });

  it('surfaces a pairing violation as the 400 the real API would give', async () => {
    const { fake, adapter } = await setup({});
    const messages: ModelMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'I forgot the result' }] },
    ];

    await expect(adapter.complete({ system: '', messages, tools: [READ_FILE] })).rejects.toMatchObject({ retryable: false, status: 400 });
    expect(fake.violations).toMatchObject([{ kind: 'missing_tool_result', toolUseId: 'toolu_1', callIndex: 0 }]);
  });

  it('reports an overloaded error inside the stream as retryable', async () => {
    const { adapter } = await setup({ responder: [{ text: 'partial answer', streamError: { type: 'overloaded_error' } }] });
    const deltas: string[] = [];

    const error = await adapter.complete(ask('hi', { onTextDelta: (delta) => deltas.push(delta) })).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'model_error', kind: 'overloaded', retryable: true });
    expect(deltas.join('')).toBe('partial answer');
    // What the provider counted before the stream broke: billed all the same.
    expect((error as ModelError).usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number) });
    expect((error as ModelError).usage!.input).toBeGreaterThan(0);
  });

  it('reports an unreachable API as a retryable connection error', async () => {
    const closed = await startFakeAnthropic();
    await closed.close();
    const adapter = new AnthropicModelAdapter({ apiKey: API_KEY, baseURL: closed.url, model: 'claude-test', max_tokens: 64, maxRetries: 0 });

    await expect(adapter.complete(ask('hi'))).rejects.toMatchObject({ kind: 'connection', retryable: true });
  });

  it('honours the abort signal mid-stream', async () => {
    const { adapter } = await setup({ responder: [{ text: 'a long answer that gets cut off', chunkSize: 2, chunkDelayMs: 5 }] });
    const controller = new AbortController();
    const deltas: string[] = [];

    const pending = adapter.complete(
      ask('hi', {
        signal: controller.signal,
        onTextDelta: (delta) => {
          deltas.push(delta);
          controller.abort();
        },
      }),
    );

    await expect(pending).rejects.toMatchObject({ kind: 'aborted', retryable: false });
    expect(deltas.join('').length).toBeLessThan('a long answer that gets cut off'.length);
  });

  it('does not call the API when the signal is already aborted', async () => {
    const { fake, adapter } = await setup({});
    const controller = new AbortController();
    controller.abort();

    await expect(adapter.complete(ask('hi', { signal: controller.signal }))).rejects.toMatchObject({ kind: 'aborted' });
    expect(fake.requests).toHaveLength(0);
  });

  it('ends a stream that goes silent with a retryable timeout', async () => {
    const { adapter } = await setup({ responder: [{ text: 'slow words', chunkSize: 1, chunkDelayMs: 60_000 }] }, { timeoutMs: 300, maxRetries: 0 });

    await expect(adapter.complete(ask('hi'))).rejects.toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('fails retryable on a stream that never says why the reply stopped, rather than taking what came for the whole reply', async () => {
    const { adapter } = await setup({ responder: [{ text: 'half a repl', toolCalls: [{ name: 'read_file', input: { path: 'a' } }], noStopReason: true }] }, { maxRetries: 0 });

    await expect(adapter.complete(ask('hi', { tools: [READ_FILE] }))).rejects.toMatchObject({ kind: 'protocol', retryable: true });
  });

  it('keeps text blocks on either side of a tool call apart', async () => {
    const { adapter } = await setup({
      responder: () => ({ text: 'First I look.', toolCalls: [{ name: 'read_file', input: { path: 'a' } }], trailingText: 'Then I tell you.' }),
    });

    const turn = await adapter.complete(ask('hi', { tools: [READ_FILE] }));
    expect(turn.text).toBe('First I look.\n\nThen I tell you.');
  });

  it('rethrows an error of the onTextDelta callback as is', async () => {
    const { adapter } = await setup({ responder: [{ text: 'some streamed text' }] });
    const boom = new Error('listener failed');

    await expect(
      adapter.complete(
        ask('hi', {
          onTextDelta: () => {
            throw boom;
          },
        }),
      ),
    ).rejects.toBe(boom);
  });
});
