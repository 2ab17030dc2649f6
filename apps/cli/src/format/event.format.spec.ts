import { formatEventLine, formatToolCall, formatToolResult } from './event.format';

const envelope = { tenant: 'dev', runId: 'r1', owner: 'cli', at: '2030-01-01T10:04:05.000Z' };

describe('event formatting', () => {
  it('formats tool calls and results briefly', () => {
    expect(formatToolCall('write_file', { path: 'a.md', content: 'x'.repeat(200) })).toMatch(/^→ write_file \{"path":"a.md","content":"x+…$/);
    expect(formatToolResult('read_file', false, 'one\ntwo')).toBe('← read_file: one two');
    expect(formatToolResult('read_file', true, 'ENOENT')).toBe('✗ read_file failed: ENOENT');
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
    [{ type: 'brand.new', data: {} }, '#3 10:04:05 brand.new            (not understood by this CLI)'],
  ])('formats %j', (event, line) => {
    expect(formatEventLine({ seq: 3, ...envelope, ...event })).toBe(line);
  });
});
