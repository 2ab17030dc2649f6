import type { AgentCatalog } from '@parley/agents';
import { jobIds, type AgentDefinition, type Schedule } from '@parley/contracts';
import type { WantedSchedule } from '@parley/store';

/** Every schedule of every agent the catalog offers, as the job schedulers that fire them. */
export function wantedSchedules(agents: AgentCatalog): WantedSchedule[] {
  return agents
    .summaries()
    .map((summary) => agents.get(summary.name))
    .flatMap((agent) => agent.schedules.map((schedule) => toWanted(agent, schedule)));
}

function toWanted(agent: AgentDefinition, schedule: Schedule): WantedSchedule {
  return {
    id: jobIds.scheduler(agent.name, schedule.name),
    cron: schedule.cron,
    ...(schedule.timezone ? { timezone: schedule.timezone } : {}),
    data: { agent: agent.name, schedule: schedule.name },
  };
}
