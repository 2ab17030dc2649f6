import type { LogEntry } from '@parley/contracts';
import { recordedEnding } from './recorded.ending';

const at = '2026-01-01T00:00:00.000Z';
const turn = (name: string, input: Record<string, unknown>): LogEntry => ({ type: 'assistant', text: '', toolCalls: [{ toolUseId: 't1', effectId: 'fx1', name, input }], at });
const result = (content: string, isError = false): LogEntry => ({ type: 'tool_result', toolUseId: 't1', effectId: 'fx1', name: 'finish', content, isError, at });
const task: LogEntry = { type: 'task', text: 'go', at };

describe('recordedEnding', () => {
  it('ends a run whose finish result is in the log (its worker died before ending it)', () => {
    expect(recordedEnding([task, turn('finish', { summary: ' done ' }), result('{"ok":true}')])).toEqual({ status: 'finished', reason: 'finish', summary: 'done' });
  });

  it('ends a run whose needs_input result is in the log', () => {
    expect(recordedEnding([task, turn('needs_input', { missing: 'the budget' }), result('{"ok":true,"reported":true}')])).toEqual({
      status: 'finished',
      reason: 'needs_input',
      summary: 'the budget',
    });
  });

  it('goes on when the finish was refused or sent back for revision, or has no result yet', () => {
    expect(recordedEnding([task, turn('finish', { summary: 'x' }), result('{"ok":false,"error":"no"}', true)])).toBeNull();
    expect(recordedEnding([task, turn('finish', { summary: 'x' }), result('{"ok":false,"status":"revise"}')])).toBeNull();
    expect(recordedEnding([task, turn('finish', { summary: 'x' })])).toBeNull();
    expect(recordedEnding([task, turn('write_file', { path: 'a', content: 'b' }), result('{"ok":true}')])).toBeNull();
    expect(recordedEnding([task])).toBeNull();
  });
});
