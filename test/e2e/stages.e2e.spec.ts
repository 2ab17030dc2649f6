import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const exit = (output: string) => ({ tool_calls: [{ name: 'complete_stage', input: { output } }] });
const finish = (summary: string) => ({ tool_calls: [{ name: 'finish', input: { summary } }] });

const planPoint = {
  name: 'plan_review',
  prompt: 'Is this plan good to build?',
  style: 'multiple_choice',
  options: ['Approve'],
  directives: { 'More detail': 'Add more detail to every step.' },
  edit_options: ['Edit'],
  abort_options: ['Abort'],
  document_region: 'plan',
};

/** plan (a checkpoint) → build → report. */
function threeStages(name: string, planTurns: number, point: Record<string, unknown> = planPoint, extra: Record<string, unknown> = {}) {
  return {
    name,
    model: {
      provider: 'scripted',
      turns: [...Array.from({ length: planTurns }, (_, i) => exit(`plan v${i + 1}`)), exit('built it'), finish('report: all done')],
    },
    tools: ['finish'],
    stages: [
      { name: 'plan', mode: 'interactive_points', prompt: 'Write the plan.', transitions: ['build'], points: [point] },
      { name: 'build', prompt: 'Build it.', transitions: ['report'] },
      { name: 'report', prompt: 'Report.' },
    ],
    limits: { max_iterations: 20, interaction_timeout_secs: 0 },
    ...extra,
  };
}

describe('stages and checkpoints', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      agentsDir: writeAgents([
        threeStages('planner', 3),
        threeStages('stubborn', 6, { ...planPoint, style: 'free_text', options: ['Auto-approve'] }),
        threeStages('hasty', 1, { ...planPoint, unattended: 'auto_approve' }, { limits: { max_iterations: 20, interaction_timeout_secs: 1 } }),
        threeStages('strict', 1, { ...planPoint, unattended: 'ask' }, { limits: { max_iterations: 20, interaction_timeout_secs: 1 } }),
        {
          name: 'guarded',
          model: {
            provider: 'scripted',
            turns: [
              { tool_calls: [{ name: 'write_file', input: { path: 'early.txt', content: 'x' } }] },
              exit('planned'),
              { tool_calls: [{ name: 'write_file', input: { path: 'late.txt', content: 'x' } }] },
              finish('written'),
            ],
          },
          tools: ['write_file', 'finish'],
          permissions: { write_file: 'allow' },
          stages: [{ name: 'plan', permissions: { write_file: 'deny' }, transitions: ['build'] }, { name: 'build' }],
          limits: { max_iterations: 10 },
        },
        {
          name: 'shortcut',
          model: { provider: 'scripted', turns: [finish('skipping ahead'), { text: 'Just talking.' }, exit('plan v1'), finish('the end')] },
          tools: ['finish'],
          stages: [
            { name: 'plan', mode: 'interactive_points', transitions: ['report'], points: [{ ...planPoint, unattended: 'auto_approve' }] },
            { name: 'report' },
          ],
          limits: { max_iterations: 10 },
        },
      ]),
    });
  });

  afterAll(() => stack.close());

  const pick = async (interaction: any, label: string) => {
    const choice = (interaction.prompt.options as Array<{ label: string }>).findIndex((o) => o.label === label);
    expect(choice).toBeGreaterThanOrEqual(0);
    const res = await stack.answer(interaction.id, { choice });
    expect(res.status).toBe(200);
  };
  async function checkpoint(runId: string, previous?: string): Promise<any> {
    const interaction = await waitFor(
      async () => {
        const body = await stack.run(runId);
        return body.run?.status === 'waiting' && body.interaction && body.interaction.id !== previous ? body.interaction : undefined;
      },
      { timeoutMs: 20_000, message: `run ${runId} to park on a new checkpoint` },
    );
    expect(interaction.waitReason).toBe('checkpoint');
    // The run's interaction list (the console's run page, `parley respond --run`) shows it too.
    const listed = (await stack.http('GET', `/v1/interactions?runId=${runId}&status=all`)).body.interactions as any[];
    expect(listed.map((i) => i.id)).toContain(interaction.id);
    return interaction;
  }
  const events = async (runId: string) => (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];

  it('revise twice with a directive, edit, approve: the stage moves on with the person\'s version of the document', async () => {
    const runId = await stack.startRun('planner', 'Plan and build a shed');
    expect((await stack.run(runId)).run.stage).toBe('plan');

    const first = await checkpoint(runId);
    expect(first.checkpoint).toEqual({ stage: 'plan', point: 'plan_review', round: 0, purpose: 'decide' });
    expect(first.prompt.options.map((o: any) => o.label)).toEqual(['Approve', 'More detail', 'Edit', 'Abort']);
    expect(first.prompt.prompt).toContain('plan v1');
    await pick(first, 'More detail');

    const second = await checkpoint(runId, first.id);
    expect(second.checkpoint).toMatchObject({ round: 1 });
    expect(second.prompt.prompt).toContain('plan v2');
    await pick(second, 'More detail');

    const third = await checkpoint(runId, second.id);
    expect(third.checkpoint).toMatchObject({ round: 2 });
    await pick(third, 'Edit');
    const edit = await checkpoint(runId, third.id);
    expect(edit.checkpoint).toMatchObject({ purpose: 'edit' });
    expect(edit.prompt).toMatchObject({ kind: 'edit_text', document: expect.stringContaining('plan v3') });
    expect((await stack.answer(edit.id, { text: 'plan v3, tightened by a person' })).status).toBe(200);

    const again = await checkpoint(runId, edit.id);
    expect(again.checkpoint).toMatchObject({ round: 3, purpose: 'decide' });
    expect(again.prompt.prompt).toContain('plan v3, tightened by a person');
    await pick(again, 'Approve');

    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run).toMatchObject({ summary: 'report: all done', stage: 'report' });
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'stage').map((e) => e.to)).toEqual(['plan', 'build', 'report']);
    const revisions = log.filter((e) => e.type === 'tool_result' && e.name === 'complete_stage').map((e) => JSON.parse(e.content));
    expect(revisions.slice(0, 2)).toEqual([
      expect.objectContaining({ status: 'revise', directive: 'Add more detail to every step.' }),
      expect.objectContaining({ status: 'revise', directive: 'Add more detail to every step.' }),
    ]);
    expect(revisions[2]).toMatchObject({ ok: true, stage: 'build', notes: ['plan_review: Approve'] });
    const documents = log.filter((e) => e.type === 'document' && e.region === 'plan');
    expect(documents.at(-1)).toMatchObject({ source: 'person', text: 'plan v3, tightened by a person' });
    const all = await events(runId);
    expect(all.filter((e) => e.type === 'stage.entered').map((e) => e.data.stage)).toEqual(['plan', 'build', 'report']);
    expect(all.filter((e) => e.type === 'document.updated').map((e) => e.data.source)).toEqual(['model', 'model', 'model', 'person']);
    expect(all.find((e) => e.type === 'run.status' && e.data.status === 'waiting').data).toEqual({ status: 'waiting', waitReason: 'checkpoint', stage: 'plan' });
    expect(all.filter((e) => e.type === 'run.status').at(-1).data).toEqual({ status: 'finished', stage: 'report' });
  });

  it('an abort option stops the run at once, with no further model call', async () => {
    const runId = await stack.startRun('planner');
    const first = await checkpoint(runId);
    await pick(first, 'Abort');
    const { run } = await stack.waitForStatus(runId, 'cancelled');
    expect(run.stoppedBy).toMatchObject({ kind: 'user', subject: 'alice' });
    expect((await stack.log(runId)).filter((e) => e.type === 'assistant')).toHaveLength(1);
  });

  it('options match ignoring case, dashes and spaces; after 4 revise rounds the stage proceeds and the event says so', async () => {
    const quick = await stack.startRun('stubborn');
    const typed = await checkpoint(quick);
    expect(typed.prompt.kind).toBe('free_text');
    expect((await stack.answer(typed.id, { text: 'auto approve' })).status).toBe(200);
    await stack.waitForStatus(quick, 'finished');
    const approved = (await stack.log(quick)).find((e) => e.type === 'tool_result' && e.name === 'complete_stage');
    expect(JSON.parse(approved.content)).toMatchObject({ ok: true, notes: ['plan_review: Auto-approve'] });

    const runId = await stack.startRun('stubborn');
    let previous: string | undefined;
    for (let round = 0; round < 4; round++) {
      const asked = await checkpoint(runId, previous);
      expect(asked.checkpoint.round).toBe(round);
      expect((await stack.answer(asked.id, { text: 'MORE-detail' })).status).toBe(200);
      previous = asked.id;
    }
    await stack.waitForStatus(runId, 'finished');
    const proceeded = (await events(runId)).filter((e) => e.type === 'checkpoint.proceeded');
    expect(proceeded.map((e) => e.data)).toEqual([{ stage: 'plan', point: 'plan_review', why: 'round_limit' }]);
    const log = await stack.log(runId);
    // Five tries at the plan: four revisions, then the fifth moved on without asking.
    expect(log.filter((e) => e.type === 'checkpoint').map((e) => [e.ref.round, Boolean(e.auto)])).toEqual([
      [0, false],
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(log.filter((e) => e.type === 'stage').map((e) => e.to)).toEqual(['plan', 'build', 'report']);
  });

  it('a stage with a way on cannot be skipped: finish is refused there, and a turn without tools is told how to move on', async () => {
    const runId = (await stack.http('POST', '/v1/runs', { agent: 'shortcut', task: 'try to skip', unattended: true })).body.run.id;
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run).toMatchObject({ summary: 'the end', stage: 'report' });
    const log = await stack.log(runId);
    const first = log.find((e) => e.type === 'tool_result' && e.name === 'finish');
    expect(JSON.parse(first.content).error).toContain('unknown tool: finish');
    expect(log.find((e) => e.type === 'user_message')).toMatchObject({ by: { kind: 'system' }, text: expect.stringContaining('complete_stage') });
    expect(log.filter((e) => e.type === 'checkpoint')).toEqual([expect.objectContaining({ auto: true })]);
  });

  it("a stage's permissions override the agent's while the run is in it", async () => {
    const runId = await stack.startRun('guarded');
    await stack.waitForStatus(runId, 'finished');
    const writes = (await stack.log(runId)).filter((e) => e.type === 'tool_result' && e.name === 'write_file').map((e) => JSON.parse(e.content));
    expect(writes[0].error).toContain('unknown tool: write_file');
    expect(writes[1]).toMatchObject({ ok: true, path: 'late.txt' });
  });

  it('a checkpoint deadline proceeds with no user text; unattended runs approve at once, or fail on expiry where the point demands a person', async () => {
    const attended = await stack.startRun('hasty');
    await stack.waitForStatus(attended, 'finished');
    expect((await events(attended)).filter((e) => e.type === 'checkpoint.proceeded').map((e) => e.data.why)).toEqual(['deadline']);

    const unattended = (await stack.http('POST', '/v1/runs', { agent: 'hasty', task: 'nobody watches', unattended: true })).body.run.id;
    await stack.waitForStatus(unattended, 'finished');
    expect((await events(unattended)).filter((e) => e.type === 'checkpoint.proceeded').map((e) => e.data.why)).toEqual(['unattended']);
    expect((await stack.log(unattended)).filter((e) => e.type === 'checkpoint')).toEqual([expect.objectContaining({ auto: true })]);

    const strict = (await stack.http('POST', '/v1/runs', { agent: 'strict', task: 'nobody watches', unattended: true })).body.run.id;
    const parked = await checkpoint(strict);
    expect(parked.waitReason).toBe('checkpoint');
    const { run } = await stack.waitForStatus(strict, 'failed');
    expect(run).toMatchObject({ endReason: 'checkpoint_expired', error: expect.stringContaining('expired') });
  });
});
