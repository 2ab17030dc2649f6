import type { Actor, Answer, AuditEntry, AutoApproval, LogEntry, LogEntryOf, Outcome, Prompt } from '@parley/contracts';
import { approvalPrompt, argsDigest, describeCall } from '@parley/tools';
import { buildAudit } from './audit.builder';

const TENANT = 'acme';
const ALICE: Actor = { kind: 'user', subject: 'alice', role: 'member' };

const at = (second: number): string => `2025-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

function approvalQuestion(interactionId: string, tool: string, input: Record<string, unknown>, second: number, effectId = `eff-${interactionId}`): LogEntryOf<'question'> {
  return {
    type: 'question',
    toolUseId: `tu-${interactionId}`,
    effectId,
    interactionId,
    prompt: approvalPrompt(tool, input, describeCall(tool, input), 'main'),
    at: at(second),
  };
}

function plainQuestion(interactionId: string, prompt: Prompt, second: number): LogEntryOf<'question'> {
  return { type: 'question', toolUseId: `tu-${interactionId}`, effectId: `eff-${interactionId}`, interactionId, prompt, at: at(second) };
}

function answerEntry(interactionId: string, outcome: Outcome, by: Actor, second: number, answer?: Answer): LogEntryOf<'answer'> {
  return { type: 'answer', interactionId, outcome, ...(answer === undefined ? {} : { answer }), by, at: at(second) };
}

function toolResult(effectId: string, name: string, second: number, approval?: AutoApproval): LogEntryOf<'tool_result'> {
  return {
    type: 'tool_result',
    toolUseId: `tu-${effectId}`,
    effectId,
    name,
    content: '{"ok":true}',
    isError: false,
    ...(approval === undefined ? {} : { approval }),
    at: at(second),
  };
}

const shellInput = { command: 'git status' };

describe('buildAudit', () => {
  it('is empty for a log without approvals', () => {
    const log: LogEntry[] = [
      { type: 'task', text: 'do it', at: at(0) },
      { type: 'assistant', text: 'ok', toolCalls: [], at: at(1) },
    ];
    expect(buildAudit(TENANT, log)).toEqual([]);
  });

  it("records a person's allow_run: scope run, the approver with the tenant, the grants and the answer's digest", () => {
    const answer: Answer = {
      kind: 'tool_approval',
      decision: 'allow_run',
      input: shellInput,
      edited: false,
      grants: ['run|shell:cmd:git status'],
      argsDigest: 'digest-from-the-answer',
    };
    const log: LogEntry[] = [approvalQuestion('i1', 'shell', shellInput, 1, 'eff-1'), answerEntry('i1', 'answered', ALICE, 2, answer)];
    expect(buildAudit(TENANT, log)).toEqual<AuditEntry[]>([
      {
        at: at(2),
        tool: 'shell',
        effectId: 'eff-1',
        interactionId: 'i1',
        basis: 'person',
        decision: 'allow_run',
        scope: 'run',
        approver: { tenant: TENANT, kind: 'user', subject: 'alice', role: 'member' },
        grants: ['run|shell:cmd:git status'],
        edited: false,
        argsDigest: 'digest-from-the-answer',
      },
    ]);
  });

  it('records allow_stage with scope stage', () => {
    const answer: Answer = {
      kind: 'tool_approval',
      decision: 'allow_stage',
      input: shellInput,
      edited: false,
      grants: ['stage|main|shell:cmd:git status'],
      argsDigest: argsDigest(shellInput),
    };
    const [entry] = buildAudit(TENANT, [approvalQuestion('i1', 'shell', shellInput, 1), answerEntry('i1', 'answered', ALICE, 2, answer)]);
    expect(entry).toMatchObject({ basis: 'person', decision: 'allow_stage', scope: 'stage', grants: ['stage|main|shell:cmd:git status'] });
  });

  it('records allow_once with scope once, no grants, and whether the approver edited the call', () => {
    const edit = { path: 'notes/a.md', content: 'edited' };
    const answer: Answer = { kind: 'tool_approval', decision: 'allow_once', input: edit, edited: true, grants: [], argsDigest: argsDigest(edit) };
    const log: LogEntry[] = [
      approvalQuestion('i1', 'write_file', { path: 'notes/a.md', content: 'draft' }, 1),
      answerEntry('i1', 'answered', ALICE, 2, answer),
    ];
    expect(buildAudit(TENANT, log)).toEqual([
      expect.objectContaining({
        tool: 'write_file',
        basis: 'person',
        decision: 'allow_once',
        scope: 'once',
        grants: [],
        edited: true,
        argsDigest: argsDigest(edit),
      }),
    ]);
  });

  it('records a deny with its reason and no scope', () => {
    const admin: Actor = { kind: 'user', subject: 'bob', role: 'admin' };
    const answer: Answer = { kind: 'tool_approval', decision: 'deny', reason: 'not on prod', edited: false, grants: [], argsDigest: argsDigest(shellInput) };
    const [entry] = buildAudit(TENANT, [approvalQuestion('i1', 'shell', shellInput, 1), answerEntry('i1', 'answered', admin, 2, answer)]);
    expect(entry).toEqual({
      at: at(2),
      tool: 'shell',
      effectId: 'eff-i1',
      interactionId: 'i1',
      basis: 'person',
      decision: 'deny',
      scope: null,
      approver: { tenant: TENANT, kind: 'user', subject: 'bob', role: 'admin' },
      grants: [],
      edited: false,
      reason: 'not on prod',
      argsDigest: argsDigest(shellInput),
    });
  });

  it('leaves reason out when a deny has none', () => {
    const answer: Answer = { kind: 'tool_approval', decision: 'deny', edited: false, grants: [], argsDigest: argsDigest(shellInput) };
    const [entry] = buildAudit(TENANT, [approvalQuestion('i1', 'shell', shellInput, 1), answerEntry('i1', 'answered', ALICE, 2, answer)]);
    expect(entry).not.toHaveProperty('reason');
    expect(entry.decision).toBe('deny');
  });

  it('records a deadline as a deny on basis deadline, with the digest of the prompt input', () => {
    const input = { command: 'rm -rf build', extra: { b: 1, a: 2 } };
    const log: LogEntry[] = [approvalQuestion('i1', 'shell', input, 1), answerEntry('i1', 'expired', { kind: 'deadline' }, 5)];
    expect(buildAudit(TENANT, log)).toEqual([
      {
        at: at(5),
        tool: 'shell',
        effectId: 'eff-i1',
        interactionId: 'i1',
        basis: 'deadline',
        decision: 'deny',
        scope: null,
        approver: { tenant: TENANT, kind: 'deadline' },
        grants: [],
        edited: false,
        argsDigest: argsDigest(input),
      },
    ]);
  });

  it('records a cancel as a deny on basis cancelled', () => {
    const log: LogEntry[] = [
      approvalQuestion('i1', 'shell', shellInput, 1),
      answerEntry('i1', 'cancelled', { kind: 'system' }, 3),
    ];
    expect(buildAudit(TENANT, log)).toEqual([
      expect.objectContaining({
        basis: 'cancelled',
        decision: 'deny',
        scope: null,
        approver: { tenant: TENANT, kind: 'system' },
        grants: [],
        edited: false,
        argsDigest: argsDigest(shellInput),
      }),
    ]);
  });

  it('records a tool result that ran on a grant or a safe command as an allow with no approver', () => {
    const grant: AutoApproval = { basis: 'grant', covered: ['run|shell:cmd:git status'], argsDigest: 'g-digest' };
    const safe: AutoApproval = { basis: 'safe_command', covered: ['ls'], argsDigest: 's-digest' };
    const log: LogEntry[] = [toolResult('e1', 'shell', 1, grant), toolResult('e2', 'shell', 2, safe)];
    expect(buildAudit(TENANT, log)).toEqual<AuditEntry[]>([
      {
        at: at(1),
        tool: 'shell',
        effectId: 'e1',
        basis: 'grant',
        decision: 'allow',
        scope: null,
        approver: null,
        grants: ['run|shell:cmd:git status'],
        edited: false,
        argsDigest: 'g-digest',
      },
      {
        at: at(2),
        tool: 'shell',
        effectId: 'e2',
        basis: 'safe_command',
        decision: 'allow',
        scope: null,
        approver: null,
        grants: ['ls'],
        edited: false,
        argsDigest: 's-digest',
      },
    ]);
    expect(buildAudit(TENANT, log)[0]).not.toHaveProperty('interactionId');
  });

  it('ignores ordinary questions, their answers, and tool results without approval', () => {
    const log: LogEntry[] = [
      plainQuestion('q1', { kind: 'free_text', prompt: 'Which file?' }, 1),
      answerEntry('q1', 'answered', ALICE, 2, { kind: 'free_text', text: 'a.md' }),
      plainQuestion('q2', { kind: 'confirm', prompt: 'Sure?' }, 3),
      answerEntry('q2', 'expired', { kind: 'deadline' }, 4),
      toolResult('e1', 'read_file', 5),
      toolResult('e2', 'shell', 6),
    ];
    expect(buildAudit(TENANT, log)).toEqual([]);
  });

  it('ignores an answer to an interaction it never saw asked', () => {
    const answer: Answer = { kind: 'tool_approval', decision: 'allow_once', input: shellInput, edited: false, grants: [], argsDigest: 'd' };
    expect(buildAudit(TENANT, [answerEntry('ghost', 'answered', ALICE, 1, answer)])).toEqual([]);
  });

  it('an answer recorded twice yields one entry', () => {
    const answer: Answer = { kind: 'tool_approval', decision: 'allow_once', input: shellInput, edited: false, grants: [], argsDigest: argsDigest(shellInput) };
    const log: LogEntry[] = [
      approvalQuestion('i1', 'shell', shellInput, 1),
      answerEntry('i1', 'answered', ALICE, 2, answer),
      answerEntry('i1', 'answered', ALICE, 3, answer),
    ];
    const audit = buildAudit(TENANT, log);
    expect(audit).toHaveLength(1);
    expect(audit[0].at).toBe(at(2));
  });

  it('a question recorded twice before its answer yields one entry, from the first question', () => {
    const answer: Answer = { kind: 'tool_approval', decision: 'allow_once', input: shellInput, edited: false, grants: [], argsDigest: argsDigest(shellInput) };
    const log: LogEntry[] = [
      approvalQuestion('i1', 'shell', shellInput, 1, 'first-effect'),
      approvalQuestion('i1', 'shell', shellInput, 2, 'second-effect'),
      answerEntry('i1', 'answered', ALICE, 3, answer),
    ];
    expect(buildAudit(TENANT, log)).toEqual([expect.objectContaining({ effectId: 'first-effect', interactionId: 'i1' })]);
  });

  it('follows the order of the log, not of the questions', () => {
    const allow = (input: Record<string, unknown>): Answer => ({
      kind: 'tool_approval',
      decision: 'allow_once',
      input,
      edited: false,
      grants: [],
      argsDigest: argsDigest(input),
    });
    const writeInput = { path: 'a.md', content: 'x' };
    const log: LogEntry[] = [
      toolResult('e0', 'shell', 0, { basis: 'safe_command', covered: ['ls'], argsDigest: 'd0' }),
      approvalQuestion('i1', 'shell', shellInput, 1),
      approvalQuestion('i2', 'write_file', writeInput, 2),
      answerEntry('i2', 'answered', ALICE, 3, allow(writeInput)),
      toolResult('e-mid', 'http_request', 4, { basis: 'grant', covered: ['run|http_request:host:GET a.example'], argsDigest: 'd4' }),
      answerEntry('i1', 'expired', { kind: 'deadline' }, 5),
    ];
    const audit = buildAudit(TENANT, log);
    expect(audit.map((entry) => [entry.effectId, entry.basis, entry.at])).toEqual([
      ['e0', 'safe_command', at(0)],
      ['eff-i2', 'person', at(3)],
      ['e-mid', 'grant', at(4)],
      ['eff-i1', 'deadline', at(5)],
    ]);
  });

  it('uses the tenant it is given for every approver', () => {
    const answer: Answer = { kind: 'tool_approval', decision: 'deny', edited: false, grants: [], argsDigest: 'd' };
    const [entry] = buildAudit('other-tenant', [approvalQuestion('i1', 'shell', shellInput, 1), answerEntry('i1', 'answered', ALICE, 2, answer)]);
    expect(entry.approver).toEqual({ tenant: 'other-tenant', kind: 'user', subject: 'alice', role: 'member' });
  });
});
