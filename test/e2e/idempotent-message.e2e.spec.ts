import type { ParleyEvent } from '@parley/contracts';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

/** Messages sent with an idempotency key: a retry after a lost response does not post the message twice. */
describe('a message with an idempotency key', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]) });
  });
  afterAll(() => stack.close());

  async function parkedRun(): Promise<string> {
    const runId = await stack.startRun('asker');
    await stack.waitForQuestion(runId);
    return runId;
  }
  const post = (runId: string, text: string, key?: string, token = stack.token()) =>
    stack.request('POST', `/v1/runs/${runId}/messages`, { text }, token, key === undefined ? {} : { 'Idempotency-Key': key });
  const received = async (runId: string) =>
    ((await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as ParleyEvent[]).flatMap((event) =>
      event.type === 'message.received' ? [{ messageId: event.data.messageId, text: event.data.text }] : [],
    );

  it('keeps it once however often it is sent over HTTP; the repeats are answered 202 with it', async () => {
    const runId = await parkedRun();
    const first = await post(runId, 'use the blue room', 'note-1');
    expect(first).toMatchObject({ status: 202, body: { messageId: expect.any(String), pending: 1 } });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(runId, 'use the blue room', 'note-1');
    expect(again).toMatchObject({ status: 202, body: { messageId: first.body.messageId, pending: 1 } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await received(runId)).toEqual([{ messageId: first.body.messageId, text: 'use the blue room' }]);

    // Without a key, each post is a message of its own.
    expect((await post(runId, 'and bring snacks')).status).toBe(202);
    expect((await post(runId, 'and bring snacks')).status).toBe(202);
    expect((await received(runId)).map((message) => message.text)).toEqual(['use the blue room', 'and bring snacks', 'and bring snacks']);
  });

  it('refuses the key for another text with a 409 that keeps nothing; a key is the caller’s own, per run', async () => {
    const runId = await parkedRun();
    const first = await post(runId, 'first words', 'note-2');
    expect(first.status).toBe(202);
    const other = await post(runId, 'other words', 'note-2');
    expect(other).toMatchObject({ status: 409, body: { error: { code: 'conflict', message: expect.stringContaining('Idempotency-Key was used for another message') } } });
    expect(await received(runId)).toEqual([{ messageId: first.body.messageId, text: 'first words' }]);

    // The same key from another caller, or to another run, is another message.
    const admin = stack.token({ sub: 'ops', role: 'admin' });
    const byAdmin = await post(runId, 'first words', 'note-2', admin);
    expect(byAdmin.status).toBe(202);
    expect(byAdmin.body.messageId).not.toBe(first.body.messageId);
    const elsewhere = await parkedRun();
    const toOther = await post(elsewhere, 'first words', 'note-2');
    expect(toOther.status).toBe(202);
    expect(toOther.body.messageId).not.toBe(first.body.messageId);
    expect((await received(runId)).map((message) => message.messageId)).toEqual([first.body.messageId, byAdmin.body.messageId]);
  });

  it('answers a repeat 202 once the run has ended: the message was kept before', async () => {
    const runId = await parkedRun();
    const first = await post(runId, 'too late?', 'note-3');
    expect(first.status).toBe(202);
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
    await stack.waitForStatus(runId, 'cancelled');
    const again = await post(runId, 'too late?', 'note-3');
    expect(again).toMatchObject({ status: 202, body: { messageId: first.body.messageId } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await post(runId, 'too late?', 'note-4')).status).toBe(409);
  });

  it('answers a repeat 202 when the run has all the messages it may hold waiting', async () => {
    const runId = await parkedRun();
    expect((await post(runId, 'the first of many', 'note-5')).status).toBe(202);
    for (let i = 1; i < 100; i++) {
      expect((await post(runId, `message ${i}`)).status).toBe(202);
    }
    expect((await post(runId, 'one too many')).status).toBe(409);
    expect(await post(runId, 'the first of many', 'note-5')).toMatchObject({ status: 202, body: { pending: 100 } });
  });

  it('does the same over socket.io, and refuses a bad key naming it', async () => {
    const runId = await parkedRun();
    const client = await stack.connect();
    try {
      const first = await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'over the socket', idempotencyKey: 'sock-1' });
      expect(first).toEqual({ ok: true, messageId: expect.any(String), pending: 1 });
      const again = await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'over the socket', idempotencyKey: 'sock-1' });
      expect(again).toEqual({ ok: true, messageId: first.messageId, pending: 1, replayed: true });
      const bad = await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'x', idempotencyKey: 'has spaces' });
      expect(bad).toMatchObject({ error: { code: 'validation_failed', details: { issues: [expect.objectContaining({ field: 'idempotencyKey' })] } } });
      expect(await received(runId)).toEqual([{ messageId: first.messageId, text: 'over the socket' }]);
    } finally {
      client.close();
    }
    const refused = await post(runId, 'x', 'has spaces');
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: { issues: [expect.objectContaining({ field: 'Idempotency-Key' })] } } } });
  });
});

describe('a message with an idempotency key, at the tenant limit', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]), overrides: { limitMessagesPerMinute: 1 } });
  });
  afterAll(() => stack.close());

  it('answers a repeat 202 though the tenant may send no more messages this minute', async () => {
    const runId = await stack.startRun('asker');
    await stack.waitForQuestion(runId);
    const post = (text: string, key: string) => stack.request('POST', `/v1/runs/${runId}/messages`, { text }, stack.token(), { 'Idempotency-Key': key });
    const first = await post('only one', 'limited-1');
    expect(first.status).toBe(202);
    const again = await post('only one', 'limited-1');
    expect(again).toMatchObject({ status: 202, body: { messageId: first.body.messageId } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await post('another', 'limited-2')).status).toBe(429);
  });
});
