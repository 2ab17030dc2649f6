import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { ParleyStore, RedisKeys, WEBHOOK_GROUP } from '@parley/store';
import { askerAgent } from '../support/agents';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/**
 * Every Redis connection of the stack goes through a proxy that can lose the reply to one command
 * after Redis ran it (a network drop). The step is not run twice, and the caller is told what
 * happened: what Redis holds decides.
 */
describe('a reply lost on its way back from Redis', () => {
  let proxy: ReplyDroppingProxy;
  let stack: TestStack;

  beforeAll(async () => {
    proxy = await ReplyDroppingProxy.start(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    // No sweep and no takeover of idle webhook entries during the file: what is repaired here is
    // repaired by the step that lost its reply.
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent(), askerAgent('hurried', 1)]),
      overrides: { redisUrl: proxy.url, sweepMs: 3_600_000, webhookAllowPrivate: true, webhookClaimIdleMs: 3_600_000 },
    });
  });
  afterAll(async () => {
    await stack.close();
    await proxy.close();
  });

  /** The SHA-1 of one of Parley's scripts, as its EVALSHA names it. */
  function shaOf(script: string): string {
    const probe = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    new ParleyStore(probe, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 });
    const sha = (probe as unknown as { scriptsSet: Record<string, { sha: string }> }).scriptsSet[`parley_${script}`].sha;
    probe.disconnect();
    return sha;
  }

  async function openInteraction(runId: string): Promise<string> {
    return ((await stack.waitForQuestion(runId)) as { id: string }).id;
  }

  it('of a run start: the run is started once, and the start answers 201', async () => {
    const cut = proxy.dropReplyTo('start-whose-reply-is-lost');
    const started = await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'start-whose-reply-is-lost' });
    await cut;
    expect(started.status).toBe(201);
    const runs = (await stack.http('GET', '/v1/runs')).body.runs as Array<{ id: string; task: string }>;
    expect(runs.filter((run) => run.task === 'start-whose-reply-is-lost').map((run) => run.id)).toEqual([started.body.run.id]);
    // It got its job: it runs and asks.
    await openInteraction(started.body.run.id);
  });

  it('of an answer: it is recorded once, the answerer is told it was accepted, and the run goes on at once', async () => {
    const runId = (await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'asks' })).body.run.id as string;
    const interactionId = await openInteraction(runId);

    const cut = proxy.dropReplyTo('answer-whose-reply-is-lost');
    const answered = await stack.http('POST', `/v1/interactions/${interactionId}/answer`, { text: 'answer-whose-reply-is-lost' });
    await cut;
    expect(answered).toMatchObject({ status: 200, body: { interaction: { id: interactionId, status: 'answered' } } });
    // Within a lease of the answer, not once the sweeper finds the run queued without a job.
    await stack.waitForStatus(runId, 'finished', stack.config.leaseMs);
    const entries = (await stack.http('GET', `/v1/runs/${runId}/log`)).body.entries as Array<{ type: string }>;
    expect(entries.filter((entry) => entry.type === 'answer')).toHaveLength(1);
    expect((await stack.http('GET', `/v1/runs/${runId}`)).body.run.summary).toBe('got: answer-whose-reply-is-lost');
  });

  it('of a message sent with an idempotency key: it is kept once, and the post answers 202', async () => {
    const runId = (await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'asks' })).body.run.id as string;
    await openInteraction(runId);

    const cut = proxy.dropReplyTo('message-whose-reply-is-lost');
    const posted = await stack.request('POST', `/v1/runs/${runId}/messages`, { text: 'message-whose-reply-is-lost' }, stack.token(), { 'Idempotency-Key': 'lost-1' });
    await cut;
    expect(posted.status).toBe(202);
    // Its one send kept it: no replay to speak of.
    expect(posted.headers.get('idempotent-replayed')).toBeNull();
    const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as Array<{ type: string; data: { messageId?: string } }>;
    expect(events.filter((event) => event.type === 'message.received').map((event) => event.data.messageId)).toEqual([posted.body.messageId]);
  });

  it("of a deadline sweep: the runs it woke get their jobs at once, not from the sweeper", async () => {
    // The sweep's script call is told apart from every other command by its script: its source (the
    // first call on a connection is an EVAL) or its SHA-1 (an EVALSHA after that).
    const cut = proxy.dropReplyTo([shaOf('expireDue'), "-- expire-due: a tenant's deadline timer"]);
    const runId = (await stack.http('POST', '/v1/runs', { agent: 'hurried', task: 'nobody answers' })).body.run.id as string;
    await openInteraction(runId);
    await cut;
    // The question expired in the step whose reply was lost; the run goes on to its end.
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toContain('got:');
    const answers = (await stack.http('GET', `/v1/runs/${runId}/log`)).body.entries.filter((entry: { type: string }) => entry.type === 'answer');
    expect(answers).toEqual([expect.objectContaining({ outcome: 'expired' })]);
  });

  it("of a webhook delivery record: the event is routed again at once (the tenant's next event, or a second later), not when its entry is taken over as idle, and sent once", async () => {
    const received: Array<{ type: string; runId: string }> = [];
    const receiver: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; runId: string });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const admin = stack.token({ tenant: 'acme', sub: 'root', role: 'admin' });
      expect((await stack.http('POST', '/v1/webhooks', { url, events: ['interaction.opened'] }, admin)).status).toBe(201);

      const cut = proxy.dropReplyTo([shaOf('webhookCreateDelivery'), '-- webhook-delivery-create: records']);
      const runId = (await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'asks with a webhook' })).body.run.id as string;
      await openInteraction(runId);
      await cut;
      await waitFor(() => received.some((event) => event.runId === runId), { timeoutMs: 15_000, message: 'the webhook of the question' });
      // Every entry routed and acknowledged: nothing is left to route it a second time.
      const stream = new RedisKeys(stack.config.prefix).tenantEvents('acme');
      await waitFor(async () => ((await stack.redis.xpending(stream, WEBHOOK_GROUP)) as [number])[0] === 0, { message: 'every entry acknowledged' });
      expect(received.filter((event) => event.runId === runId).map((event) => event.type)).toEqual(['interaction.opened']);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
