import { askerAgent } from '../support/agents';
import { TestStack, writeAgents, type TestClient } from '../support/stack';
import { waitFor } from '../support/wait-for';

const writer = (name: string, timeoutSecs: number) => ({
  name,
  model: {
    provider: 'scripted',
    turns: [
      { tool_calls: [{ name: 'write_file', input: { path: `${name}.txt`, content: 'x' } }] },
      { tool_calls: [{ name: 'finish', input: { summary: 'done: {{last_answer}}' } }] },
    ],
  },
  tools: ['write_file', 'delete_file', 'finish', 'ask_user_text'],
  limits: { max_iterations: 5, interaction_timeout_secs: timeoutSecs },
});

describe('the admin approval queue', () => {
  let stack: TestStack;
  const admin1 = () => stack.token({ sub: 'ada', role: 'admin' });
  const admin2 = () => stack.token({ sub: 'bob', role: 'admin' });
  const alice = () => stack.token({ sub: 'alice', role: 'member' });
  const carol = () => stack.token({ sub: 'carol', role: 'member' });
  const list = async (token: string, query = '') => {
    const res = await stack.http('GET', `/v1/approvals${query}`, undefined, token);
    expect(res.status).toBe(200);
    return (res.body.approvals as any[]).map((a) => a.id as string);
  };

  beforeAll(async () => {
    stack = await TestStack.start({
      agentsDir: writeAgents([writer('soon', 600), writer('later', 3600), writer('forever', 0), askerAgent('asker')]),
    });
  });

  afterAll(() => stack.close());

  it('lists open approvals oldest deadline first, filtered by agent, tool and run; members see only their own', async () => {
    const later = await stack.startRun('later', 't', alice());
    const forever = await stack.startRun('forever', 't', alice());
    const soon = await stack.startRun('soon', 't', carol());
    const [l, f, s] = await Promise.all([later, forever, soon].map((id) => stack.waitForQuestion(id, 20_000, admin1())));

    const all = await list(admin1());
    expect(all.filter((id) => [l.id, f.id, s.id].includes(id))).toEqual([s.id, l.id, f.id]);
    expect(await list(admin1(), '?agent=later')).toEqual([l.id]);
    expect(await list(admin1(), `?runId=${soon}`)).toEqual([s.id]);
    expect(await list(admin1(), '?tool=delete_file')).toEqual([]);
    expect((await list(admin1(), '?tool=write_file')).length).toBeGreaterThanOrEqual(3);
    const mine = await list(alice());
    expect(mine).toEqual(expect.arrayContaining([l.id, f.id]));
    expect(mine).not.toContain(s.id);
    expect((await stack.http('GET', '/v1/approvals?tool=', undefined, admin1())).status).toBe(400);

    for (const [interaction, token] of [
      [l, alice()],
      [f, alice()],
      [s, carol()],
    ] as const) {
      expect((await stack.answer(interaction.id, { decision: 'deny' }, token)).status).toBe(200);
    }
  });

  it("a member's open interactions are theirs up to the limit, however many of others' come first", async () => {
    const theirs = await stack.startRun('soon', 't', carol());
    const mine = await stack.startRun('later', 't', alice());
    const [t, m] = await Promise.all([theirs, mine].map((id) => stack.waitForQuestion(id, 20_000, admin1())));
    const open = async (token: string, limit: number) =>
      ((await stack.http('GET', `/v1/interactions?limit=${limit}`, undefined, token)).body.interactions as Array<{ id: string }>).map((i) => i.id);
    // Carol's question is due sooner: it heads the tenant's queue.
    expect(await open(admin1(), 1)).toEqual([t.id]);
    expect(await open(alice(), 1)).toEqual([m.id]);
    expect(await open(carol(), 1)).toEqual([t.id]);
    for (const [interaction, token] of [
      [t, carol()],
      [m, alice()],
    ] as const) {
      expect((await stack.answer(interaction.id, { decision: 'deny' }, token)).status).toBe(200);
    }
  });

  it('pages past its first page with `next` (HTTP and socket.io), each open approval once, in order; a cursor outlives the approval it names', async () => {
    const runs = [];
    for (let n = 0; n < 5; n++) {
      runs.push(await stack.startRun('forever', `t${n}`, alice()));
    }
    const ours = new Set((await Promise.all(runs.map((id) => stack.waitForQuestion(id, 20_000, admin1())))).map((i) => i.id));
    // Without a deadline they wait in the order they were opened (the same ms: by id), after every deadline.
    const queue = (await stack.http('GET', '/v1/approvals?limit=500', undefined, admin1())).body.approvals as Array<{ id: string; createdAt: string; deadline: string | null }>;
    const order = queue.filter((a) => ours.has(a.id)).map((a) => a.id);
    const opened = queue.filter((a) => ours.has(a.id)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : 1));
    expect(order).toEqual(opened.map((a) => a.id));
    expect(queue.findIndex((a) => a.deadline === null)).toBeGreaterThan(queue.map((a) => a.deadline !== null).lastIndexOf(true));
    expect(order).toHaveLength(5);

    type Page = { approvals: Array<{ id: string }>; next: string | null };
    const viaHttp = async (after: string | null): Promise<Page> => (await stack.http('GET', `/v1/approvals?agent=forever&limit=2${after ? `&after=${after}` : ''}`, undefined, admin1())).body;
    const watcher = await stack.connect(admin2());
    const viaSocket = async (after: string | null): Promise<Page> => watcher.socket.timeout(10_000).emitWithAck('approvals', { agent: 'forever', limit: 2, ...(after ? { after } : {}) });
    try {
      for (const read of [viaHttp, viaSocket]) {
        const listed: string[] = [];
        let page = await read(null);
        for (let n = 0; n < 20; n++) {
          listed.push(...page.approvals.map((a) => a.id).filter((id) => ours.has(id)));
          if (page.next === null) {
            break;
          }
          page = await read(page.next);
        }
        expect(listed).toEqual(order);
      }
      // The first one given is answered: the cursor after it still goes on from there.
      const first: Page = (await stack.http('GET', '/v1/approvals?agent=forever&limit=1', undefined, admin1())).body;
      expect(first.approvals.map((a) => a.id)).toEqual([order[0]]);
      expect((await stack.answer(order[0], { decision: 'deny' }, admin1())).status).toBe(200);
      expect((await viaHttp(first.next)).approvals.map((a) => a.id)).toEqual(order.slice(1, 3));

      const bad = await stack.http('GET', '/v1/approvals?after=12.x.y', undefined, admin1());
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('after');
      expect(await watcher.socket.timeout(10_000).emitWithAck('approvals', { after: 'nope' })).toMatchObject({ error: { code: 'validation_failed', message: expect.stringContaining('after') } });
    } finally {
      watcher.close();
    }
    for (const id of order.slice(1)) {
      expect((await stack.answer(id, { decision: 'deny' }, admin1())).status).toBe(200);
    }
  });

  it('pages the open interactions with `next`; a cursor of the wrong listing is refused, naming `after`', async () => {
    const runs = [];
    for (let n = 0; n < 3; n++) {
      runs.push(await stack.startRun('soon', `t${n}`, carol()));
    }
    const ours = new Set((await Promise.all(runs.map((id) => stack.waitForQuestion(id, 20_000, admin1())))).map((i) => i.id));
    const listed: string[] = [];
    let after: string | null = null;
    for (let n = 0; n < 50; n++) {
      const page: { status: number; body: any } = await stack.http('GET', `/v1/interactions?limit=1${after ? `&after=${after}` : ''}`, undefined, carol());
      expect(page.status).toBe(200);
      listed.push(...(page.body.interactions as Array<{ id: string }>).map((i) => i.id));
      after = page.body.next;
      if (after === null) {
        break;
      }
    }
    expect(listed.filter((id) => ours.has(id)).sort()).toEqual([...ours].sort());
    expect(new Set(listed).size).toBe(listed.length);
    // A run's listing goes by log positions, the tenant's by index positions.
    const wrong = await stack.http('GET', `/v1/interactions?runId=${runs[0]}&after=1000.abc`, undefined, carol());
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('after');
    for (const id of ours) {
      expect((await stack.answer(id, { decision: 'deny' }, carol())).status).toBe(200);
    }
  });

  describe('claims', () => {
    let watcher: TestClient;

    beforeAll(async () => {
      watcher = await stack.connect(admin2());
      await watcher.subscribe({});
    });

    afterAll(() => watcher.close());

    it('only admins claim; only the claimant answers while the claim lives; the resolution reaches every client, naming who and how', async () => {
      const runId = await stack.startRun('later', 't', alice());
      const approval = await stack.waitForQuestion(runId);

      expect((await stack.http('POST', `/v1/approvals/${approval.id}/claim`, undefined, alice())).status).toBe(403);
      const claimed = await stack.http('POST', `/v1/approvals/${approval.id}/claim`, undefined, admin1());
      expect(claimed.status).toBe(200);
      expect(claimed.body.interaction.claim).toEqual({ subject: 'ada', until: expect.any(String) });
      await watcher.waitForEvent((e) => e.type === 'interaction.claimed' && e.data.interactionId === approval.id, 'the claim event');

      // Someone else cannot take it over or answer it while the claim lives: not a colleague, not the run's owner.
      const taken = await watcher.socket.timeout(10_000).emitWithAck('claim', { interactionId: approval.id });
      expect(taken).toMatchObject({ error: { code: 'conflict', message: expect.stringContaining('claimed by ada') } });
      expect((await stack.answer(approval.id, { decision: 'allow_once' }, admin2())).status).toBe(409);
      expect((await stack.answer(approval.id, { decision: 'allow_once' }, alice())).status).toBe(409);

      const answered = await stack.answer(approval.id, { decision: 'allow_run' }, admin1());
      expect(answered.status).toBe(200);
      const resolved = await watcher.waitForEvent((e) => e.type === 'interaction.resolved' && e.data.interactionId === approval.id, 'the resolution');
      expect(resolved.data).toMatchObject({ outcome: 'answered', decision: 'allow_run', by: { kind: 'user', subject: 'ada', role: 'admin' } });
      expect(await list(admin2(), `?runId=${runId}`)).toEqual([]);

      await stack.waitForStatus(runId, 'finished');
      const audit = (await stack.http('GET', `/v1/runs/${runId}/audit`, undefined, admin2())).body.entries;
      expect(audit[0]).toMatchObject({ approver: { tenant: 'acme', subject: 'ada', role: 'admin' }, decision: 'allow_run', scope: 'run' });
    });

    it('a claim expires; then any admin may answer', async () => {
      // A deployment whose claims last one second (PARLEY_APPROVAL_CLAIM_SECS).
      const brief = await TestStack.start({ agentsDir: writeAgents([writer('later', 3600)]), overrides: { approvalClaimSecs: 1 } });
      try {
        const runId = await brief.startRun('later', 't', brief.token({ sub: 'alice' }));
        const approval = await brief.waitForQuestion(runId);
        const claimed = await brief.http('POST', `/v1/approvals/${approval.id}/claim`, undefined, brief.token({ sub: 'bob', role: 'admin' }));
        expect(claimed.body.interaction.claim).toMatchObject({ subject: 'bob' });
        const other = brief.token({ sub: 'ada', role: 'admin' });
        await waitFor(async () => !(await brief.http('GET', `/v1/interactions/${approval.id}`, undefined, other)).body.interaction.claim, {
          message: 'the claim to expire',
        });
        expect((await brief.answer(approval.id, { decision: 'deny', reason: 'took too long' }, other)).status).toBe(200);
      } finally {
        await brief.close();
      }
    });

    it('a stop cancels a claimed approval, and its claim ends with it', async () => {
      const runId = await stack.startRun('forever', 't', alice());
      const approval = await stack.waitForQuestion(runId);
      expect((await stack.http('POST', `/v1/approvals/${approval.id}/claim`, undefined, admin1())).status).toBe(200);
      expect((await stack.http('POST', `/v1/runs/${runId}/stop`, {}, alice())).status).toBe(200);
      const after = (await stack.http('GET', `/v1/interactions/${approval.id}`, undefined, admin1())).body.interaction;
      expect(after.status).toBe('cancelled');
      expect(after.claim).toBeUndefined();
    });

    it('a claimant may release the claim; the queue works over socket.io too', async () => {
      const runId = await stack.startRun('forever', 't', alice());
      const approval = await stack.waitForQuestion(runId);
      const listed = await watcher.socket.timeout(10_000).emitWithAck('approvals', { runId });
      expect(listed).toMatchObject({ ok: true, approvals: [{ id: approval.id }] });
      expect(await watcher.socket.timeout(10_000).emitWithAck('claim', { interactionId: approval.id })).toMatchObject({ ok: true });
      expect(await watcher.socket.timeout(10_000).emitWithAck('claim', { interactionId: approval.id, release: true })).toMatchObject({
        ok: true,
        interaction: { id: approval.id },
      });
      expect((await stack.http('GET', `/v1/interactions/${approval.id}`, undefined, admin1())).body.interaction.claim).toBeUndefined();
      // Released already: a repeat (a retry after a lost response) changes nothing.
      const seqBefore = await stack.redis.get(`${stack.config.prefix}:{t:acme}:seq`);
      const released = await stack.http('DELETE', `/v1/approvals/${approval.id}/claim`, undefined, admin1());
      expect(released.status).toBe(200);
      expect(released.body.interaction.claim).toBeUndefined();
      expect(await stack.redis.get(`${stack.config.prefix}:{t:acme}:seq`)).toBe(seqBefore);
      const answer = await watcher.answer(approval.id, { decision: 'deny' });
      expect(answer).toMatchObject({ ok: true, interaction: { status: 'answered', answer: { decision: 'deny' } } });
    });

    it('claims apply to approvals only, and bad claim messages change nothing', async () => {
      expect(await watcher.socket.timeout(10_000).emitWithAck('claim', { interactionId: 'nope', extra: 1 })).toMatchObject({
        error: { code: 'validation_failed' },
      });
      expect((await stack.http('POST', '/v1/approvals/missing-id/claim', undefined, admin1())).status).toBe(404);
      const question = await stack.waitForQuestion(await stack.startRun('asker', 'q', alice()));
      const notApproval = await stack.http('POST', `/v1/approvals/${question.id}/claim`, undefined, admin1());
      expect(notApproval).toMatchObject({ status: 409, body: { error: { code: 'conflict', details: { waitReason: 'question' } } } });
      // A member's claim is refused for its role before its message is read, as over HTTP.
      const member = await stack.connect(alice());
      try {
        expect(await member.socket.timeout(10_000).emitWithAck('claim', { interactionId: 'nope', extra: 1 })).toMatchObject({ error: { code: 'forbidden' } });
      } finally {
        member.close();
      }
    });
  });
});
