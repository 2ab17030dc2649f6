import { askerAgent } from '../support/agents';
import { TestStack, writeAgents, type TestClient } from '../support/stack';
import { waitFor } from '../support/wait-for';

/**
 * Tenant B, with every role, aims at tenant A's ids through every route and socket.io event: it
 * gets exactly what a missing id gets (404), empty listings, and none of A's events.
 */
describe('tenants never see each other', () => {
  let stack: TestStack;
  let runId: string;
  let interactionId: string;
  let approvalRunId: string;
  let webhookId: string;
  let deliveryId: string;
  let approvalId: string;
  const aMember = () => stack.token({ tenant: 'acme', sub: 'alice', role: 'member' });
  const bTokens = () => [
    stack.token({ tenant: 'globex', sub: 'alice', role: 'member' }),
    stack.token({ tenant: 'globex', sub: 'mallory', role: 'admin' }),
    stack.token({ tenant: 'globex', sub: 'backend', role: 'service' }),
  ];

  beforeAll(async () => {
    stack = await TestStack.start({
      agentsDir: writeAgents([
        askerAgent('asker'),
        {
          name: 'writer',
          model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }] }] },
          tools: ['write_file', 'finish'],
          limits: { max_iterations: 3, interaction_timeout_secs: 0 },
        },
      ]),
    });
    const aRoot = stack.token({ tenant: 'acme', sub: 'root', role: 'admin' });
    webhookId = (await stack.http('POST', '/v1/webhooks', { url: 'https://hooks.invalid/a', events: ['interaction.opened'] }, aRoot)).body.webhook.id;
    runId = await stack.startRun('asker', 'secret task', aMember());
    interactionId = (await stack.waitForQuestion(runId, 20_000, aMember())).id;
    approvalRunId = await stack.startRun('writer', 'secret write', aMember());
    approvalId = (await stack.waitForQuestion(approvalRunId, 20_000, aMember())).id;
    deliveryId = await waitFor(async () => (await stack.http('GET', `/v1/webhooks/${webhookId}/deliveries`, undefined, aRoot)).body.deliveries[0]?.id, { message: "A's first webhook delivery" });
    const aAdmin = stack.token({ tenant: 'acme', sub: 'ada', role: 'admin' });
    expect((await stack.http('PUT', '/v1/agents/secretagent', { definition: { ...askerAgent('secretagent'), permissions: {} } }, aAdmin)).status).toBe(201);
  });

  afterAll(() => stack.close());

  const MISSING_RUN = '00000000-0000-4000-8000-000000000000';
  const MISSING_IX = '00000000-0000-4000-8000-000000000001';

  /** Every route that takes an id, as [method, path with :run / :ix, body]. */
  const ROUTES: Array<[string, string, unknown]> = [
    ['GET', '/v1/runs/:run', undefined],
    ['GET', '/v1/runs/:run/events', undefined],
    ['GET', '/v1/runs/:run/log', undefined],
    ['GET', '/v1/runs/:run/audit', undefined],
    ['POST', '/v1/runs/:run/stop', undefined],
    ['POST', '/v1/runs/:run/cancel', undefined],
    ['POST', '/v1/runs/:run/messages', { text: 'hello' }],
    ['GET', '/v1/interactions/:ix', undefined],
    ['POST', '/v1/interactions/:ix/answer', { text: 'mine now' }],
    ['POST', '/v1/approvals/:approval/claim', undefined],
    ['DELETE', '/v1/approvals/:approval/claim', undefined],
    ['POST', '/v1/interactions/:approval/answer', { decision: 'allow_run' }],
    // A's uploaded agent: B gets 404 as for any agent it does not have.
    ['GET', '/v1/agents/secretagent', undefined],
    ['DELETE', '/v1/agents/secretagent', undefined],
    ['GET', '/v1/approvals/safe-commands?agent=secretagent', undefined],
  ];

  const fill = (path: string, ids: { run: string; ix: string; approval: string }) =>
    path.replace(':run', ids.run).replace(':ix', ids.ix).replace(':approval', ids.approval);

  it.each(ROUTES)("%s %s with another tenant's id answers exactly like a missing id", async (method, path, body) => {
    for (const token of bTokens()) {
      const foreign = await stack.http(method, fill(path, { run: runId, ix: interactionId, approval: approvalId }), body, token);
      const missing = await stack.http(method, fill(path, { run: MISSING_RUN, ix: MISSING_IX, approval: MISSING_IX }), body, token);
      expect([foreign.status, missing.status]).toEqual([missing.status, missing.status]);
      expect([403, 404]).toContain(foreign.status);
      const redact = (text: string) => text.replaceAll(runId, 'ID').replaceAll(interactionId, 'ID').replaceAll(approvalId, 'ID').replaceAll(MISSING_RUN, 'ID').replaceAll(MISSING_IX, 'ID');
      expect(redact(JSON.stringify(foreign.body))).toBe(redact(JSON.stringify(missing.body)));
    }
  });

  it('listings show nothing of the other tenant', async () => {
    for (const token of bTokens()) {
      for (const path of ['/v1/agents', '/v1/runs?limit=500', `/v1/interactions?runId=${runId}&status=all`, '/v1/interactions', `/v1/approvals?runId=${approvalRunId}`, '/v1/approvals', '/v1/webhooks']) {
        const res = await stack.http('GET', path, undefined, token);
        if (res.status === 403) {
          continue;
        }
        expect(res.status).toBe(200);
        const text = JSON.stringify(res.body);
        expect(text).not.toContain(runId);
        expect(text).not.toContain(approvalRunId);
        expect(text).not.toContain(webhookId);
        expect(text).not.toContain(deliveryId);
        expect(text).not.toContain('secret');
      }
    }
  });

  it("socket.io events with another tenant's ids are refused like missing ones, and B's sockets never receive A's events", async () => {
    const watchers: TestClient[] = [];
    try {
      for (const token of bTokens()) {
        const client = await stack.connect(token);
        watchers.push(client);
        expect(await client.subscribe({ since: 0 })).toMatchObject({ ok: true });
        const ack = (event: string, payload: unknown) => client.socket.timeout(10_000).emitWithAck(event, payload);
        for (const [event, foreign, missing] of [
          ['subscribe', { runId, since: 0 }, { runId: MISSING_RUN, since: 0 }],
          ['answer', { interactionId, answer: { text: 'x' } }, { interactionId: MISSING_IX, answer: { text: 'x' } }],
          ['message', { runId, text: 'x' }, { runId: MISSING_RUN, text: 'x' }],
          ['stop', { runId }, { runId: MISSING_RUN }],
          ['claim', { interactionId: approvalId }, { interactionId: MISSING_IX }],
        ] as const) {
          const [a, b] = [await ack(event, foreign), await ack(event, missing)];
          expect(a.error?.code).toBeDefined();
          expect(a.error.code).toBe(b.error.code);
        }
        expect(await ack('approvals', { runId: approvalRunId })).toEqual({ ok: true, approvals: [], next: null });
        // The subscribe above replaced the tenant feed; subscribe to it again.
        expect(await client.subscribe({ since: 0 })).toMatchObject({ ok: true });
      }

      // A's runs move on: an answer, and a stop.
      expect((await stack.answer(interactionId, { text: 'from A' }, aMember())).status).toBe(200);
      await stack.waitForStatus(runId, 'finished', 20_000);
      expect((await stack.http('POST', `/v1/runs/${approvalRunId}/stop`, undefined, aMember())).status).toBe(200);

      // A watcher of A's own tenant sees those events; B's never do.
      const own = await stack.connect(stack.token({ tenant: 'acme', sub: 'root', role: 'admin' }));
      try {
        await own.subscribe({ since: 0 });
        await own.waitForEvent((e) => e.runId === approvalRunId && e.type === 'run.cancelled', "A's stop");
      } finally {
        own.close();
      }
      for (const watcher of watchers) {
        expect(watcher.events.filter((e) => e.tenant !== 'globex')).toEqual([]);
      }
    } finally {
      watchers.forEach((client) => client.close());
    }
  });

  it("webhook routes with another tenant's endpoint or delivery id answer exactly like missing ones", async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/webhooks/:webhook', undefined],
      ['PATCH', '/v1/webhooks/:webhook', { enabled: false }],
      ['POST', '/v1/webhooks/:webhook/rotate-secret', undefined],
      ['GET', '/v1/webhooks/:webhook/deliveries', undefined],
      ['DELETE', '/v1/webhooks/:webhook', undefined],
      ['GET', '/v1/webhooks/deliveries/:delivery', undefined],
      ['POST', '/v1/webhooks/deliveries/:delivery/replay', undefined],
    ] as const) {
      for (const token of bTokens()) {
        const foreign = await stack.http(method, path.replace(':webhook', webhookId).replace(':delivery', deliveryId), body, token);
        const missing = await stack.http(method, path.replace(':webhook', MISSING_IX).replace(':delivery', MISSING_IX), body, token);
        expect([403, 404]).toContain(foreign.status);
        expect(JSON.stringify(foreign).replaceAll(webhookId, 'ID').replaceAll(deliveryId, 'ID')).toBe(JSON.stringify(missing).replaceAll(MISSING_IX, 'ID'));
      }
    }
    const aRoot = stack.token({ tenant: 'acme', sub: 'root', role: 'admin' });
    expect((await stack.http('GET', `/v1/webhooks/${webhookId}`, undefined, aRoot)).body.webhook.enabled).toBe(true);
  });

  it("the other tenant's actions changed nothing of A's", async () => {
    const { interaction } = (await stack.http('GET', `/v1/interactions/${interactionId}`, undefined, aMember())).body;
    expect(interaction.answer).toEqual({ kind: 'free_text', text: 'from A' });
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'user_message')).toEqual([]);
    const approval = (await stack.http('GET', `/v1/interactions/${approvalId}`, undefined, aMember())).body.interaction;
    expect(approval).toMatchObject({ status: 'cancelled' });
    expect(approval.claim).toBeUndefined();
  });
});
