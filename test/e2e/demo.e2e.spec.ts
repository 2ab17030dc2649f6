import type { AnswerBody, ParleyEvent } from '@parley/contracts';
import { ParleyStore, type EventPage } from '@parley/store';
import { EventsGateway } from '../../apps/gateway/src/events/events.gateway';
import { TestStack, type TestClient } from '../support/stack';
import { waitFor } from '../support/wait-for';

describe('the demo agent end to end over socket.io', () => {
  let stack: TestStack;
  let client: TestClient;

  beforeAll(async () => {
    stack = await TestStack.start();
    client = await stack.connect();
  });

  afterAll(async () => {
    client.close();
    await stack.close();
  });

  it('asks, takes each answer once, writes its file once approved, presents it and finishes', async () => {
    expect(await client.subscribe({})).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
    const runId = await stack.startRun('demo', 'Plan a team offsite');
    const opened = (n: number) =>
      client.waitForEvent(
        (e) => e.runId === runId && e.type === 'interaction.opened' && client.events.filter((x) => x.runId === runId && x.type === 'interaction.opened').indexOf(e) === n,
        `interaction #${n}`,
      ) as Promise<Extract<ParleyEvent, { type: 'interaction.opened' }>>;

    const choice = (await opened(0)).data.interaction;
    expect(choice.prompt).toMatchObject({ kind: 'multiple_choice', options: [{ label: 'Workshop' }, { label: 'Retreat' }, { label: 'Party' }] });
    expect(await client.answer(choice.id, { choice: 1 })).toMatchObject({ ok: true, interaction: { status: 'answered' } });

    const text = (await opened(1)).data.interaction;
    expect(text.prompt).toMatchObject({ kind: 'free_text', prompt: expect.stringContaining('Retreat') });
    expect(await client.answer(text.id, { text: 'Lisbon, in May' })).toMatchObject({ ok: true });

    const approval = (await opened(2)).data.interaction;
    expect(approval).toMatchObject({ waitReason: 'approval', prompt: { kind: 'tool_approval', tool: 'write_file', telling: { label: 'path', value: 'plan.md' } } });
    expect(await client.answer(approval.id, { decision: 'allow_once' })).toMatchObject({ ok: true });

    const review = (await opened(3)).data.interaction;
    expect(review.prompt).toMatchObject({ kind: 'review', prompt: 'plan.md' });
    expect(await client.answer(review.id, { approved: true, feedback: 'Looks good' })).toMatchObject({ ok: true });

    const finished = await client.waitForEvent((e) => e.runId === runId && e.type === 'run.finished', 'run.finished');
    expect(finished.data).toEqual({ reason: 'finish', summary: expect.stringContaining('plan.md') });

    const log = await stack.log(runId);
    const questions = log.filter((e) => e.type === 'question');
    const answers = log.filter((e) => e.type === 'answer');
    expect(questions.map((q) => q.interactionId)).toEqual([choice.id, text.id, approval.id, review.id]);
    expect(answers.map((a) => a.interactionId)).toEqual([choice.id, text.id, approval.id, review.id]);
    expect(log.filter((e) => e.type === 'tool_result' && e.name === 'write_file')).toHaveLength(1);

    // Events of the run arrive in sequence order, each once.
    const seqs = client.events.filter((e) => e.runId === runId).map((e) => e.seq);
    expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    const types = client.events.filter((e) => e.runId === runId).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['run.created', 'run.status', 'message.delta', 'message', 'tool.call', 'tool.result', 'interaction.resolved']));

    const workspace = await stack.redis.hget(`${stack.config.prefix}:{t:acme}:run:${runId}:ws`, 'plan.md');
    expect(workspace).toContain('Lisbon, in May');
  });

  it('a subscription limited to some event types gets only those, live and replayed, and its lastSeq still covers every event', async () => {
    const answerer = await stack.connect();
    const replayer = await stack.connect();
    try {
      expect(await answerer.subscribe({ types: ['interaction.opened', 'run.finished', 'interaction.opened'] })).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      const runId = await stack.startRun('demo', 'Plan a team offsite');
      const answers: AnswerBody[] = [{ choice: 1 }, { text: 'Lisbon, in May' }, { decision: 'allow_once' }, { approved: true }];
      for (const [n, answer] of answers.entries()) {
        const opened = (await answerer.waitForEvent(
          (e) => e.runId === runId && e.type === 'interaction.opened' && answerer.events.filter((x) => x.runId === runId && x.type === 'interaction.opened').indexOf(e) === n,
          `interaction #${n}`,
        )) as Extract<ParleyEvent, { type: 'interaction.opened' }>;
        expect(await answerer.answer(opened.data.interaction.id, answer)).toMatchObject({ ok: true });
      }
      await answerer.waitForEvent((e) => e.runId === runId && e.type === 'run.finished', 'run.finished');
      expect(new Set(answerer.events.filter((e) => e.runId === runId).map((e) => e.type))).toEqual(new Set(['interaction.opened', 'run.finished']));

      const ack = await replayer.subscribe({ runId, since: 0, types: ['interaction.resolved'] });
      const all = (await stack.http<{ events: ParleyEvent[] }>('GET', `/v1/runs/${runId}/events?since=0`)).body.events;
      expect(ack).toEqual({ ok: true, lastSeq: all[all.length - 1].seq, truncated: false });
      expect(replayer.events.map((e) => e.seq)).toEqual(all.filter((e) => e.type === 'interaction.resolved').map((e) => e.seq));
      expect(replayer.events).toHaveLength(4);
    } finally {
      answerer.close();
      replayer.close();
    }
  });

  it('a subscribe sent while an earlier one still replays replaces it: the earlier one stops and is refused, only the later one delivers', async () => {
    // The earlier tests' runs left events to replay. The first subscribe has more to check (its run) than the second.
    const runId = (await stack.http('GET', '/v1/runs?limit=1')).body.runs[0].id as string;
    const both = await stack.connect();
    try {
      const [first, second] = await Promise.all([both.subscribe({ runId, since: 0 }), both.subscribe({ since: 0, types: ['run.finished'] })]);
      expect(first).toMatchObject({ error: { code: 'conflict', message: expect.stringContaining('replaced by a later subscribe') } });
      expect(second).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      expect(both.events.length).toBeGreaterThan(0);
      expect(both.events.every((e) => e.type === 'run.finished')).toBe(true);
      const seqs = both.events.map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    } finally {
      both.close();
    }
  });

  it('a subscribe refused for its message (a run it cannot see) does not stop an earlier one in progress', async () => {
    const socket = await stack.connect();
    try {
      const [first, refused] = await Promise.all([socket.subscribe({ since: 0 }), socket.subscribe({ runId: '00000000-0000-4000-8000-000000000000' })]);
      expect(first).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      expect(refused).toMatchObject({ error: { code: 'not_found' } });
      // The first subscription still delivers live events.
      const runId = await stack.startRun('demo', 'Plan a team offsite');
      await socket.waitForEvent((e) => e.runId === runId && e.type === 'run.created', 'run.created of a new run');
      expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
    } finally {
      socket.close();
    }
  });

  it('a subscribe whose replay fails leaves nothing subscribed (no buffer grows), and a subscribe after it works', async () => {
    const events = stack.gateway!.get(ParleyStore, { strict: false }).events;
    const replayOwner = events.replayOwner.bind(events);
    let failed = false;
    // Only the replay's first read fails (a member's tenant-wide replay, from 0).
    const read = jest.spyOn(events, 'replayOwner').mockImplementation((tenant, owner, since, count) => {
      if (since === 0 && !failed) {
        failed = true;
        return Promise.reject(new Error('Redis went away'));
      }
      return replayOwner(tenant, owner, since, count);
    });
    const retried = await stack.connect();
    try {
      expect(await retried.subscribe({ since: 0 })).toMatchObject({ error: { code: 'internal' } });
      const sockets = [...stack.gateway!.get(EventsGateway).namespace.sockets.values()];
      expect(sockets.filter((socket) => socket.id === retried.socket.id).map((socket) => (socket.data as { subscription?: unknown }).subscription)).toEqual([undefined]);

      expect(await retried.subscribe({ since: 0, types: ['run.finished'] })).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      expect(retried.events.length).toBeGreaterThan(0);
    } finally {
      read.mockRestore();
      retried.close();
    }
  });

  it('a replay of several pages reads each page only once the one before is written out to the client, and delivers every event once, in order', async () => {
    const tenant = 'long-history';
    const keys = stack.gateway!.get(ParleyStore, { strict: false }).ctx.keys;
    const count = 1_100;
    const write = stack.redis.pipeline();
    for (let seq = 1; seq <= count; seq++) {
      write.xadd(keys.tenantEvents(tenant), `0-${seq}`, 'r', 'run-1', 'o', 'someone', 'a', String(Date.now()), 't', 'message', 'd', JSON.stringify({ text: `${seq} ${'x'.repeat(2_000)}` }));
    }
    write.set(keys.seq(tenant), count);
    await write.exec();
    const reader = await stack.connect(stack.token({ tenant, sub: 'admin-1', role: 'admin' }));
    const events = stack.gateway!.get(ParleyStore, { strict: false }).events;
    const replayTenant = events.replayTenant.bind(events);
    const gateway = stack.gateway!.get(EventsGateway);
    const writableAtRead: boolean[] = [];
    const read = jest.spyOn(events, 'replayTenant').mockImplementation((t, since, limit) => {
      if (t === tenant) {
        writableAtRead.push(gateway.namespace.sockets.get(reader.socket.id!)!.conn.transport.writable);
      }
      return replayTenant(t, since, limit);
    });
    try {
      expect(await reader.subscribe({ since: 0 })).toEqual({ ok: true, lastSeq: count, truncated: false });
      await waitFor(() => reader.events.length === count, { message: 'every event replayed' });
      expect(reader.events.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      // Three pages (500, 500, 100): the second and third were read with nothing of the page before left to write.
      expect(writableAtRead).toEqual([true, true, true]);
    } finally {
      read.mockRestore();
      reader.close();
      await stack.redis.del(keys.tenantEvents(tenant), keys.seq(tenant));
    }
  });

  it('a replay stops reading when its socket goes', async () => {
    const tenant = 'gone-history';
    const keys = stack.gateway!.get(ParleyStore, { strict: false }).ctx.keys;
    const write = stack.redis.pipeline();
    for (let seq = 1; seq <= 1_100; seq++) {
      write.xadd(keys.tenantEvents(tenant), `0-${seq}`, 'r', 'run-1', 'o', 'someone', 'a', String(Date.now()), 't', 'message', 'd', '{"text":"hi"}');
    }
    write.set(keys.seq(tenant), 1_100);
    await write.exec();
    const leaving = await stack.connect(stack.token({ tenant, sub: 'admin-1', role: 'admin' }));
    const id = leaving.socket.id!;
    const events = stack.gateway!.get(ParleyStore, { strict: false }).events;
    const replayTenant = events.replayTenant.bind(events);
    const sockets = stack.gateway!.get(EventsGateway).namespace.sockets;
    let reads = 0;
    let firstPage: Promise<EventPage> | undefined;
    // The client leaves while the first page is being read.
    const read = jest.spyOn(events, 'replayTenant').mockImplementation(async (t, since, limit) => {
      if (t !== tenant || ++reads > 1) {
        return replayTenant(t, since, limit);
      }
      leaving.close();
      await waitFor(() => !sockets.has(id), { message: 'the gateway to see the socket go' });
      firstPage = replayTenant(t, since, limit);
      return firstPage;
    });
    try {
      leaving.subscribe({ since: 0 }).catch(() => undefined);
      await waitFor(() => firstPage, { message: 'the first page read' });
      await firstPage;
      // What the replay does with the page (emit, wait for the write, read on or stop) takes microtasks, no I/O.
      await new Promise((resolve) => setImmediate(resolve));
      expect(reads).toBe(1);
    } finally {
      read.mockRestore();
      await stack.redis.del(keys.tenantEvents(tenant), keys.seq(tenant));
    }
  });

  it('live events that outgrow what a replay holds back are read from the stream: each reaches the client once, in order', async () => {
    const tenant = 'busy-history';
    const store = stack.gateway!.get(ParleyStore, { strict: false });
    const keys = store.ctx.keys;
    const entry = (seq: number): string[] => ['r', 'run-1', 'o', 'someone', 'a', String(Date.now()), 't', 'message', 'd', JSON.stringify({ text: `${seq}` })];
    const history = stack.redis.pipeline();
    for (let seq = 1; seq <= 300; seq++) {
      history.xadd(keys.tenantEvents(tenant), `0-${seq}`, ...entry(seq));
    }
    history.set(keys.seq(tenant), 300);
    await history.exec();
    const reader = await stack.connect(stack.token({ tenant, sub: 'admin-1', role: 'admin' }));
    const replayTenant = store.events.replayTenant.bind(store.events);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    // The replay's one page (300 events, all there were) is handed over only after 5,100 live events
    // came in: those only a second read of the stream can deliver.
    const read = jest.spyOn(store.events, 'replayTenant').mockImplementation(async (t, since, limit) => {
      const page = await replayTenant(t, since, limit);
      if (t === tenant && !held) {
        held = true;
        await gate;
      }
      return page;
    });
    try {
      const acked = reader.subscribe({ since: 0 });
      await waitFor(() => held, { message: 'the replay to start' });
      const live = stack.redis.pipeline();
      for (let seq = 301; seq <= 5_400; seq++) {
        live.xadd(keys.tenantEvents(tenant), `0-${seq}`, ...entry(seq));
        live.publish(keys.eventsChannel(), JSON.stringify({ seq, tenant, runId: 'run-1', owner: 'someone', at: new Date().toISOString(), type: 'message', data: { text: `${seq}` }, prev: seq - 1 }));
      }
      live.set(keys.seq(tenant), 5_400);
      await live.exec();
      const subscription = () => (stack.gateway!.get(EventsGateway).namespace.sockets.get(reader.socket.id!)?.data as { subscription?: { overflowed?: boolean } }).subscription;
      await waitFor(() => subscription()?.overflowed === true, { message: 'the held-back live events to outgrow the buffer' });
      release();
      expect(await acked).toEqual({ ok: true, lastSeq: 5_400, truncated: false });
      await waitFor(() => reader.events.length >= 5_400, { message: 'every event' });
      expect(reader.events.map((e) => e.seq)).toEqual(Array.from({ length: 5_400 }, (_, i) => i + 1));
    } finally {
      release();
      read.mockRestore();
      reader.close();
      await stack.redis.del(keys.tenantEvents(tenant), keys.seq(tenant));
    }
  });
});
