import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, type Worker } from 'bullmq';
import { WEBHOOK_QUEUE, webhookJobId } from '@parley/contracts';
import { metricsRegistry } from '@parley/platform';
import { RedisKeys, WEBHOOK_GROUP, WebhookStore, deliveryIdFor } from '@parley/store';
import { askerAgent, quickAgent } from '../support/agents';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { startInteractionService } from '../../apps/interaction-service/src/interaction-service.app';
import { WebhookDeliveryProcessor } from '../../apps/interaction-service/src/webhooks/webhook-delivery.processor';
import { WebhookSender } from '../../apps/interaction-service/src/webhooks/webhook.sender';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A tenant's receiver: a local HTTP server that records every request and answers from a script. */
class Receiver {
  readonly requests: Received[] = [];
  /** Statuses to answer, first to last; once used up, `fallback`. */
  script: number[] = [];
  fallback = 200;
  url = '';
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ headers: req.headers, raw, body: JSON.parse(raw) });
        const status = this.script.shift() ?? this.fallback;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 400 ? `nope ${status}` : 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/parley`;
    return this;
  }

  of(type: string, runId?: string): Received[] {
    return this.requests.filter((r) => r.body.type === type && (runId === undefined || r.body.runId === runId));
  }

  async waitFor(type: string, runId: string, count = 1): Promise<Received[]> {
    await waitFor(() => (this.of(type, runId).length >= count ? this.of(type, runId) : undefined), { timeoutMs: 20_000, message: `${type} of ${runId} at the receiver` });
    return this.of(type, runId);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** What a tenant does with a request: recompute the signature over the raw body, in constant time, and check the timestamp. */
function verifiedBy(secret: string, request: Received): boolean {
  const timestamp = String(request.headers['parley-timestamp']);
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) {
    return false;
  }
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.${request.raw}`).digest('hex'));
  return String(request.headers['parley-signature'])
    .split(' ')
    .some((part) => {
      const given = Buffer.from(part.replace(/^v1=/, ''));
      return part.startsWith('v1=') && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

describe('per-tenant webhooks', () => {
  let stack: TestStack;
  let fake: FakeAnthropic;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await new Receiver().start();
    receivers.push(r);
    return r;
  };
  const admin = (tenant = 'acme') => stack.token({ tenant, sub: 'root', role: 'admin' });
  const member = (tenant = 'acme') => stack.token({ tenant, sub: 'alice', role: 'member' });
  const create = async (body: Record<string, unknown>, tenant = 'acme') => {
    const res = await stack.http('POST', '/v1/webhooks', body, admin(tenant));
    expect(res.status).toBe(201);
    return res.body as { webhook: { id: string }; secret: string };
  };
  const deliveries = async (webhookId: string, tenant = 'acme') => (await stack.http('GET', `/v1/webhooks/${webhookId}/deliveries?limit=100`, undefined, admin(tenant))).body.deliveries as any[];
  const deliveryOf = (webhookId: string, eventId: string, tenant = 'acme') =>
    waitFor(
      async () => {
        const found = (await deliveries(webhookId, tenant)).find((d) => d.eventId === eventId && !d.replayOf);
        return found && found.status !== 'pending' ? found : undefined;
      },
      { timeoutMs: 20_000, message: `delivery of ${eventId} to settle` },
    );

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: 'test-key' });
    fake.setResponder(() => ({ status: 400, error: { type: 'invalid_request_error', message: 'no' } }));
    stack = await TestStack.start({
      agentsDir: writeAgents([
        askerAgent('asker'),
        quickAgent('quick'),
        { name: 'broken', model: { provider: 'anthropic', name: 'claude-test', max_tokens: 64 }, system_prompt: 'x', tools: ['finish'], limits: { max_iterations: 2 } },
      ]),
      overrides: {
        webhookAllowPrivate: true,
        // The file starts more runs for one member than a minute's default allows.
        limitUserRunsPerMinute: 0,
        webhookAttempts: 4,
        webhookBackoffMs: 50,
        webhookTimeoutMs: 1_000,
        webhookConcurrency: 4,
        webhookEndpointConcurrency: 2,
        webhookTenantConcurrency: 3,
        webhookPauseMs: 60_000,
        webhookClaimIdleMs: 400,
        webhookRouteTries: 10,
        anthropicApiKey: 'test-key',
        anthropicBaseUrl: fake.url,
        modelMaxRetries: 0,
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await Promise.all(receivers.map((r) => r.close()));
    await fake.close();
  });

  it('the interaction-service follows the event channel only while some tenant has an endpoint', async () => {
    const channel = new RedisKeys(stack.config.prefix).eventsChannel();
    const followers = async () => ((await stack.redis.pubsub('NUMSUB', channel)) as [string, number])[1];
    // With no endpoint anywhere, events wake no dispatcher (the gateway's event feed follows the channel regardless).
    const without = await followers();
    const first = await stack.startRun('quick', 'before any endpoint', member());
    await waitFor(async () => (await stack.run(first, member())).run?.status === 'finished', { message: 'the first run to finish' });
    expect(await followers()).toBe(without);

    const hooks = await receiver();
    const { webhook } = await create({ url: hooks.url, events: ['run.finished'] });
    await waitFor(async () => (await followers()) === without + 1, { message: 'the dispatcher to follow the channel' });
    const runId = await stack.startRun('quick', 'with an endpoint', member());
    await hooks.waitFor('run.finished', runId);

    // Once the last endpoint is gone and housekeeping drops its tenant, the dispatcher stops following.
    expect((await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin())).status).toBe(200);
    await waitFor(async () => (await followers()) === without, { message: 'the dispatcher to stop following the channel' });
  });

  it('an admin creates an endpoint and sees its secret once; members and services are refused on every route', async () => {
    const hook = await receiver();
    const created = await create({ url: hook.url, events: ['run.finished', 'run.finished'], description: '  pager  ' });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.webhook).toMatchObject({ url: hook.url, events: ['run.finished'], description: 'pager', enabled: true });
    const id = created.webhook.id;
    const read = await stack.http('GET', `/v1/webhooks/${id}`, undefined, admin());
    expect(read.body.webhook).toEqual(created.webhook);
    expect(JSON.stringify(read.body)).not.toContain(created.secret);
    expect(JSON.stringify((await stack.http('GET', '/v1/webhooks', undefined, admin())).body)).not.toContain(created.secret);

    for (const token of [member(), stack.token({ tenant: 'acme', sub: 'backend', role: 'service' })]) {
      for (const [method, path, body] of [
        ['POST', '/v1/webhooks', { url: hook.url, events: ['run.failed'] }],
        ['GET', '/v1/webhooks', undefined],
        ['GET', `/v1/webhooks/${id}`, undefined],
        ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/v1/webhooks/${id}`, undefined],
        ['POST', `/v1/webhooks/${id}/rotate-secret`, undefined],
        ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
        ['GET', '/v1/webhooks/deliveries/d0', undefined],
        ['POST', '/v1/webhooks/deliveries/d0/replay', undefined],
      ] as const) {
        const res = await stack.http(method, path, body, token);
        expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 403, 'forbidden']);
      }
    }
    expect((await stack.http('GET', `/v1/webhooks/${id}`, undefined, admin())).body.webhook.enabled).toBe(true);
    expect((await stack.http('DELETE', `/v1/webhooks/${id}`, undefined, admin())).status).toBe(200);
    expect((await stack.http('GET', `/v1/webhooks/${id}`, undefined, admin())).status).toBe(404);
  });

  it('bad input names the field and creates nothing', async () => {
    const before = (await stack.http('GET', '/v1/webhooks', undefined, admin())).body.webhooks.length;
    const cases: Array<[unknown, string, RegExp]> = [
      [{ url: 'ftp://example.com/x', events: ['run.finished'] }, 'url', /http or https/],
      [{ url: 'https://user:pw@example.com/x', events: ['run.finished'] }, 'url', /credentials/],
      [{ url: 'not-a-url', events: ['run.finished'] }, 'url', /absolute URL/],
      [{ url: 'https://exa\nmple.com/x', events: ['run.finished'] }, 'url', /control characters/],
      [{ url: `https://example.com/${'a'.repeat(2100)}`, events: ['run.finished'] }, 'url', /2048/],
      [{ url: 'https://example.com/x', events: [] }, 'events', /at least one/],
      [{ url: 'https://example.com/x', events: ['run.exploded'] }, 'events.0', /./],
      [{ url: 'https://example.com/x', events: ['run.finished'], secret: 'mine' }, 'secret', /./],
      [{ events: ['run.finished'] }, 'url', /./],
    ];
    for (const [body, field, reason] of cases) {
      const res = await stack.http('POST', '/v1/webhooks', body, admin());
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      const issue = res.body.error.details.issues.find((i: any) => i.field === field);
      expect(issue?.reason).toMatch(reason);
    }
    const { webhook } = await create({ url: 'https://hooks.invalid/p', events: ['run.failed'] });
    const patch = await stack.http('PATCH', `/v1/webhooks/${webhook.id}`, {}, admin());
    expect(patch.status).toBe(400);
    expect((await stack.http('PATCH', `/v1/webhooks/${webhook.id}`, { enabled: 'no' }, admin())).body.error.details.issues[0].field).toBe('enabled');
    expect((await stack.http('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=0`, undefined, admin())).body.error.details.issues[0].field).toBe('limit');
    expect((await stack.http('GET', '/v1/webhooks/bad$id', undefined, admin())).status).toBe(400);
    expect((await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin())).status).toBe(200);
    expect((await stack.http('GET', '/v1/webhooks', undefined, admin())).body.webhooks).toHaveLength(before);
  });

  it('a question, its answer and the run end reach the subscribed endpoints, signed; unsubscribed events and other tenants get nothing', async () => {
    const all = await receiver();
    const endsOnly = await receiver();
    const other = await receiver();
    const a = await create({ url: all.url, events: ['interaction.opened', 'interaction.resolved', 'run.finished', 'run.failed'] });
    const b = await create({ url: endsOnly.url, events: ['run.finished'] });
    const g = await create({ url: other.url, events: ['interaction.opened', 'interaction.resolved', 'run.finished', 'run.failed'] }, 'globex');

    const runId = await stack.startRun('asker', 'ask me', member());
    const [opened] = await all.waitFor('interaction.opened', runId);
    expect(verifiedBy(a.secret, opened)).toBe(true);
    expect(verifiedBy(b.secret, opened)).toBe(false);
    expect(opened.headers['content-type']).toBe('application/json');
    expect(opened.body).toMatchObject({ type: 'interaction.opened', tenant: 'acme', runId, owner: 'alice', data: { interaction: { runId, status: 'open' } } });
    expect(opened.headers['parley-event-id']).toBe(opened.body.id);
    expect(opened.body.id).toBe(`evt.acme.${opened.body.seq}`);
    const interactionId = opened.body.data.interaction.id;

    expect((await stack.answer(interactionId, { text: 'go' }, member())).status).toBe(200);
    const [resolved] = await all.waitFor('interaction.resolved', runId);
    expect(verifiedBy(a.secret, resolved)).toBe(true);
    expect(resolved.body.data).toMatchObject({ interactionId, outcome: 'answered' });
    const [finished] = await all.waitFor('run.finished', runId);
    expect(verifiedBy(a.secret, finished)).toBe(true);
    expect(finished.body.data).toMatchObject({ reason: 'finish', summary: 'got: go' });
    const [onlyEnd] = await endsOnly.waitFor('run.finished', runId);
    expect(verifiedBy(b.secret, onlyEnd)).toBe(true);
    expect(endsOnly.requests.filter((r) => r.body.runId === runId).map((r) => r.body.type)).toEqual(['run.finished']);
    // Deliveries are sent independently, so their arrival order is not fixed; seq gives the order.
    expect(all.requests.filter((r) => r.body.runId === runId).sort((x, y) => x.body.seq - y.body.seq).map((r) => r.body.type)).toEqual(['interaction.opened', 'interaction.resolved', 'run.finished']);

    // Another tenant's run and a tenant without webhooks: each event goes to its own tenant's endpoints only.
    const globexRun = await stack.startRun('quick', 'globex work', member('globex'));
    const [own] = await other.waitFor('run.finished', globexRun);
    expect(own.body.tenant).toBe('globex');
    expect(verifiedBy(g.secret, own)).toBe(true);
    const initechRun = await stack.startRun('quick', 'initech work', member('initech'));
    await waitFor(async () => (await stack.run(initechRun, member('initech'))).run?.status === 'finished', { message: 'the initech run to finish' });
    const acmeAfter = await stack.startRun('quick', 'after', member());
    await all.waitFor('run.finished', acmeAfter);
    await other.waitFor('run.finished', globexRun);
    expect(other.requests.every((r) => r.body.tenant === 'globex')).toBe(true);
    expect([...all.requests, ...endsOnly.requests].every((r) => r.body.tenant === 'acme')).toBe(true);
    expect(receivers.flatMap((r) => r.requests).filter((r) => r.body.runId === initechRun)).toEqual([]);

    const log = await deliveries(a.webhook.id);
    const ofRun = log.filter((d) => d.runId === runId);
    expect(ofRun.map((d) => d.seq)).toEqual([...ofRun.map((d) => d.seq)].sort((x, y) => y - x));
    expect(ofRun.map((d) => [d.eventType, d.status, d.attempts])).toEqual([
      ['run.finished', 'delivered', 1],
      ['interaction.resolved', 'delivered', 1],
      ['interaction.opened', 'delivered', 1],
    ]);
    expect(log.find((d) => d.eventType === 'interaction.opened' && d.runId === runId).id).toBe(opened.headers['parley-webhook-id']);
    for (const id of [a.webhook.id, b.webhook.id]) {
      await stack.http('DELETE', `/v1/webhooks/${id}`, undefined, admin());
    }
    await stack.http('DELETE', `/v1/webhooks/${g.webhook.id}`, undefined, admin('globex'));
  });

  it('a failing run reaches run.failed endpoints', async () => {
    const hook = await receiver();
    const { secret, webhook } = await create({ url: hook.url, events: ['run.failed'] });
    const runId = await stack.startRun('broken', 'fail please', member());
    const [failed] = await hook.waitFor('run.failed', runId);
    expect(verifiedBy(secret, failed)).toBe(true);
    expect(failed.body.data).toMatchObject({ reason: 'model_error' });
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it('a stopped run reaches run.cancelled endpoints, naming who stopped it', async () => {
    const hook = await receiver();
    const { secret, webhook } = await create({ url: hook.url, events: ['run.cancelled'] });
    const runId = await stack.startRun('asker', 'stop me', member());
    await stack.waitForQuestion(runId, undefined, member());
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`, undefined, member())).status).toBe(200);
    const [cancelled] = await hook.waitFor('run.cancelled', runId);
    expect(verifiedBy(secret, cancelled)).toBe(true);
    expect(cancelled.body.data).toMatchObject({ reason: 'cancelled', by: { kind: 'user' } });
    expect(hook.requests.filter((r) => r.body.runId === runId).map((r) => r.body.type)).toEqual(['run.cancelled']);
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it('retries 5xx with backoff until delivered, logging every attempt; a 410 fails at once; a replay re-sends the same event', async () => {
    const flaky = await receiver();
    flaky.script = [500, 503];
    const gone = await receiver();
    gone.fallback = 410;
    const f = await create({ url: flaky.url, events: ['run.finished'] });
    const g = await create({ url: gone.url, events: ['run.finished'] });
    const runId = await stack.startRun('quick', 'x', member());
    const tries = await flaky.waitFor('run.finished', runId, 3);
    expect(new Set(tries.map((t) => t.headers['parley-webhook-id'])).size).toBe(1);
    expect(tries.every((t) => verifiedBy(f.secret, t))).toBe(true);
    const eventId = tries[0].body.id;
    const delivered = await deliveryOf(f.webhook.id, eventId);
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200, eventType: 'run.finished', runId });
    expect(delivered.attemptLog.map((a: any) => a.status)).toEqual([500, 503, 200]);
    expect(delivered.attemptLog[0].error).toContain('HTTP 500: nope 500');

    const refused = await deliveryOf(g.webhook.id, eventId);
    expect(refused).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 410 });
    const connection = stack.redis.duplicate();
    const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: `${stack.config.prefix}:bull` });
    try {
      const job = await queue.getJob(webhookJobId('acme', refused.id));
      expect(await job?.getState()).toBe('failed');
      expect(job?.attemptsMade).toBe(1);
    } finally {
      await queue.close();
      connection.disconnect();
    }
    expect(gone.of('run.finished', runId)).toHaveLength(1);

    const replay = await stack.http('POST', `/v1/webhooks/deliveries/${delivered.id}/replay`, undefined, admin());
    expect(replay.status).toBe(201);
    expect(replay.body.delivery).toMatchObject({ eventId, replayOf: delivered.id, webhookId: f.webhook.id });
    expect(replay.body.delivery.id).not.toBe(delivered.id);
    const again = await flaky.waitFor('run.finished', runId, 4);
    expect(again[3].headers['parley-webhook-id']).toBe(replay.body.delivery.id);
    expect(again[3].headers['parley-event-id']).toBe(eventId);
    expect(again[3].raw).toBe(tries[0].raw);
    expect(verifiedBy(f.secret, again[3])).toBe(true);
    await waitFor(async () => (await stack.http('GET', `/v1/webhooks/deliveries/${replay.body.delivery.id}`, undefined, admin())).body.delivery?.status === 'delivered', {
      message: 'the replay to be delivered',
    });

    // A rotated secret signs from now on; the old one still signs during the grace period.
    const rotated = await stack.http('POST', `/v1/webhooks/${f.webhook.id}/rotate-secret`, undefined, admin());
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(f.secret);
    await stack.http('POST', `/v1/webhooks/deliveries/${delivered.id}/replay`, undefined, admin());
    const [, , , , afterRotation] = await flaky.waitFor('run.finished', runId, 5);
    expect(verifiedBy(rotated.body.secret, afterRotation)).toBe(true);
    expect(verifiedBy(f.secret, afterRotation)).toBe(true);
    // Rotated again in the grace period (its reply lost, say): the first secret, which receivers may
    // still check with, signs on beside the two new ones.
    const rotatedAgain = await stack.http('POST', `/v1/webhooks/${f.webhook.id}/rotate-secret`, undefined, admin());
    await stack.http('POST', `/v1/webhooks/deliveries/${delivered.id}/replay`, undefined, admin());
    const afterSecond = (await flaky.waitFor('run.finished', runId, 6))[5];
    for (const secret of [rotatedAgain.body.secret, rotated.body.secret, f.secret]) {
      expect(verifiedBy(secret, afterSecond)).toBe(true);
    }

    // Disabled endpoints receive nothing and cannot be replayed to.
    expect((await stack.http('PATCH', `/v1/webhooks/${f.webhook.id}`, { enabled: false }, admin())).body.webhook.enabled).toBe(false);
    expect((await stack.http('POST', `/v1/webhooks/deliveries/${delivered.id}/replay`, undefined, admin())).status).toBe(409);
    for (const id of [f.webhook.id, g.webhook.id]) {
      await stack.http('DELETE', `/v1/webhooks/${id}`, undefined, admin());
    }
    expect((await stack.http('GET', `/v1/webhooks/deliveries/${delivered.id}`, undefined, admin())).status).toBe(404);
  });

  it('a delivery none of whose tries could be recorded ends failed once its job fails for good, not pending for ever', async () => {
    const down = await receiver();
    down.fallback = 500;
    const { webhook } = await create({ url: down.url, events: ['run.finished'] });
    const deliveries = stack.interactions!.get(WebhookStore, { strict: false }).deliveries;
    const record = deliveries.record.bind(deliveries);
    // Every try is made, and its record fails (as a Redis error right after the request would).
    const tries = jest.spyOn(deliveries, 'record').mockImplementation(async (tenant, id, outcome, now) => {
      if (outcome.attempt) {
        throw new Error('Redis went away');
      }
      return record(tenant, id, outcome, now);
    });
    try {
      const runId = await stack.startRun('quick', 'x', member());
      const [first] = await down.waitFor('run.finished', runId, 4);
      const settled = await deliveryOf(webhook.id, first.body.id);
      expect(settled).toMatchObject({ status: 'failed', lastError: 'gave up: Redis went away', attempts: 0 });
    } finally {
      tries.mockRestore();
      await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
    }
  });

  it('a delivery whose senders kept dying mid-try ends failed once BullMQ fails its job for stalling, not pending for ever', async () => {
    const slow = await receiver();
    const { webhook } = await create({ url: slow.url, events: ['run.finished'] });
    const dying = stack.interactions!.get(WebhookDeliveryProcessor);
    // Its try never ends: the process dies in the middle of it.
    const hung = jest.spyOn(stack.interactions!.get(WebhookSender), 'send').mockImplementation(() => new Promise(() => undefined));
    const connection = stack.redis.duplicate();
    const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix: `${stack.config.prefix}:bull` });
    let other: Awaited<ReturnType<typeof startInteractionService>> | undefined;
    try {
      await stack.startRun('quick', 'x', member());
      const job = await waitFor(async () => (await queue.getActive())[0], { message: 'the delivery job to be taken' });
      // Five senders died in its tries before: this one's death is one too many.
      await stack.redis.hset(`${stack.config.prefix}:bull:${WEBHOOK_QUEUE}:${job.id}`, 'stc', 5);
      await (dying as unknown as { queueWorker: { worker: Worker } }).queueWorker.worker.close(true);
      other = await startInteractionService(stack.config);
      const [pending] = await deliveries(webhook.id);
      const settled = await deliveryOf(webhook.id, pending.eventId);
      expect(settled).toMatchObject({ status: 'failed', lastError: 'gave up: job stalled more than allowable limit' });
    } finally {
      hung.mockRestore();
      await other?.close();
      await queue.close();
      connection.disconnect();
      await stack.stopInteractions();
      await stack.startInteractions();
      await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
    }
  });

  it('a receiver that never answers holds at most its share of the senders, and the other endpoints are served meanwhile', async () => {
    let open = 0;
    let mostOpen = 0;
    const hanging = createServer(() => {
      open++;
      mostOpen = Math.max(mostOpen, open);
    });
    hanging.on('connection', (socket) => socket.on('close', () => open--));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const healthy = await receiver();
    const h = await create({ url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`, events: ['run.finished'] });
    const k = await create({ url: healthy.url, events: ['run.finished'] });
    try {
      const runs = await Promise.all(Array.from({ length: 8 }, () => stack.startRun('quick', 'x', member())));
      for (const runId of runs) {
        await healthy.waitFor('run.finished', runId);
      }
      await waitFor(() => mostOpen >= 2, { message: 'the hanging receiver to hold its two' });
      // 4 senders, 2 slots per endpoint: the hanging receiver never held more than its 2.
      expect(mostOpen).toBe(2);
    } finally {
      for (const id of [h.webhook.id, k.webhook.id]) {
        await stack.http('DELETE', `/v1/webhooks/${id}`, undefined, admin());
      }
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it("one tenant's receivers that never answer hold at most its share of the senders, and other tenants' deliveries go on", async () => {
    let open = 0;
    let mostOpen = 0;
    const hanging = createServer(() => {
      open++;
      mostOpen = Math.max(mostOpen, open);
    });
    hanging.on('connection', (socket) => socket.on('close', () => open--));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const healthy = await receiver();
    // Three endpoints of 2 slots each could hold 6 deliveries at once: more than the 4 senders.
    const hogs = await Promise.all([1, 2, 3].map((n) => create({ url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks/${n}`, events: ['run.finished'] }, 'hog')));
    const k = await create({ url: healthy.url, events: ['run.finished'] }, 'globex');
    try {
      const memberOf = (tenant: string) => stack.token({ tenant, sub: 'alice', role: 'member' });
      await Promise.all(Array.from({ length: 4 }, () => stack.startRun('quick', 'x', memberOf('hog'))));
      await waitFor(() => mostOpen >= 3, { message: "the hog's receivers to hold its three" });
      const runs = await Promise.all(Array.from({ length: 3 }, () => stack.startRun('quick', 'x', memberOf('globex'))));
      for (const runId of runs) {
        await healthy.waitFor('run.finished', runId);
      }
      expect(mostOpen).toBe(3);
    } finally {
      for (const { webhook } of hogs) {
        await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin('hog'));
      }
      await stack.http('DELETE', `/v1/webhooks/${k.webhook.id}`, undefined, admin('globex'));
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it('a receiver that keeps failing is paused after 5 failures in a row: its deliveries wait, without using up their tries, while others go on', async () => {
    const failing = await receiver();
    failing.fallback = 500;
    const healthy = await receiver();
    const f = await create({ url: failing.url, events: ['run.finished'] });
    const k = await create({ url: healthy.url, events: ['run.finished'] });
    try {
      const runs = await Promise.all(Array.from({ length: 10 }, () => stack.startRun('quick', 'x', member())));
      for (const runId of runs) {
        await healthy.waitFor('run.finished', runId);
      }
      await waitFor(() => failing.requests.length >= 5, { message: 'five failures' });
      await waitFor(
        async () => {
          const list = await deliveries(f.webhook.id);
          return list.length === 10 && list.every((d) => d.status === 'pending');
        },
        { message: 'ten deliveries pending' },
      );
      const waiting = await deliveries(f.webhook.id);
      // Without the pause, 10 deliveries of 4 tries each would have made 40 requests by now; paused, 5
      // (and at most one more already in flight on the endpoint's other slot).
      expect(failing.requests.length).toBeLessThanOrEqual(6);
      expect(waiting.reduce((sum, d) => sum + d.attempts, 0)).toBe(failing.requests.length);
    } finally {
      for (const id of [f.webhook.id, k.webhook.id]) {
        await stack.http('DELETE', `/v1/webhooks/${id}`, undefined, admin());
      }
    }
  });

  it('loses nothing across a restart of the interaction-service, nor when a dispatcher dies holding events', async () => {
    const hook = await receiver();
    hook.script = [503];
    const { webhook } = await create({ url: hook.url, events: ['run.finished'] });
    const first = await stack.startRun('quick', 'one', member());
    await hook.waitFor('run.finished', first);
    // The delivery is pending (its retry scheduled) when the service stops.
    await stack.stopInteractions();
    // A dispatcher that read this run's events and died before acknowledging them: taken over once idle.
    const second = await stack.startRun('quick', 'two', member());
    await stack.waitForStatus(second, 'finished');
    const held = (await stack.redis.xreadgroup('GROUP', 'webhooks', 'dead-consumer', 'COUNT', 1000, 'STREAMS', `${stack.config.prefix}:{t:acme}:events`, '>')) as any[];
    expect(JSON.stringify(held)).toContain(second);
    // Events that happen while no interaction-service runs wait in the stream.
    const third = await stack.startRun('quick', 'three', member());
    await stack.waitForStatus(third, 'finished');
    await stack.startInteractions();
    for (const runId of [first, second, third]) {
      await hook.waitFor('run.finished', runId, runId === first ? 2 : 1);
    }
    const settled = await waitFor(async () => {
      const log = (await deliveries(webhook.id)).filter((d) => [first, second, third].includes(d.runId));
      return log.length === 3 && log.every((d) => d.status === 'delivered') ? log : undefined;
    }) as any[];
    expect(Object.fromEntries(settled.map((d) => [d.runId, d.attempts]))).toEqual({ [first]: 2, [second]: 1, [third]: 1 });
    expect(hook.requests.filter((r) => [second, third].includes(r.body.runId))).toHaveLength(2);
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it('an event that can never be routed holds back neither the events after it nor a takeover of idle ones', async () => {
    const hook = await receiver();
    const { webhook } = await create({ url: hook.url, events: ['run.finished'] });
    // Written while no interaction-service runs: read later in one batch, the poisoned one first.
    await stack.stopInteractions();
    const poisoned = await stack.startRun('quick', 'poisoned', member());
    await stack.waitForStatus(poisoned, 'finished');
    const after = [await stack.startRun('quick', 'after 1', member()), await stack.startRun('quick', 'after 2', member())];
    for (const runId of after) {
      await stack.waitForStatus(runId, 'finished');
    }
    // Its delivery record's key holds a string: recording the delivery fails, every time.
    const finished = ((await stack.http('GET', `/v1/runs/${poisoned}/events?since=0`)).body.events as Array<{ type: string; seq: number }>).find((e) => e.type === 'run.finished')!;
    const record = new RedisKeys(stack.config.prefix).webhookDelivery('acme', deliveryIdFor('acme', webhook.id, finished.seq));
    await stack.redis.set(record, 'not a delivery');
    try {
      await stack.startInteractions();
      for (const runId of after) {
        await hook.waitFor('run.finished', runId);
      }
      expect(hook.of('run.finished', poisoned)).toEqual([]);
    } finally {
      await stack.redis.del(record);
    }
    // Once it can be recorded, it is routed too (by a retry or the takeover of idle entries).
    await hook.waitFor('run.finished', poisoned);
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it('an event that fails on every try is given up after PARLEY_WEBHOOK_ROUTE_TRIES tries: acknowledged and counted, and the events after it go on', async () => {
    const abandoned = async () => (await metricsRegistry.getSingleMetric('parley_webhook_events_abandoned_total')!.get()).values[0]?.value ?? 0;
    const hook = await receiver();
    const { webhook } = await create({ url: hook.url, events: ['run.finished'] });
    await stack.stopInteractions();
    const poisoned = await stack.startRun('quick', 'poisoned for good', member());
    await stack.waitForStatus(poisoned, 'finished');
    const finished = ((await stack.http('GET', `/v1/runs/${poisoned}/events?since=0`)).body.events as Array<{ type: string; seq: number }>).find((e) => e.type === 'run.finished')!;
    const record = new RedisKeys(stack.config.prefix).webhookDelivery('acme', deliveryIdFor('acme', webhook.id, finished.seq));
    await stack.redis.set(record, 'not a delivery');
    const stream = new RedisKeys(stack.config.prefix).tenantEvents('acme');
    const entryId = `0-${finished.seq}`;
    const readsOf = async () => ((await stack.redis.xpending(stream, WEBHOOK_GROUP, entryId, entryId, 1)) as Array<[string, string, number, number]>)[0]?.[3];
    const before = await abandoned();
    try {
      await stack.startInteractions();
      // Read and failed, then retried by the takeover of idle entries until it has had its tries.
      await waitFor(async () => ((await readsOf()) ?? 0) >= 2, { message: 'the poisoned event to be read again' });
      await waitFor(async () => (await abandoned()) === before + 1, { timeoutMs: 30_000, message: 'the poisoned event to be given up' });
      expect(await readsOf()).toBeUndefined();
    } finally {
      await stack.redis.del(record);
    }
    // Given up means no dispatcher reads it again, though it could be recorded now; later events are delivered.
    const later = await stack.startRun('quick', 'later', member());
    await hook.waitFor('run.finished', later);
    await stack.waitForStatus(later, 'finished');
    expect(hook.of('run.finished', poisoned)).toEqual([]);
    expect(await abandoned()).toBe(before + 1);
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it("another tenant's endpoints and deliveries answer exactly like missing ones", async () => {
    const hook = await receiver();
    const { webhook } = await create({ url: hook.url, events: ['run.finished'] });
    const runId = await stack.startRun('quick', 'x', member());
    const [received] = await hook.waitFor('run.finished', runId);
    const deliveryId = String(received.headers['parley-webhook-id']);
    const missing = '00000000-0000-4000-8000-000000000009';
    const routes: Array<[string, string, unknown]> = [
      ['GET', '/v1/webhooks/:id', undefined],
      ['PATCH', '/v1/webhooks/:id', { enabled: false }],
      ['POST', '/v1/webhooks/:id/rotate-secret', undefined],
      ['GET', '/v1/webhooks/:id/deliveries', undefined],
      ['GET', '/v1/webhooks/deliveries/:delivery', undefined],
      ['POST', '/v1/webhooks/deliveries/:delivery/replay', undefined],
      ['DELETE', '/v1/webhooks/:id', undefined],
    ];
    for (const [method, path, body] of routes) {
      const foreign = await stack.http(method, path.replace(':id', webhook.id).replace(':delivery', deliveryId), body, admin('globex'));
      const absent = await stack.http(method, path.replace(':id', missing).replace(':delivery', missing), body, admin('globex'));
      expect(foreign.status).toBe(404);
      expect(JSON.stringify(foreign.body).replaceAll(webhook.id, 'ID').replaceAll(deliveryId, 'ID')).toBe(JSON.stringify(absent.body).replaceAll(missing, 'ID'));
    }
    expect((await stack.http('GET', '/v1/webhooks', undefined, admin('globex'))).body.webhooks).toEqual([]);
    expect((await stack.http('GET', `/v1/webhooks/${webhook.id}`, undefined, admin())).body.webhook.enabled).toBe(true);
    await stack.http('DELETE', `/v1/webhooks/${webhook.id}`, undefined, admin());
  });

  it('limits endpoints per tenant', async () => {
    const ids: string[] = [];
    for (let i = 0; i < stack.config.webhookMaxEndpoints; i++) {
      ids.push((await create({ url: `https://hooks.invalid/${i}`, events: ['run.failed'] }, 'umbrella')).webhook.id);
    }
    const over = await stack.http('POST', '/v1/webhooks', { url: 'https://hooks.invalid/x', events: ['run.failed'] }, admin('umbrella'));
    expect(over.status).toBe(409);
    expect(over.body.error.details).toEqual({ limit: 'webhook_endpoints', max: stack.config.webhookMaxEndpoints });
    await stack.http('DELETE', `/v1/webhooks/${ids[0]}`, undefined, admin('umbrella'));
    expect((await stack.http('POST', '/v1/webhooks', { url: 'https://hooks.invalid/y', events: ['run.failed'] }, admin('umbrella'))).status).toBe(201);
  });
});
