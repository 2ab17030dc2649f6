import { startFakeAnthropic, systemText, withoutCacheMarkers, type FakeAnthropic, type WireBlock } from '../support/fake-anthropic';
import { TestStack, writeAgents, type TestClient } from '../support/stack';
import { waitFor } from '../support/wait-for';

const tools = ['list_files', 'read_file', 'write_file', 'finish', 'ask_user_text', 'ask_user_confirm'];
const agent = (name: string, maxAsk: number) => ({
  name,
  model: { provider: 'anthropic', name: 'claude-test', max_tokens: 1024 },
  system_prompt: 'You are tested.',
  tools,
  permissions: { write_file: 'allow' },
  limits: { max_iterations: 10, max_ask_user_per_loop: maxAsk, interaction_timeout_secs: 0 },
});

function lastUserBlocks(body: { messages: Array<{ role: string; content: unknown }> }): any[] {
  const last = body.messages[body.messages.length - 1];
  expect(last.role).toBe('user');
  return withoutCacheMarkers(last.content as WireBlock[]);
}

describe('the loop against the Anthropic Messages API (real SDK, local server)', () => {
  let fake: FakeAnthropic;
  let stack: TestStack;
  let client: TestClient;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: 'test-key' });
    stack = await TestStack.start({
      agentsDir: writeAgents([agent('asker', 1), agent('repeater', 3)]),
      overrides: { anthropicApiKey: 'test-key', anthropicBaseUrl: fake.url, modelMaxRetries: 2, modelStepRetries: 2, modelStepRetryMs: 10 },
    });
    client = await stack.connect();
    await client.subscribe({});
  });

  afterEach(() => fake.reset());

  afterAll(async () => {
    client.close();
    await stack.close();
    await fake.close();
  });

  it('streams text, gives a question precedence, enforces the budget and pairs every tool_use', async () => {
    fake.setResponder([
      {
        text: 'Let me ask you first.',
        chunkSize: 3,
        toolCalls: [
          { name: 'write_file', input: { path: 'a.txt', content: 'too early' } },
          { name: 'ask_user_text', input: { question: '   Which colour?   ' } },
        ],
      },
      { toolCalls: [{ name: 'ask_user_confirm', input: { question: 'Sure?' } }] },
      { toolCalls: [{ name: 'finish', input: { summary: 'All done.' } }] },
    ]);
    const runId = await stack.startRun('asker', 'Paint the fence');
    const question = await stack.waitForQuestion(runId);
    expect(question.prompt).toEqual({ kind: 'free_text', prompt: 'Which colour?' });
    expect((await stack.answer(question.id, { text: 'blue' })).status).toBe(200);
    const done = await stack.waitForStatus(runId, 'finished');
    expect(done.run).toMatchObject({ endReason: 'finish', summary: 'All done.' });

    expect(fake.requests).toHaveLength(3);
    expect(fake.violations).toEqual([]);
    const first = fake.requests[0] as any;
    expect(systemText(first)).toBe('You are tested.');
    expect(first.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Paint the fence', cache_control: { type: 'ephemeral' } }] }]);

    const [skipped, answered] = lastUserBlocks(fake.requests[1]);
    expect(skipped).toMatchObject({ type: 'tool_result', is_error: true, content: expect.stringContaining('skipped: a question to the user took precedence') });
    expect(answered).toMatchObject({ type: 'tool_result', content: JSON.stringify({ ok: true, answer: 'blue' }) });
    expect(answered.is_error).toBeUndefined();

    const [budget] = lastUserBlocks(fake.requests[2]);
    expect(budget).toMatchObject({ type: 'tool_result', is_error: true, content: expect.stringContaining('finish') });
    // The history sent is append-only: each request starts with the previous one's messages.
    // Append-only: the turn before is a prefix of this one (but for where the cache markers sit).
    const unmarked = (messages: any[]) => messages.map((message) => ({ ...message, content: withoutCacheMarkers(message.content) }));
    expect(unmarked((fake.requests[2] as any).messages.slice(0, 3))).toEqual(unmarked((fake.requests[1] as any).messages));

    const interactions = await stack.http('GET', `/v1/interactions?status=all&runId=${runId}`);
    expect(interactions.body.interactions).toHaveLength(1);
    expect(await stack.redis.hget(`${stack.config.prefix}:{t:acme}:run:${runId}:ws`, 'a.txt')).toBeNull();

    // Text streamed as deltas while the model wrote; the log keeps the final message only.
    const deltas = client.events.filter((e) => e.runId === runId && e.type === 'message.delta').map((e: any) => e.data.text);
    expect(deltas.join('')).toBe('Let me ask you first.');
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'assistant').map((e) => e.text)).toEqual(['Let me ask you first.', '', '']);
  });

  it('keeps questions apart when the provider reuses a tool_use id across runs', async () => {
    fake.setResponder((body) => {
      const task = (body.messages[0].content as any[])[0].text as string;
      const answered = body.messages.length > 1;
      return answered
        ? { toolCalls: [{ name: 'finish', input: { summary: `${task} done` } }] }
        : { toolCalls: [{ id: 'toolu_same', name: 'ask_user_text', input: { question: `About ${task}?` } }] };
    });
    const runA = await stack.startRun('repeater', 'A');
    const runB = await stack.startRun('repeater', 'B');
    const [qa, qb] = await Promise.all([stack.waitForQuestion(runA), stack.waitForQuestion(runB)]);
    expect(qa.id).not.toBe(qb.id);
    expect([qa.prompt.prompt, qb.prompt.prompt]).toEqual(['About A?', 'About B?']);
    await stack.answer(qb.id, { text: 'for B' });
    await stack.answer(qa.id, { text: 'for A' });
    await Promise.all([stack.waitForStatus(runA, 'finished'), stack.waitForStatus(runB, 'finished')]);
    const resumed = fake.requests.filter((r) => r.messages.length > 1).map((r) => [(r.messages[0].content as any[])[0].text, lastUserBlocks(r as any)]);
    expect(resumed).toEqual(
      expect.arrayContaining([
        ['A', [{ type: 'tool_result', tool_use_id: 'toolu_same', content: '{"ok":true,"answer":"for A"}' }]],
        ['B', [{ type: 'tool_result', tool_use_id: 'toolu_same', content: '{"ok":true,"answer":"for B"}' }]],
      ]),
    );
    expect(fake.violations).toEqual([]);
  });

  it('fails the run with model_error when the API keeps failing, after retrying the call and then the step', async () => {
    fake.setResponder(() => ({ status: 529, retryAfterMs: 1 }));
    const runId = await stack.startRun('asker');
    const failed = await stack.waitForStatus(runId, 'failed');
    expect(failed.run.endReason).toBe('model_error');
    expect(failed.run.error).toMatch(/its step was tried 3 times/);
    // 3 calls (the SDK's 2 retries) in each of 3 tries of the step (2 step retries).
    expect(fake.requests).toHaveLength(9);
  });

  it('tries a step again later when the API is overloaded past its retries, or mid-stream, and the run goes on', async () => {
    fake.setResponder((_body, call) => {
      if (call < 3) {
        return { status: 529, retryAfterMs: 1 };
      }
      if (call === 3) {
        // Overloaded after the 200 had started: the SDK does not retry that itself.
        return { text: 'Half a', streamError: { type: 'overloaded_error', message: 'Overloaded' } };
      }
      return { toolCalls: [{ name: 'finish', input: { summary: 'made it' } }] };
    });
    const runId = await stack.startRun('asker');
    const done = await stack.waitForStatus(runId, 'finished');
    expect(done.run.summary).toBe('made it');
    expect(fake.requests).toHaveLength(5);
    await client.waitForEvent((e) => e.runId === runId && e.type === 'run.finished', 'run.finished');
    const statuses = client.events.filter((e) => e.runId === runId && e.type === 'run.status').map((e) => (e.data as { status: string }).status);
    // Created queued; handed back after each failed try.
    expect(statuses).toEqual(['queued', 'running', 'queued', 'running', 'queued', 'running', 'finished']);
    expect(fake.violations).toEqual([]);
  });

  it('gives up a try whose stream goes silent for PARLEY_MODEL_TIMEOUT_SECS, and asks again', async () => {
    // A worker of its own: a short timeout would fail the long streams of the other tests on a loaded host.
    await stack.stopWorker();
    await stack.startWorker({ modelTimeoutSecs: 1 });
    try {
      fake.setResponder((_body, call) => (call === 0 ? { text: 'and then nothing', chunkSize: 4, chunkDelayMs: 600_000 } : { toolCalls: [{ name: 'finish', input: { summary: 'Done.' } }] }));
      const runId = await stack.startRun('asker');
      expect((await stack.waitForStatus(runId, 'finished')).run.summary).toBe('Done.');
      expect(fake.requests).toHaveLength(2);
    } finally {
      await stack.stopWorker();
      await stack.startWorker();
    }
  });

  it('gives up a model call still streaming when a stop is asked: the run ends cancelled without waiting for the reply', async () => {
    // A reply that would take about two minutes to stream.
    fake.setResponder(() => ({ text: 'x'.repeat(500), chunkSize: 1, chunkDelayMs: 250 }));
    const runId = await stack.startRun('asker');
    await client.waitForEvent((e) => e.runId === runId && e.type === 'message.delta', 'the reply streaming');
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
    const stopped = await stack.waitForStatus(runId, 'cancelled');
    expect(stopped.run.endReason).toBe('cancelled');
    // Nothing of the reply was recorded, and the model was not asked again.
    expect(client.events.filter((e) => e.runId === runId && e.type === 'message')).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('puts the step off for as long as the API asks when that is too long to sleep on within the call: the worker is free meanwhile', async () => {
    fake.setResponder(() => ({ status: 429, retryAfter: 3600 }));
    const runId = await stack.startRun('asker');
    const delayed = `${stack.config.prefix}:bull:runs:delayed`;
    const jobId = await waitFor(async () => (await stack.redis.zrange(delayed, '0', '-1')).find((id) => id.includes(runId)), { message: 'the run job put off' });
    // One request: the SDK did not sleep an hour on it, holding the worker's slot and the run's stop.
    expect(fake.requests).toHaveLength(1);
    expect(Number(await stack.redis.hget(`${stack.config.prefix}:bull:runs:${jobId}`, 'delay'))).toBeGreaterThan(3_500_000);
    expect((await stack.http<any>('GET', `/v1/runs/${runId}`)).body.run.status).toBe('queued');
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
  });

  it('sums up a run that ends on a reply without a call by its text, bounded as a finish summary', async () => {
    fake.setResponder(() => ({ text: 'é'.repeat(600_000) }));
    const runId = await stack.startRun('asker');
    const done = await stack.waitForStatus(runId, 'finished');
    expect(done.run.summary).toBe('é'.repeat(2000));
    expect(Buffer.byteLength((await stack.redis.hget(`${stack.config.prefix}:{t:acme}:run:${runId}`, 'summary')) ?? '')).toBe(4000);
  });

  it('runs no call of a turn cut off at max_tokens, tells the model so, and does not end on a cut-off reply', async () => {
    fake.setResponder([
      // The last call's arguments may have been cut short: neither runs.
      {
        toolCalls: [
          { name: 'write_file', input: { path: 'a.txt', content: 'whole' } },
          { name: 'write_file', input: { path: 'b.txt' } },
        ],
        stopReason: 'max_tokens',
      },
      { text: 'Once upon a', stopReason: 'max_tokens' },
      { toolCalls: [{ name: 'finish', input: { summary: 'told in short' } }] },
    ]);
    const runId = await stack.startRun('asker');
    const done = await stack.waitForStatus(runId, 'finished');
    expect(done.run.summary).toBe('told in short');
    const results = lastUserBlocks(fake.requests[1]);
    expect(results).toHaveLength(2);
    for (const block of results) {
      expect(block).toMatchObject({ type: 'tool_result', is_error: true, content: expect.stringContaining('cut off') });
    }
    expect(lastUserBlocks(fake.requests[2] as any)).toEqual([{ type: 'text', text: expect.stringContaining('cut off') }]);
    expect((await stack.log(runId)).filter((e) => e.type === 'tool_result' && !e.isError)).toHaveLength(1);
    expect(fake.violations).toEqual([]);
  });

  it('runs no call of a turn stopped by a refusal or a full context window, and fails the run saying so instead of asking again', async () => {
    fake.setResponder([
      { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'half' } }], stopReason: 'refusal' },
      { text: 'The summary of everything so', stopReason: 'model_context_window_exceeded' },
    ]);
    const runId = await stack.startRun('asker');
    const done = await stack.waitForStatus(runId, 'failed');
    expect(done.run).toMatchObject({ endReason: 'model_error', error: expect.stringContaining('refusal') });
    expect(fake.requests).toHaveLength(1);
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'tool_result')).toEqual([expect.objectContaining({ isError: true, content: expect.stringContaining('refusal') })]);
    expect(JSON.stringify(log)).not.toContain('cut off');

    // A reply cut off by a full context window: asking again could only fail the same way.
    const full = await stack.startRun('asker');
    const ended = await stack.waitForStatus(full, 'failed');
    expect(ended.run).toMatchObject({ endReason: 'model_error', error: expect.stringContaining('context window') });
    expect((await stack.log(full)).map((e) => e.type)).toEqual(['task', 'assistant']);
    expect(fake.requests).toHaveLength(2);
    expect(fake.violations).toEqual([]);
  });

  it('counts the tries per model call: calls that each pass within the budget never add up to failing the run', async () => {
    const overloaded = { streamError: { type: 'overloaded_error', message: 'Overloaded' } };
    fake.setResponder([
      overloaded,
      overloaded,
      { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one' } }] },
      overloaded,
      overloaded,
      { toolCalls: [{ name: 'finish', input: { summary: 'through' } }] },
    ]);
    const runId = await stack.startRun('asker');
    const done = await stack.waitForStatus(runId, ['finished', 'failed']);
    expect(done.run).toMatchObject({ status: 'finished', summary: 'through' });
    expect(fake.requests).toHaveLength(6);
  });

  it('does not try a step again when the API refuses the request for good', async () => {
    fake.setResponder(() => ({ status: 400, error: { type: 'invalid_request_error', message: 'prompt is too long' } }));
    const runId = await stack.startRun('asker');
    const failed = await stack.waitForStatus(runId, 'failed');
    expect(failed.run.error).toMatch(/prompt is too long/);
    expect(failed.run.error).not.toMatch(/tried/);
    expect(fake.requests).toHaveLength(1);
  });
});
