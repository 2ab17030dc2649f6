import type { AgentSummary, Interaction, Run } from '@parley/contracts';
import { formatOptionsInline } from './interaction.format';
import { renderTable } from './table';
import { formatAge, formatDeadline } from './time';

export function formatRunsTable(runs: Run[], now: Date): string {
  return renderTable(
    [{ header: 'ID' }, { header: 'AGENT', max: 24 }, { header: 'STATUS' }, { header: 'WAIT' }, { header: 'UPDATED' }],
    runs.map((run) => [run.id, run.agent, run.status, run.waitReason ?? '-', formatAge(run.updatedAt, now)]),
  );
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
