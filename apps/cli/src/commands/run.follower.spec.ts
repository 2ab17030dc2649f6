import type { AnswerBody, Interaction, ParleyEvent, Prompt } from '@parley/contracts';
import { ApiError } from '../api/api.error';
import { CapturedOutput, waitFor } from '../testing/cli.harness';
import type { InteractionPrompter } from '../prompt/interaction.prompter';
import { PromptCancelledError } from '../prompt/line.reader';
import { shellApprovalPrompt } from '../testing/interaction.fixture';
import { RunFollower } from './run.follower';

const interaction = (id: string, prompt: Prompt = { kind: 'free_text', prompt: `question ${id}` }): Interaction => ({
  id,
  tenant: 'dev',
  runId: 'r1',
  owner: 'cli',
  agent: 'echo',
  waitReason: 'question',
  prompt,
  status: 'open',
  createdAt: 'T',
  deadline: null,
});

/** A prompter whose questions the test answers (or that gets withdrawn) explicitly. */
class ManualPrompter {
  readonly asked: Array<{ id: string; problem?: string; answer: (body: AnswerBody) => void; signal: AbortSignal }> = [];
  ask(target: Interaction, signal: AbortSignal, problem?: string): Promise<AnswerBody> {
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(new PromptCancelledError()), { once: true });
      this.asked.push({ id: target.id, problem, answer: resolve, signal });
    });
  }
}

function setup(options: { json?: boolean; subject?: string; answer?: (id: string, body: AnswerBody) => Promise<Interaction> } = {}) {
  const stdout = new CapturedOutput();
  const stderr = new CapturedOutput();
  const prompter = new ManualPrompter();
  const open = new Map<string, Interaction>();
  const sent: Array<[string, AnswerBody]> = [];
  const follower = new RunFollower({
    runId: 'r1',
    json: options.json === true,
    promptsOnStderr: options.json === true,
    ...(options.subject === undefined ? {} : { subject: options.subject }),
    stdout,
    stderr,
    prompter: () => prompter as unknown as InteractionPrompter,
    answer:
      options.answer ??
      ((id, body) => {
        sent.push([id, body]);
        return Promise.resolve({ ...interaction(id), status: 'answered' });
      }),
    lookup: (id) => Promise.resolve(open.get(id) ?? { ...interaction(id), status: 'answered' }),
  });
  let seq = 0;
  const emit = (draft: Pick<ParleyEvent, 'type' | 'data'>, runId = 'r1'): void => {
    seq += 1;
    follower.handle({ seq, tenant: 'dev', runId, owner: 'cli', at: 'T', ...draft });
  };
  const openQuestion = (target: Interaction): void => {
    open.set(target.id, target);
    emit({ type: 'interaction.opened', data: { interaction: target } });
  };
  const resolve = (id: string, subject = 'ann'): void => {
    open.delete(id);
    emit({ type: 'interaction.resolved', data: { interactionId: id, outcome: 'answered', by: { kind: 'user', subject }, at: 'T' } });
  };
  const claim = (id: string, subject: string | null, until = new Date(Date.now() + 300_000).toISOString()): void => {
    const target = open.get(id);
    if (target !== undefined) {
      const { claim: _previous, ...rest } = target;
      open.set(id, subject === null ? rest : { ...rest, claim: { subject, until } });
    }
    const data = subject === null ? null : { subject, until };
    emit({ type: 'interaction.claimed', data: { interactionId: id, claim: data, by: { kind: 'user', subject: subject ?? 'bob' } } });
  };
  return { follower, stdout, stderr, prompter, sent, open, emit, openQuestion, resolve, claim };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RunFollower', () => {
  it('prints streamed text once and a non-streamed message whole', async () => {
    const { follower, stdout, emit } = setup();
    emit({ type: 'message.delta', data: { text: 'Hel' } });
    emit({ type: 'message.delta', data: { text: 'lo' } });
    emit({ type: 'message', data: { text: 'Hello' } });
    emit({ type: 'message', data: { text: 'Whole' } });
    emit({ type: 'message', data: { text: 'other run' } }, 'r2');
    emit({ type: 'run.finished', data: { reason: 'finish' } });
    await expect(follower.outcome).resolves.toBe(0);
    expect(stdout.text).toBe('Hello\nWhole\n✓ run finished (finish)\n');
  });

  it('says when a reply it streamed was cut short and the model is asked again', async () => {
    const { follower, stdout, emit } = setup();
    emit({ type: 'message.delta', data: { text: 'Half a' } });
    emit({ type: 'run.status', data: { status: 'queued' } });
    emit({ type: 'run.status', data: { status: 'running' } });
    emit({ type: 'message.delta', data: { text: 'Whole' } });
    emit({ type: 'message', data: { text: 'Whole' } });
    emit({ type: 'run.finished', data: { reason: 'finish' } });
    await expect(follower.outcome).resolves.toBe(0);
    expect(stdout.text).toBe('Half a\n(that reply was cut short: the model is asked again)\nWhole\n✓ run finished (finish)\n');
  });

  it('shows stage moves, checkpoints passed without a person, messages (taken or discarded) and sub-agents', async () => {
    const { follower, stdout, emit } = setup();
    const alice = { kind: 'user' as const, subject: 'alice' };
    emit({ type: 'stage.entered', data: { stage: 'plan', from: null } });
    emit({ type: 'run.status', data: { status: 'running', stage: 'plan' } });
    emit({ type: 'message.delta', data: { text: 'Planning' } });
    emit({ type: 'message.received', data: { messageId: 'm1', text: 'use the\nstaging db', by: alice } });
    emit({ type: 'message.injected', data: { messageIds: ['m1'] } });
    emit({ type: 'checkpoint.proceeded', data: { stage: 'plan', point: 'review', why: 'unattended' } });
    emit({ type: 'stage.entered', data: { stage: 'build', from: 'plan' } });
    emit({ type: 'child.started', data: { childRunId: 'c1', agent: 'researcher' } });
    emit({ type: 'run.status', data: { status: 'waiting', waitReason: 'child', stage: 'build' } });
    emit({ type: 'message.received', data: { messageId: 'm2', text: 'too late', by: alice } });
    emit({ type: 'message.discarded', data: { messageIds: ['m2'] } });
    emit({ type: 'run.finished', data: { reason: 'finish' } });
    await expect(follower.outcome).resolves.toBe(0);
    expect(stdout.text).toBe(
      [
        '── stage plan',
        'Planning',
        '✉ message from alice: use the staging db',
        '✉ 1 message passed to the agent',
        '↷ checkpoint review of stage plan proceeded without a person: the run is unattended',
        '── stage build (from plan)',
        '⇢ sub-agent researcher started as run c1 (follow it with: parley logs c1 -f)',
        '✉ message from alice: too late',
        '✉ 1 message never read: the run ended first',
        '✓ run finished (finish)',
        '',
      ].join('\n'),
    );
  });

  it('explains the end of a sub-agent that needs input and of a run whose checkpoint expired', async () => {
    const needs = setup();
    needs.emit({ type: 'run.finished', data: { reason: 'needs_input', summary: 'which database?' } });
    await expect(needs.follower.outcome).resolves.toBe(0);
    expect(needs.stdout.text).toBe('✓ run finished (needs_input) — it needs information only a person can give: which database?\n');

    const expired = setup();
    expired.emit({ type: 'run.failed', data: { reason: 'checkpoint_expired', error: 'checkpoint review expired' } });
    await expect(expired.follower.outcome).resolves.toBe(1);
    expect(expired.stderr.text).toBe('✗ run failed (checkpoint_expired) — a checkpoint that needed a person expired: checkpoint review expired\n');
  });

  it('asks a checkpoint like any question', async () => {
    const { prompter, sent, openQuestion } = setup();
    openQuestion({
      ...interaction('cp', { kind: 'confirm', prompt: 'Plan ok?' }),
      waitReason: 'checkpoint',
      checkpoint: { stage: 'plan', point: 'review', round: 0, purpose: 'decide' },
    });
    await settle();
    prompter.asked[0].answer({ confirmed: true });
    await settle();
    expect(sent).toEqual([['cp', { confirmed: true }]]);
  });

  it('asks each question once, one at a time, in order', async () => {
    const { prompter, sent, openQuestion } = setup();
    const first = interaction('a');
    openQuestion(first);
    openQuestion(first);
    openQuestion(interaction('b'));
    await settle();
    expect(prompter.asked.map((q) => q.id)).toEqual(['a']);
    prompter.asked[0].answer({ text: 'x' });
    await settle();
    expect(prompter.asked.map((q) => q.id)).toEqual(['a', 'b']);
    expect(sent).toEqual([['a', { text: 'x' }]]);
  });

  it('withdraws the active prompt and drops queued ones resolved elsewhere', async () => {
    const { prompter, stdout, openQuestion, resolve } = setup();
    openQuestion(interaction('a'));
    openQuestion(interaction('b'));
    openQuestion(interaction('c'));
    await settle();
    resolve('b', 'bo');
    resolve('a', 'al');
    await settle();
    expect(prompter.asked[0].signal.aborted).toBe(true);
    expect(prompter.asked.map((q) => q.id)).toEqual(['a', 'c']);
    expect(stdout.text).toContain('interaction b was answered by bo at T\n');
    expect(stdout.text).toContain('interaction a was answered by al at T; your answer is no longer needed\n');
  });

  it('says how an approval was resolved elsewhere, and who claimed it', async () => {
    const { prompter, stdout, openQuestion, emit } = setup();
    openQuestion(interaction('a'));
    await settle();
    emit({ type: 'interaction.claimed', data: { interactionId: 'a', claim: { subject: 'bob', until: 'U' }, by: { kind: 'user', subject: 'bob' } } });
    emit({ type: 'interaction.claimed', data: { interactionId: 'other', claim: { subject: 'bob', until: 'U' }, by: { kind: 'user', subject: 'bob' } } });
    emit({ type: 'interaction.resolved', data: { interactionId: 'a', outcome: 'answered', by: { kind: 'user', subject: 'alice' }, at: 'T', decision: 'allow_run' } });
    await settle();
    expect(prompter.asked[0].signal.aborted).toBe(true);
    expect(stdout.text).toContain('interaction a claimed by bob until U\n');
    expect(stdout.text).not.toContain('interaction other');
    expect(stdout.text).toContain('interaction a was approved for this run by alice at T; your answer is no longer needed\n');
  });

  it('does not ask a replayed question that the gateway says is closed', async () => {
    const { prompter, emit } = setup();
    emit({ type: 'interaction.opened', data: { interaction: interaction('old') } });
    await settle();
    expect(prompter.asked).toEqual([]);
  });

  it('re-asks with the gateway message on 422 and gives up quietly on 409', async () => {
    const replies = [new ApiError(422, 'invalid_answer', 'invalid answer: text: too long'), new ApiError(409, 'conflict', 'already answered by zed at T')];
    const { prompter, stdout, openQuestion } = setup({ answer: () => Promise.reject(replies.shift() ?? new Error('unexpected')) });
    openQuestion(interaction('a'));
    await settle();
    prompter.asked[0].answer({ text: 'long' });
    await settle();
    expect(prompter.asked[1]).toMatchObject({ id: 'a', problem: 'invalid answer: text: too long' });
    prompter.asked[1].answer({ text: 'short' });
    await settle();
    expect(stdout.text).toContain('answer not accepted: already answered by zed at T');
    expect(prompter.asked).toHaveLength(2);
  });

  it('withdraws the prompt and exits 1 when the run fails; failures go to stderr', async () => {
    const { follower, prompter, stderr, emit, openQuestion } = setup();
    openQuestion(interaction('a'));
    await settle();
    emit({ type: 'run.failed', data: { reason: 'internal_error', error: 'lease lost' } });
    await expect(follower.outcome).resolves.toBe(1);
    expect(prompter.asked[0].signal.aborted).toBe(true);
    expect(stderr.text).toBe('✗ run failed (internal_error): lease lost\n');
  });

  it('in JSON mode prints every event as a line and nothing else on stdout', async () => {
    const { follower, stdout, emit } = setup({ json: true });
    emit({ type: 'message', data: { text: 'hi' } });
    emit({ type: 'run.finished', data: { reason: 'finish', summary: 's' } });
    await expect(follower.outcome).resolves.toBe(0);
    expect(stdout.text.trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['message', 'run.finished']);
  });

  describe('approvals another admin has claimed', () => {
    const approval = (id: string): Interaction => ({
      ...interaction(id, shellApprovalPrompt('make test')),
      waitReason: 'approval',
    });
    const claimConflict = (until: string) =>
      new ApiError(409, 'conflict', `claimed by bob until ${until}; only they may answer until then`, { claim: { subject: 'bob', until } });

    it('keeps a question refused for a claim, with the respond hint, and asks it again once the claim is released', async () => {
      const until = new Date(Date.now() + 300_000).toISOString();
      const replies: Array<Error | undefined> = [claimConflict(until), undefined];
      const sent: AnswerBody[] = [];
      const { prompter, stdout, open, openQuestion, claim } = setup({
        subject: 'cli',
        answer: (id, body) => {
          const reply = replies.shift();
          if (reply !== undefined) {
            return Promise.reject(reply);
          }
          sent.push(body);
          return Promise.resolve({ ...approval(id), status: 'answered' });
        },
      });
      openQuestion(approval('a'));
      await settle();
      // Claimed behind the follower's back: its event is still on the way when the answer is sent.
      open.set('a', { ...approval('a'), claim: { subject: 'bob', until } });
      prompter.asked[0].answer({ decision: 'allow_once' });
      await settle();
      expect(stdout.text).toContain(`answer not accepted: claimed by bob until ${until}`);
      expect(stdout.text).toContain(`interaction a is claimed by bob until ${until}; it is asked here again when the claim ends (or answer it then with: parley respond a --approve`);
      await settle();
      expect(prompter.asked).toHaveLength(1);

      claim('a', null);
      await settle();
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['a', 'a']);
      prompter.asked[1].answer({ decision: 'allow_once' });
      await settle();
      expect(sent).toEqual([{ decision: 'allow_once' }]);
    });

    it('withdraws a question another admin claims while it is asked, does not ask one claimed before, and asks both once released', async () => {
      const { prompter, stdout, openQuestion, claim } = setup({ subject: 'cli' });
      openQuestion(approval('a'));
      await settle();
      claim('a', 'bob');
      await settle();
      expect(prompter.asked[0].signal.aborted).toBe(true);
      expect(stdout.text).toContain('interaction a is claimed by bob until');

      const held = approval('b');
      openQuestion({ ...held, claim: { subject: 'bob', until: new Date(Date.now() + 300_000).toISOString() } });
      await settle();
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['a']);
      expect(stdout.text).toContain('interaction b is claimed by bob until');

      claim('b', null);
      claim('a', null);
      await settle();
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['a', 'b']);
      prompter.asked[1].answer({ decision: 'deny' });
      await settle();
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['a', 'b', 'a']);
    });

    it("asks our own claim, and asks again when another admin's claim lapses without an event", async () => {
      const { prompter, open, openQuestion } = setup({ subject: 'cli' });
      openQuestion({ ...approval('mine'), claim: { subject: 'cli', until: new Date(Date.now() + 300_000).toISOString() } });
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['mine']);
      prompter.asked[0].answer({ decision: 'allow_once' });
      await settle();

      const until = new Date(Date.now() + 100).toISOString();
      openQuestion({ ...approval('lapsing'), claim: { subject: 'bob', until } });
      await settle();
      expect(prompter.asked.map((q) => q.id)).toEqual(['mine']);
      await waitFor(() => prompter.asked.length === 2, 'the question to be asked once the claim lapsed', 5000);
      expect(prompter.asked[1].id).toBe('lapsing');
      expect(open.get('lapsing')?.claim?.until).toBe(until);
    });
  });

  it('exits 130 on interrupt', async () => {
    const { follower, stdout } = setup();
    follower.interrupt();
    await expect(follower.outcome).resolves.toBe(130);
    expect(stdout.text).toContain('run r1 keeps going (follow it with: parley logs r1 -f)');
  });
});
