import type { AuditEntry, Interaction } from '@parley/contracts';
import { formatApprovalsTable, formatApprover, formatAuditTable, formatClaimCell, formatSafeCommandsTable } from './listing.format';

const now = new Date('2030-01-01T12:00:00.000Z');

const approval: Interaction = {
  id: 'a1',
  tenant: 'dev',
  runId: 'r1',
  owner: 'cli',
  agent: 'coder',
  waitReason: 'approval',
  prompt: {
    kind: 'tool_approval',
    prompt: 'Run shell command: git push',
    tool: 'shell',
    input: { command: 'git push' },
    telling: { label: 'command', value: 'git push' },
    stage: 'build',
    grant: { reusable: true, keys: ['shell:cmd:git push'], description: '`git push` (any arguments)' },
  },
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

  it('names the approver of a stopped run "stopped"', () => {
    expect(formatApprover({ ...entry, basis: 'cancelled', decision: 'deny', approver: { tenant: 'dev', kind: 'system' } })).toBe('stopped');
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
});
