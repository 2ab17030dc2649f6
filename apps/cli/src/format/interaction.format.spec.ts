import type { Interaction, Prompt } from '@parley/contracts';
import {
  formatActor,
  formatAnswer,
  formatCheckpointRef,
  formatClaim,
  formatDecision,
  formatInteractionBlock,
  formatOptionsInline,
  formatResolution,
  respondHint,
  summarizeInteraction,
} from './interaction.format';
import { interactionFixture } from '../testing/interaction.fixture';

const base: Interaction = interactionFixture({
  prompt: { kind: 'multiple_choice', prompt: 'Colour?', options: [{ label: 'Red' }, { label: 'Blue', description: 'cool' }], multi: true },
  createdAt: '2030-01-01T00:00:00.000Z',
});

const write: Prompt = {
  kind: 'tool_approval',
  prompt: 'write_file notes/a.md',
  tool: 'write_file',
  input: { path: 'notes/a.md', content: 'hello' },
  telling: { label: 'path', value: 'notes/a.md' },
  stage: 'draft',
  grant: { reusable: true, keys: ['write_file:path:notes/a.md'], description: 'write_file on notes/a.md', directories: ['', 'notes/'] },
};
const approval: Interaction = { ...base, id: 'a1', waitReason: 'approval', prompt: write };

describe('interaction formatting', () => {
  it('summarizes for `respond --json`', () => {
    expect(summarizeInteraction(base)).toEqual({ id: 'i1', runId: 'r1', kind: 'multiple_choice', prompt: 'Colour?', options: ['Red', 'Blue'], deadline: null, agent: 'echo' });
    expect(summarizeInteraction({ ...base, prompt: { kind: 'confirm', prompt: 'Ok?' } }).options).toEqual([]);
    const claim = { subject: 'bob', until: '2030-01-01T00:05:00.000Z' };
    expect(summarizeInteraction({ ...approval, claim })).toEqual({
      id: 'a1',
      runId: 'r1',
      kind: 'tool_approval',
      prompt: 'write_file notes/a.md',
      options: [],
      deadline: null,
      agent: 'echo',
      tool: 'write_file',
      claim,
    });
  });

  it('names approval decisions, resolutions and claims', () => {
    expect(formatDecision('allow_stage')).toBe('approved for this stage');
    expect(formatResolution('answered', { kind: 'user', subject: 'alice' }, 'T', 'allow_run')).toBe('approved for this run by alice at T');
    expect(formatResolution('answered', { kind: 'user', subject: 'alice' }, 'T', 'allow_once')).toBe('approved once by alice at T');
    expect(formatResolution('answered', { kind: 'user', subject: 'bo' }, 'T', 'deny')).toBe('denied by bo at T');
    expect(formatResolution('expired', { kind: 'deadline' }, 'T', 'deny')).toBe('denied by the deadline at T');
    expect(formatResolution('cancelled', { kind: 'system' }, 'T', 'deny')).toBe('denied: cancelled by the system at T');
    expect(formatClaim({ subject: 'bob', until: 'U' })).toBe('claimed by bob until U');
  });

  it('formats recorded approvals', () => {
    const recorded = { kind: 'tool_approval' as const, edited: false, grants: [], argsDigest: 'abc' };
    expect(formatAnswer({ ...recorded, decision: 'allow_once', input: {} })).toBe('approved once');
    expect(formatAnswer({ ...recorded, decision: 'allow_run', input: {}, edited: true, grants: ['run|k'] })).toBe('approved for this run, with edited arguments');
    expect(formatAnswer({ ...recorded, decision: 'deny', reason: 'not\nnow' })).toBe('denied: "not now"');
    expect(formatAnswer({ ...recorded, decision: 'deny' })).toBe('denied');
  });

  it('renders an approval block with its claim and the folders a grant may cover', () => {
    const text = formatInteractionBlock({ ...approval, deadline: '2030-01-01T00:30:00.000Z', claim: { subject: 'bob', until: 'U' } }, new Date('2030-01-01T00:00:00.000Z'));
    expect(text).toBe(
      [
        '',
        '? write_file notes/a.md',
        '  (tool_approval · interaction a1 · expires in 30m · claimed by bob until U)',
        '  Tool: write_file',
        '  Path: notes/a.md',
        '  Arguments:',
        '    {',
        '      "path": "notes/a.md",',
        '      "content": "hello"',
        '    }',
        '  For this stage (draft): allows write_file on notes/a.md while the run is in this stage.',
        '  For this run: allows write_file on notes/a.md for the rest of the run.',
        '  To grant a folder instead ("" (whole workspace), notes/): parley respond a1 --approve --stage|--run --dir <folder>',
        '  o) allow once   s) allow for this stage   r) allow for this run   e) edit arguments   d) deny',
        '',
      ].join('\n'),
    );
  });

  it('names actors and outcomes', () => {
    expect(formatActor({ kind: 'user', subject: 'ann' })).toBe('ann');
    expect(formatActor({ kind: 'deadline' })).toBe('the deadline');
    expect(formatResolution('answered', { kind: 'user', subject: 'ann' }, 'T')).toBe('answered by ann at T');
    expect(formatResolution('expired', { kind: 'deadline' }, 'T')).toBe('expired at T');
    expect(formatResolution('cancelled', { kind: 'system' }, 'T')).toBe('cancelled by the system at T');
  });

  it('formats recorded answers', () => {
    expect(formatAnswer({ kind: 'multiple_choice', choices: [1, 0], labels: ['Blue', 'Red'] })).toBe('1) Blue, 0) Red');
    expect(formatAnswer({ kind: 'confirm', confirmed: false })).toBe('no');
    expect(formatAnswer({ kind: 'review', approved: true, feedback: 'ok' })).toBe('approved: "ok"');
    expect(formatAnswer({ kind: 'free_text', text: 'a\nb' })).toBe('"a b"');
    expect(formatAnswer(undefined)).toBe('(no answer)');
  });

  it('lists options inline and hints how to respond', () => {
    expect(formatOptionsInline(base.prompt)).toBe('0) Red | 1) Blue (multi)');
    expect(respondHint(base)).toBe('parley respond i1 --choice N[,N...]');
    expect(respondHint({ ...base, prompt: { kind: 'review', prompt: 'r', markdown: 'm' } })).toBe('parley respond i1 --approve|--deny [--feedback "<text>"]');
    expect(respondHint(approval)).toBe(`parley respond a1 --approve|--edit '<json>' [--stage|--run]  or  --deny [--reason "<text>"]`);
  });

  it('renders the prompt block', () => {
    expect(formatInteractionBlock({ ...base, deadline: '2030-01-01T00:30:00.000Z' }, new Date('2030-01-01T00:00:00.000Z'))).toBe(
      ['', '? Colour?', '  (multiple_choice · interaction i1 · expires in 30m)', '  0) Red', '  1) Blue — cool', '  Pick one or more numbers, separated by commas.', ''].join('\n'),
    );
  });

  it('heads a checkpoint prompt with its point, stage and round', () => {
    const checkpoint: Interaction = {
      ...base,
      waitReason: 'checkpoint',
      prompt: { kind: 'confirm', prompt: 'Is the plan good?' },
      checkpoint: { stage: 'plan', point: 'review', round: 1, purpose: 'decide' },
    };
    expect(formatInteractionBlock(checkpoint, new Date('2030-01-01T00:00:00.000Z'))).toBe(
      ['', '── checkpoint review of stage plan, round 1', '? Is the plan good?', '  (confirm · interaction i1)', '  Answer y or n.', ''].join('\n'),
    );
    expect(summarizeInteraction(checkpoint)).toMatchObject({ kind: 'confirm', checkpoint: { stage: 'plan', point: 'review', round: 1, purpose: 'decide' } });
  });

  it('shows an edit-purpose checkpoint as a document to edit', () => {
    const edit: Interaction = {
      ...base,
      waitReason: 'checkpoint',
      prompt: { kind: 'edit_text', prompt: "Edit the stage's output", document: 'draft' },
      checkpoint: { stage: 'write', point: 'polish', round: 0, purpose: 'edit' },
    };
    expect(formatCheckpointRef({ stage: 'write', point: 'polish', round: 0, purpose: 'edit' })).toBe('checkpoint polish of stage write, round 0 (edit)');
    const block = formatInteractionBlock(edit, new Date('2030-01-01T00:00:00.000Z'));
    expect(block.split('\n').slice(0, 5)).toEqual(['', '── checkpoint polish of stage write, round 0 (edit)', "? Edit the stage's output", '  (edit_text · interaction i1)', '─'.repeat(40)]);
    expect(block).toContain('Type the replacement text');
  });
});
