import type { AgentSummary, AuditEntry, Interaction, Run, ScheduleInfo } from '@parley/contracts';
import type { SafeCommand } from '../api/api.client';
import { formatOptionsInline } from './interaction.format';
import { renderTable } from './table';
import { formatAge, formatDeadline, formatDuration, formatUntil } from './time';

export function formatRunsTable(runs: Run[], now: Date): string {
  return renderTable(
    [{ header: 'ID' }, { header: 'AGENT', max: 24 }, { header: 'STATUS' }, { header: 'WAIT' }, { header: 'STAGE', max: 24 }, { header: 'TRIGGER' }, { header: 'UPDATED' }],
    runs.map((run) => [run.id, run.agent, run.status, run.waitReason ?? '-', run.stage ?? '-', formatTrigger(run), formatAge(run.updatedAt, now)]),
  );
}

/** Who started the run, marked when nobody watches it: "chat", "schedule (unattended)". */
export function formatTrigger(run: Pick<Run, 'trigger' | 'unattended'>): string {
  return run.unattended ? `${run.trigger} (unattended)` : run.trigger;
}

/** The agents' cron schedules: when each fires next, and the task it starts. */
export function formatSchedulesTable(schedules: ScheduleInfo[], now: Date): string {
  return renderTable(
    [{ header: 'AGENT', max: 24 }, { header: 'NAME', max: 24 }, { header: 'CRON', max: 50 }, { header: 'OWNER', max: 24 }, { header: 'NEXT' }, { header: 'TASK', max: 60 }],
    schedules.map((schedule) => [
      schedule.agent,
      schedule.name,
      schedule.timezone === undefined ? schedule.cron : `${schedule.cron} (${schedule.timezone})`,
      schedule.owner,
      formatNext(schedule.next, now),
      schedule.task,
    ]),
  );
}

/** "in 3h (2030-01-01 09:00:00 UTC)"; "not scheduled yet" when the scheduler has not registered it. */
export function formatNext(iso: string | null, now: Date): string {
  if (iso === null) {
    return 'not scheduled yet';
  }
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : `${formatUntil(iso, now)} (${formatTimestamp(iso)} UTC)`;
}

export function formatAgentsTable(agents: AgentSummary[]): string {
  return renderTable(
    [{ header: 'NAME' }, { header: 'PROVIDER' }, { header: 'TOOLS', max: 50 }, { header: 'DESCRIPTION', max: 80 }],
    agents.map((agent) => [agent.name, agent.provider, agent.tools.join(',') || '-', agent.description || '-']),
  );
}

export function formatInteractionsTable(interactions: Interaction[], now: Date): string {
  return renderTable(
    [
      { header: 'ID' },
      { header: 'RUN' },
      { header: 'KIND' },
      { header: 'PROMPT', max: 50 },
      { header: 'OPTIONS', max: 50 },
      { header: 'DEADLINE' },
    ],
    interactions.map((interaction) => [
      interaction.id,
      interaction.runId,
      interaction.prompt.kind,
      interaction.prompt.prompt,
      formatOptionsInline(interaction.prompt) || '-',
      formatDeadline(interaction.deadline, now),
    ]),
  );
}

/** The approval queue: what each call does and who (if anyone) has claimed it. */
export function formatApprovalsTable(approvals: Interaction[], now: Date): string {
  return renderTable(
    [
      { header: 'ID' },
      { header: 'AGE' },
      { header: 'DEADLINE' },
      { header: 'AGENT', max: 24 },
      { header: 'TOOL' },
      { header: 'WHAT', max: 60 },
      { header: 'CLAIM', max: 40 },
    ],
    approvals.map((interaction) => {
      const { prompt } = interaction;
      return [
        interaction.id,
        formatAge(interaction.createdAt, now),
        formatDeadline(interaction.deadline, now),
        interaction.agent,
        prompt.kind === 'tool_approval' ? prompt.tool : prompt.kind,
        prompt.kind === 'tool_approval' ? prompt.telling.value : prompt.prompt,
        formatClaimCell(interaction.claim, now),
      ];
    }),
  );
}

/** "bob (4m left)"; a claim whose time is up no longer holds anyone back. */
export function formatClaimCell(claim: Interaction['claim'], now: Date): string {
  if (claim === undefined) {
    return '-';
  }
  const until = Date.parse(claim.until);
  if (Number.isNaN(until)) {
    return `${claim.subject} until ${claim.until}`;
  }
  const seconds = (until - now.getTime()) / 1000;
  return seconds <= 0 ? `${claim.subject} (lapsed)` : `${claim.subject} (${formatDuration(seconds)} left)`;
}

export function formatSafeCommandsTable(commands: SafeCommand[]): string {
  return renderTable(
    [{ header: 'ENTRY', max: 60 }, { header: 'SOURCE' }, { header: 'NOTE', max: 80 }],
    commands.map((command) => [command.entry, command.source, command.note ?? '']),
  );
}

/** Digests are shown by their first 12 hex characters, like short commit ids; --json has them whole. */
export const SHORT_DIGEST = 12;

export function formatAuditTable(entries: AuditEntry[]): string {
  return renderTable(
    [
      { header: 'TIME (UTC)' },
      { header: 'TOOL' },
      { header: 'DECISION' },
      { header: 'SCOPE' },
      { header: 'BASIS' },
      { header: 'APPROVER', max: 40 },
      { header: 'EDITED' },
      { header: 'DIGEST' },
    ],
    entries.map((entry) => [
      formatTimestamp(entry.at),
      entry.tool,
      entry.decision,
      entry.scope ?? '-',
      entry.basis,
      formatApprover(entry),
      entry.edited ? 'yes' : 'no',
      entry.argsDigest.slice(0, SHORT_DIGEST),
    ]),
  );
}

/** Who decided: "alice/admin" for a person, "deadline" when nobody answered in time, "stopped" when the run ended first. */
export function formatApprover(entry: AuditEntry): string {
  switch (entry.basis) {
    case 'deadline':
      return 'deadline';
    case 'cancelled':
      return 'stopped';
    case 'policy':
      return 'policy';
    case 'safe_command':
    case 'grant':
    case 'person': {
      const { approver } = entry;
      if (approver === null) {
        return '-';
      }
      if (approver.kind !== 'user') {
        return approver.kind;
      }
      const subject = approver.subject ?? 'a user';
      return approver.role === undefined ? subject : `${subject}/${approver.role}`;
    }
  }
}

/** "2030-01-01 10:04:05" (UTC); the raw text when it is not a date. */
function formatTimestamp(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}
