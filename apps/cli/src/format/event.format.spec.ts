import { formatEventLine, formatInjected, formatProceedWhy, formatStageMove, formatToolCall, formatToolResult } from './event.format';

const envelope = { tenant: 'dev', runId: 'r1', owner: 'cli', at: '2030-01-01T10:04:05.000Z' };

describe('event formatting', () => {
  it('formats tool calls and results briefly', () => {
    expect(formatToolCall('write_file', { path: 'a.md', content: 'x'.repeat(200) })).toMatch(/^→ write_file \{"path":"a.md","content":"x+…$/);
    expect(formatToolResult('read_file', false, 'one\ntwo')).toBe('← read_file: one two');
    expect(formatToolResult('read_file', true, 'ENOENT')).toBe('✗ read_file failed: ENOENT');
  });

  it('names stage moves, checkpoints passed without a person and injected messages', () => {
    expect(formatStageMove('build', 'plan')).toBe('stage build (from plan)');
    expect(formatStageMove('plan', null)).toBe('stage plan');
    expect(formatProceedWhy('deadline')).toBe('nobody answered before the deadline');
    expect(formatProceedWhy('not_required')).toBe('it is not required in an unattended run');
    expect(formatInjected(1)).toBe('1 message passed to the agent');
  });

  it.each([
    [{ type: 'run.status', data: { status: 'waiting', waitReason: 'question' } }, '#3 10:04:05 run.status           waiting (question)'],
    [{ type: 'message', data: { text: 'two\nlines' } }, '#3 10:04:05 message              two\n    lines'],
    [{ type: 'run.finished', data: { reason: 'finish', summary: 'done' } }, '#3 10:04:05 run.finished         finish: done'],
    [{ type: 'run.failed', data: { reason: 'model_error', error: 'boom' } }, '#3 10:04:05 run.failed           model_error: boom'],
    [{ type: 'run.cancelled', data: { reason: 'cancelled', by: { kind: 'user', subject: 'ann' } } }, '#3 10:04:05 run.cancelled        cancelled, by ann'],
    [
      { type: 'interaction.resolved', data: { interactionId: 'i1', outcome: 'answered', by: { kind: 'user', subject: 'bo' }, at: 'T' } },
      '#3 10:04:05 interaction.resolved i1 answered by bo at T',
    ],
    [
      { type: 'interaction.resolved', data: { interactionId: 'a1', outcome: 'answered', by: { kind: 'user', subject: 'alice' }, at: 'T', decision: 'allow_run' } },
      '#3 10:04:05 interaction.resolved a1 approved for this run by alice at T',
    ],
    [
      { type: 'interaction.resolved', data: { interactionId: 'a1', outcome: 'expired', by: { kind: 'deadline' }, at: 'T', decision: 'deny' } },
      '#3 10:04:05 interaction.resolved a1 denied by the deadline at T',
    ],
    [
      { type: 'interaction.claimed', data: { interactionId: 'a1', claim: { subject: 'bob', until: 'U' }, by: { kind: 'user', subject: 'bob' } } },
      '#3 10:04:05 interaction.claimed  a1 claimed by bob until U',
    ],
    [
      { type: 'interaction.claimed', data: { interactionId: 'a1', claim: null, by: { kind: 'user', subject: 'bob' } } },
      '#3 10:04:05 interaction.claimed  a1 claim released by bob',
    ],
    [{ type: 'run.status', data: { status: 'waiting', waitReason: 'child', stage: 'build' } }, '#3 10:04:05 run.status           waiting (child), stage build'],
    [{ type: 'stage.entered', data: { stage: 'plan', from: null } }, '#3 10:04:05 stage.entered        plan (first stage)'],
    [{ type: 'stage.entered', data: { stage: 'build', from: 'plan' } }, '#3 10:04:05 stage.entered        build (from plan)'],
    [
      { type: 'checkpoint.proceeded', data: { stage: 'plan', point: 'review', why: 'unattended' } },
      '#3 10:04:05 checkpoint.proceeded checkpoint review of stage plan proceeded without a person: the run is unattended',
    ],
    [
      { type: 'checkpoint.proceeded', data: { stage: 'plan', point: 'review', why: 'round_limit' } },
      '#3 10:04:05 checkpoint.proceeded checkpoint review of stage plan proceeded without a person: the limit of revision rounds was reached',
    ],
    [
      { type: 'message.received', data: { messageId: 'm1', text: 'use\nthe staging db', by: { kind: 'user', subject: 'alice' } } },
      '#3 10:04:05 message.received     m1 from alice: "use the staging db"',
    ],
    [{ type: 'message.injected', data: { messageIds: ['m1', 'm2'] } }, '#3 10:04:05 message.injected     2 messages passed to the agent: m1, m2'],
    [{ type: 'message.discarded', data: { messageIds: ['m3'] } }, '#3 10:04:05 message.discarded    1 message never read: the run ended first: m3'],
    [{ type: 'child.started', data: { childRunId: 'c1', agent: 'researcher' } }, '#3 10:04:05 child.started        sub-agent researcher: run c1'],
    [
      {
        type: 'interaction.opened',
        data: {
          interaction: {
            id: 'i1',
            tenant: 'dev',
            runId: 'r1',
            owner: 'cli',
            agent: 'echo',
            waitReason: 'checkpoint',
            prompt: { kind: 'confirm', prompt: 'Plan ok?' },
            checkpoint: { stage: 'plan', point: 'review', round: 2, purpose: 'decide' },
            status: 'open',
            createdAt: 'T',
            deadline: null,
          },
        },
      },
      '#3 10:04:05 interaction.opened   confirm i1 (checkpoint review of stage plan, round 2): Plan ok?',
    ],
    [{ type: 'brand.new', data: {} }, '#3 10:04:05 brand.new            (not understood by this CLI)'],
  ])('formats %j', (event, line) => {
    expect(formatEventLine({ seq: 3, ...envelope, ...event })).toBe(line);
  });
});
