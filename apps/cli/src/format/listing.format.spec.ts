import type { AuditEntry, Interaction, Run, ScheduleInfo } from '@parley/contracts';
import { shellApprovalPrompt } from '../testing/interaction.fixture';
import {
  formatApprovalsTable,
  formatApprover,
  formatAuditTable,
  formatClaimCell,
  formatNext,
  formatRunsTable,
  formatSafeCommandsTable,
  formatSchedulesTable,
} from './listing.format';

const now = new Date('2030-01-01T12:00:00.000Z');

const approval: Interaction = {
  id: 'a1',
  tenant: 'dev',
  runId: 'r1',
  owner: 'cli',
  agent: 'coder',
  waitReason: 'approval',
  prompt: shellApprovalPrompt('git push', { reusable: true, keys: ['shell:cmd:git push'], description: '`git push` (any arguments)' }),
  status: 'open',
  createdAt: '2030-01-01T11:55:00.000Z',
  deadline: '2030-01-01T12:10:00.000Z',
};

const entry: AuditEntry = {
  at: '2030-01-01T10:04:05.123Z',
  tool: 'shell',
  effectId: 'e1',
  interactionId: 'a1',
  basis: 'person',
  decision: 'allow_run',
  scope: 'run',
  approver: { tenant: 'dev', kind: 'user', subject: 'alice', role: 'admin' },
  grants: ['run|shell:cmd:git push'],
  edited: true,
  argsDigest: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
};

describe('listing formatting', () => {
  it('lists approvals with age, deadline countdown, agent, tool, what the call does and its claim', () => {
    const claimed = { ...approval, id: 'a2', deadline: null, claim: { subject: 'bob', until: '2030-01-01T12:04:00.000Z' } };
    expect(formatApprovalsTable([approval, claimed], now)).toBe(
      [
        'ID  AGE     DEADLINE  AGENT  TOOL   WHAT      CLAIM',
        'a1  5m ago  in 10m    coder  shell  git push  -',
        'a2  5m ago  none      coder  shell  git push  bob (4m left)',
        '',
      ].join('\n'),
    );
  });

  it('marks a claim whose time is up', () => {
    expect(formatClaimCell({ subject: 'bob', until: '2030-01-01T11:00:00.000Z' }, now)).toBe('bob (lapsed)');
    expect(formatClaimCell(undefined, now)).toBe('-');
  });

  it('prints the audit with short digests and who decided', () => {
    const deadline: AuditEntry = { ...entry, basis: 'deadline', decision: 'deny', scope: null, approver: { tenant: 'dev', kind: 'deadline' }, grants: [], edited: false };
    const safe: AuditEntry = { ...entry, basis: 'safe_command', decision: 'allow', scope: null, approver: null, edited: false, grants: ['ls'] };
    expect(formatAuditTable([entry, deadline, safe])).toBe(
      [
        'TIME (UTC)           TOOL   DECISION   SCOPE  BASIS         APPROVER     EDITED  DIGEST',
        '2030-01-01 10:04:05  shell  allow_run  run    person        alice/admin  yes     0123456789ab',
        '2030-01-01 10:04:05  shell  deny       -      deadline      deadline     no      0123456789ab',
        '2030-01-01 10:04:05  shell  allow      -      safe_command  -            no      0123456789ab',
        '',
      ].join('\n'),
    );
  });

  it('names the approver of a stopped run "stopped", and a decision by an unattended policy "policy"', () => {
    expect(formatApprover({ ...entry, basis: 'cancelled', decision: 'deny', approver: { tenant: 'dev', kind: 'system' } })).toBe('stopped');
    expect(formatApprover({ ...entry, basis: 'policy', decision: 'deny', scope: null, approver: null })).toBe('policy');
    expect(formatApprover({ ...entry, approver: { tenant: 'dev', kind: 'user', subject: 'ann' } })).toBe('ann');
  });

  it('lists safe commands with their source and note', () => {
    expect(
      formatSafeCommandsTable([
        { entry: 'ls', source: 'default', note: 'lists directories' },
        { entry: 'npm test', source: 'agent:coder' },
      ]),
    ).toBe(['ENTRY     SOURCE       NOTE', 'ls        default      lists directories', 'npm test  agent:coder', ''].join('\n'));
  });

  it('lists runs with their stage and trigger, marking unattended ones', () => {
    const run: Run = {
      id: 'r1',
      tenant: 'dev',
      owner: 'cli',
      agent: 'coder',
      task: 't',
      trigger: 'chat',
      status: 'running',
      unattended: false,
      createdAt: '2030-01-01T11:00:00.000Z',
      updatedAt: '2030-01-01T11:59:30.000Z',
    };
    const parent: Run = { ...run, id: 'r2', trigger: 'schedule', unattended: true, status: 'waiting', waitReason: 'child', stage: 'research' };
    const child: Run = { ...run, id: 'r3', agent: 'researcher', trigger: 'delegate', unattended: true, parentRunId: 'r2' };
    expect(formatRunsTable([run, parent, child], now)).toBe(
      [
        'ID  AGENT       STATUS   WAIT   STAGE     TRIGGER                UPDATED',
        'r1  coder       running  -      -         chat                   30s ago',
        'r2  coder       waiting  child  research  schedule (unattended)  30s ago',
        'r3  researcher  running  -      -         delegate (unattended)  30s ago',
        '',
      ].join('\n'),
    );
  });

  it('lists schedules with the timezone, when each fires next and the task cut short', () => {
    const daily: ScheduleInfo = { agent: 'reporter', name: 'daily', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', owner: 'ops', task: 'Write the daily report', next: '2030-01-01T15:00:00.000Z' };
    const pending: ScheduleInfo = { agent: 'cleaner', name: 'nightly', cron: '0 2 * * *', owner: 'scheduler', task: `Tidy ${'x'.repeat(100)}`, next: null };
    const lines = formatSchedulesTable([daily, pending], now).split('\n');
    expect(lines[0]).toBe('AGENT     NAME     CRON                         OWNER      NEXT                             TASK');
    expect(lines[1]).toBe('reporter  daily    0 9 * * 1-5 (Europe/Berlin)  ops        in 3h (2030-01-01 15:00:00 UTC)  Write the daily report');
    expect(lines[2]).toBe(`cleaner   nightly  0 2 * * *                    scheduler  not scheduled yet                Tidy ${'x'.repeat(54)}…`);
    expect(formatNext('2030-01-01T11:00:00.000Z', now)).toBe('now (2030-01-01 11:00:00 UTC)');
    expect(formatNext('whenever', now)).toBe('whenever');
  });
});
