import Anthropic from '@anthropic-ai/sdk';
import { checkToolPairing, startFakeAnthropic, validateMessagesRequest, type FakeAnthropic, type WireBlock, type WireMessage } from './fake-anthropic';

const user = (...content: WireBlock[]): WireMessage => ({ role: 'user', content });
const assistant = (...content: WireBlock[]): WireMessage => ({ role: 'assistant', content });
const text = (value: string) => ({ type: 'text', text: value });
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'read_file', input: {} });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });

describe('checkToolPairing', () => {
  it('accepts a well-paired conversation, with string contents and text after the results', () => {
    expect(
      checkToolPairing([
        { role: 'user', content: 'read two files' },
        assistant(text('sure'), toolUse('a'), toolUse('b')),
        user(toolResult('b'), toolResult('a'), text('both read')),
        assistant(text('done')),
        { role: 'user', content: 'thanks' },
      ]),
    ).toEqual([]);
  });

  it('flags a tool_use without a result in the very next message', () => {
    const violations = checkToolPairing([user(text('go')), assistant(toolUse('a'), toolUse('b')), user(toolResult('a'))]);
    expect(violations).toMatchObject([{ kind: 'missing_tool_result', messageIndex: 1, toolUseId: 'b' }]);
    expect(violations[0].message).toContain('`tool_use` ids were found without `tool_result` blocks immediately after: b');
  });

  it('flags a result that comes one message too late', () => {
    const violations = checkToolPairing([
      user(text('go')),
      assistant(toolUse('a')),
      user(text('wait')),
      assistant(text('ok')),
      user(toolResult('a')),
    ]);
    expect(violations.map((violation) => violation.kind)).toEqual(['missing_tool_result', 'orphan_tool_result']);
  });

  it('flags a tool_use that ends the conversation', () => {
    expect(checkToolPairing([user(text('go')), assistant(toolUse('a'))])).toMatchObject([{ kind: 'missing_tool_result', toolUseId: 'a' }]);
  });

  it('flags a result for an unknown id', () => {
    expect(checkToolPairing([user(text('go')), assistant(toolUse('a')), user(toolResult('a'), toolResult('zzz'))])).toMatchObject([
      { kind: 'orphan_tool_result', messageIndex: 2, toolUseId: 'zzz' },
    ]);
    expect(checkToolPairing([user(toolResult('a'))])).toMatchObject([{ kind: 'orphan_tool_result', messageIndex: 0 }]);
  });

  it('flags results placed after other content and reused tool_use ids', () => {
    expect(checkToolPairing([user(text('go')), assistant(toolUse('a')), user(text('here:'), toolResult('a'))])).toMatchObject([
      { kind: 'tool_result_not_first', toolUseId: 'a' },
    ]);
    expect(
      checkToolPairing([user(text('go')), assistant(toolUse('a')), user(toolResult('a')), assistant(toolUse('a')), user(toolResult('a'))]),
    ).toMatchObject([{ kind: 'duplicate_tool_use_id', messageIndex: 3, toolUseId: 'a' }]);
  });
});

describe('validateMessagesRequest', () => {
  const base = { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

  it('accepts a minimal request', () => {
    expect(validateMessagesRequest(base)).toEqual([]);
  });

  it('rejects sampling parameters from API version 2026-10-21 on, as the real API does', () => {
    expect(validateMessagesRequest({ ...base, temperature: 1 })).toMatchObject([{ kind: 'invalid_request', message: 'temperature: Extra inputs are not permitted' }]);
    expect(validateMessagesRequest({ ...base, top_k: 5 }, { apiVersion: '2026-10-21' })).toHaveLength(1);
    expect(validateMessagesRequest({ ...base, temperature: 1 }, { apiVersion: '2023-06-01' })).toEqual([]);
  });

  it.each([
    ['a non-object body', 'hello'],
    ['a missing model', { ...base, model: undefined }],
    ['a missing max_tokens', { ...base, max_tokens: 0 }],
    ['no messages', { ...base, messages: [] }],
    ['an unknown role', { ...base, messages: [{ role: 'robot', content: 'hi' }] }],
    ['a block without type', { ...base, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }],
    ['a tool without schema', { ...base, tools: [{ name: 'x' }] }],
    [
      'tool blocks without tools',
      {
        ...base,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
        ],
      },
    ],
    ['an unknown tool_choice', { ...base, tools: [{ name: 'x', input_schema: { type: 'object' } }], tool_choice: { type: 'never' } }],
  ])('rejects %s', (_case, body) => {
    expect(validateMessagesRequest(body)).toMatchObject([{ kind: 'invalid_request' }]);
  });
});

describe('startFakeAnthropic', () => {
  let fake: FakeAnthropic | undefined;

  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  const clientFor = (server: FakeAnthropic, maxRetries = 0): Anthropic => new Anthropic({ apiKey: 'sk-test', baseURL: server.url, maxRetries });
  const params = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };

  it('answers a non-streaming request with a Message the SDK parses', async () => {
    fake = await startFakeAnthropic({ responder: [{ text: 'Checking.', toolCalls: [{ id: 'toolu_x', name: 'read_file', input: { path: 'a' } }] }] });

    const message = await clientFor(fake).messages.create(params);

    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_x', name: 'read_file', input: { path: 'a' } },
      ],
    });
    expect(fake.calls[0]).toMatchObject({ index: 0, stream: false, status: 200, violations: [] });
  });

  it('streams the events of the Messages API in order', async () => {
    fake = await startFakeAnthropic({ responder: () => ({ text: 'abcdef', chunkSize: 3, toolCalls: [{ name: 'read_file', input: { path: 'a' } }] }) });

    const stream = await clientFor(fake).messages.create({ ...params, stream: true });
    const events: string[] = [];
    for await (const event of stream) {
      events.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
    }

    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const final = await clientFor(fake).messages.stream(params).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'abcdef' });
    expect(final.content[1]).toMatchObject({ type: 'tool_use', id: expect.stringMatching(/^toolu_fake_/), input: { path: 'a' } });
    expect(final.stop_reason).toBe('tool_use');
  });

  it('answers a request that breaks the pairing rule with 400 invalid_request_error and records it', async () => {
    fake = await startFakeAnthropic();
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2026-10-21' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 10,
        messages: [user(text('go')), assistant(toolUse('a')), user(text('no result'))],
        tools: [{ name: 'read_file', input_schema: { type: 'object' } }],
      }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('messages.1') } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.violations).toMatchObject([{ kind: 'missing_tool_result', callIndex: 0 }]);
  });

  it('sends retry hints with injected failures: retry-after-ms 1 by default, or what the reply says', async () => {
    fake = await startFakeAnthropic({
      responder: [{ status: 429 }, { status: 503, retryAfter: 2 }, { status: 500, retryAfterMs: null, headers: { 'x-should-retry': 'false' } }],
    });
    const post = () =>
      fetch(`${fake!.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2026-10-21' },
        body: JSON.stringify(params),
      });

    const rateLimited = await post();
    expect(rateLimited.status).toBe(429);
    expect(rateLimited.headers.get('retry-after-ms')).toBe('1');
    expect(await rateLimited.json()).toMatchObject({ error: { type: 'rate_limit_error' } });

    const unavailable = await post();
    expect(unavailable.headers.get('retry-after')).toBe('2');
    expect(unavailable.headers.get('retry-after-ms')).toBeNull();

    const failed = await post();
    expect(failed.headers.get('retry-after-ms')).toBeNull();
    expect(failed.headers.get('x-should-retry')).toBe('false');
  });

  it('answers 400 unscripted once a reply list runs out, and 500 without retry when the responder throws', async () => {
    fake = await startFakeAnthropic({ responder: [{ text: 'one' }] });
    const client = clientFor(fake, 2);

    await client.messages.create(params);
    await expect(client.messages.create(params)).rejects.toMatchObject({ status: 400 });

    fake.setResponder(() => {
      throw new Error('test bug');
    });
    await expect(client.messages.create(params)).rejects.toMatchObject({ status: 500 });

    expect(fake.requests).toHaveLength(3);
    expect(fake.violations.map((violation) => violation.kind)).toEqual(['unscripted', 'responder_error']);
  });

  it('checks the API key when given one', async () => {
    fake = await startFakeAnthropic({ apiKey: 'sk-right' });

    await expect(new Anthropic({ apiKey: 'sk-wrong', baseURL: fake.url, maxRetries: 0 }).messages.create(params)).rejects.toMatchObject({ status: 401 });
    await expect(new Anthropic({ apiKey: 'sk-right', baseURL: fake.url, maxRetries: 0 }).messages.create(params)).resolves.toMatchObject({
      type: 'message',
    });
  });

  it('answers 404 off the Messages route and 400 to a body that is not JSON', async () => {
    fake = await startFakeAnthropic();

    expect((await fetch(`${fake.url}/v1/models`)).status).toBe(404);
    const response = await fetch(`${fake.url}/v1/messages`, { method: 'POST', body: '{not json' });
    expect(response.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
    expect(fake.violations).toMatchObject([{ kind: 'invalid_json', callIndex: -1 }]);
  });

  it('lets a test wait for requests, and forgets them on reset', async () => {
    fake = await startFakeAnthropic();
    const client = clientFor(fake);

    const waiting = fake.waitForRequests(2);
    await client.messages.create(params);
    await client.messages.create(params);
    await expect(waiting).resolves.toBeUndefined();
    await expect(fake.waitForRequests(3, 20)).rejects.toThrow('2 of 3 requests');

    fake.reset();
    expect(fake.requests).toEqual([]);
    expect(fake.calls).toEqual([]);
    await client.messages.create(params);
    expect(fake.calls[0].index).toBe(0);
  });

  it('closes promptly while a reply is still streaming', async () => {
    fake = await startFakeAnthropic({ responder: [{ text: 'slow', chunkSize: 1, chunkDelayMs: 60_000 }] });
    const stream = clientFor(fake).messages.stream(params);
    const ended = stream.finalMessage().catch((error: unknown) => error);
    const firstText = new Promise<string>((resolve) => stream.once('text', resolve));

    expect(await firstText).toBe('s');
    await fake.close();
    fake = undefined;

    expect(await ended).toBeInstanceOf(Error);
  });
});
