import type { ParleyEvent } from '@parley/contracts';
import { TestStack, type TestClient } from '../support/stack';

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
    expect(await client.subscribe({})).toEqual({ ok: true, lastSeq: expect.any(Number) });
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
});
