import type { LogEntry } from '@parley/contracts';
import { buildConversation } from './conversation';

const at = '2026-01-01T00:00:00.000Z';
const task: LogEntry = { type: 'task', text: 'Do it', at };
const ask = (effectId: string, interactionId: string): LogEntry[] => [
  { type: 'assistant', text: 'Asking.', toolCalls: [{ toolUseId: 'tu_1', effectId, name: 'ask_user_text', input: { question: 'Q?' } }], at },
  { type: 'question', toolUseId: 'tu_1', effectId, interactionId, prompt: { kind: 'free_text', prompt: 'Q?' }, at },
];
const answer = (interactionId: string, text: string): LogEntry => ({
  type: 'answer',
  interactionId,
  outcome: 'answered',
  answer: { kind: 'free_text', text },
  by: { kind: 'user', subject: 'alice' },
  at,
});

describe('buildConversation', () => {
  it('starts with the task and nothing open', () => {
    const conversation = buildConversation([task]);
    expect(conversation).toMatchObject({ iterations: 0, questionsAsked: 0, openTurn: null, endedWithoutTools: false });
    expect(conversation.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Do it' }] }]);
  });

  it('sends a model turn of only whitespace text without that text block (the Anthropic API refuses one)', () => {
    const conversation = buildConversation([
      task,
      { type: 'assistant', text: '\n\n', toolCalls: [{ toolUseId: 'tu_1', effectId: 'fx1', name: 'read_file', input: { path: 'a' } }], at },
      { type: 'tool_result', toolUseId: 'tu_1', effectId: 'fx1', name: 'read_file', content: '{"ok":true}', isError: false, at },
      { type: 'assistant', text: ' ', toolCalls: [], at },
    ]);
    expect(conversation.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'read_file', input: { path: 'a' } }] });
    expect(conversation.messages[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: '(no text)' }] });
  });

  it('leaves a turn open while its question has no answer', () => {
    const conversation = buildConversation([task, ...ask('fx1', 'ix1')]);
    expect(conversation.openTurn?.calls[0]).toMatchObject({ call: { effectId: 'fx1' }, question: { interactionId: 'ix1' } });
    expect(conversation.openTurn?.calls[0].result).toBeUndefined();
    expect(conversation.messages).toHaveLength(1);
    expect(conversation.questionsAsked).toBe(1);
  });

  it('delivers a recorded answer once, as the call result, even when entries were recorded twice', () => {
    const entries = [task, ...ask('fx1', 'ix1'), answer('ix1', 'first'), answer('ix1', 'again'), ...ask('fx1', 'ix2').slice(1)];
    const conversation = buildConversation(entries);
    expect(conversation.openTurn).toBeNull();
    expect(conversation.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Do it' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Asking.' }, { type: 'tool_use', id: 'tu_1', name: 'ask_user_text', input: { question: 'Q?' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: '{"ok":true,"answer":"first"}' }] },
    ]);
  });

  it('renders an expired question as no answer, not as an error of the model', () => {
    const expired: LogEntry = { type: 'answer', interactionId: 'ix1', outcome: 'expired', by: { kind: 'deadline' }, at };
    const [, , result] = buildConversation([task, ...ask('fx1', 'ix1'), expired]).messages;
    expect(result.content[0]).toMatchObject({ type: 'tool_result', content: expect.stringContaining('no answer') });
    expect((result.content[0] as { is_error?: boolean }).is_error).toBeUndefined();
  });

  it('keeps tool results by effect id and marks errors', () => {
    const entries: LogEntry[] = [
      task,
      { type: 'assistant', text: '', toolCalls: [{ toolUseId: 'a', effectId: 'fx1', name: 'read_file', input: { path: 'x' } }], at },
      { type: 'tool_result', toolUseId: 'a', effectId: 'fx1', name: 'read_file', content: '{"ok":false}', isError: true, at },
      { type: 'assistant', text: 'Done.', toolCalls: [], at },
    ];
    const conversation = buildConversation(entries);
    expect(conversation).toMatchObject({ iterations: 2, endedWithoutTools: true, lastText: 'Done.', openTurn: null });
    expect(conversation.messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'a', content: '{"ok":false}', is_error: true });
  });

  it("puts a person's mid-run message after the tool results of the turn it followed, and gives the loop something to answer", () => {
    const said: LogEntry = { type: 'user_message', messageId: 'm1', text: 'Use blue', by: { kind: 'user', subject: 'alice' }, at };
    const conversation = buildConversation([task, ...ask('fx1', 'ix1'), answer('ix1', 'green'), said]);
    expect(conversation.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'tu_1', content: expect.stringContaining('green') },
        { type: 'text', text: 'Use blue' },
      ],
    });
    const quiet: LogEntry = { type: 'assistant', text: 'Done talking.', toolCalls: [], at };
    expect(buildConversation([task, quiet]).endedWithoutTools).toBe(true);
    expect(buildConversation([task, quiet, said]).endedWithoutTools).toBe(false);
    expect(buildConversation([task, quiet, said]).messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Use blue' }] });
  });

  it('tracks the stage, its checkpoints and the latest document of each region', () => {
    const conversation = buildConversation([
      task,
      { type: 'stage', from: null, to: 'plan', at },
      { type: 'document', region: 'plan', text: 'v1', source: 'model', origin: 'fx1', at },
      { type: 'checkpoint', effectId: 'fx1', interactionId: 'ix1', ref: { stage: 'plan', point: 'p', round: 0, purpose: 'edit' }, prompt: { kind: 'edit_text', prompt: 'Edit', document: 'v1' }, at },
      { type: 'answer', interactionId: 'ix1', outcome: 'answered', answer: { kind: 'edit_text', text: 'v2' }, by: { kind: 'user' }, at },
      { type: 'document', region: 'plan', text: 'v2', source: 'person', origin: 'ix1', at },
    ]);
    expect(conversation.stage).toBe('plan');
    expect(conversation.documents.get('plan')).toBe('v2');
    expect(conversation.visit).toEqual([expect.objectContaining({ adopted: true, answer: expect.objectContaining({ interactionId: 'ix1' }) })]);
    expect(buildConversation([task, { type: 'stage', from: null, to: 'plan', at }, { type: 'stage', from: 'plan', to: 'build', at }]).visit).toEqual([]);
  });
});
