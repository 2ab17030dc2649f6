import type { AgentCatalog } from '@parley/agents';
import { jobIds, type AgentDefinition, type Schedule } from '@parley/contracts';
import type { WantedSchedule } from '@parley/store';

/**
 * Every schedule of every configured agent, as the job schedulers that fire them: also an agent
 * this process could not run (no key for its model), since the loop-workers run it, not this one.
 */
export function wantedSchedules(agents: AgentCatalog): WantedSchedule[] {
  return agents.configured().flatMap((agent) => agent.schedules.map((schedule) => toWanted(agent, schedule)));
}

function toWanted(agent: AgentDefinition, schedule: Schedule): WantedSchedule {
  return {
    id: jobIds.scheduler(agent.name, schedule.name),
    cron: schedule.cron,
    timezone: schedule.timezone,
    data: { agent: agent.name, schedule: schedule.name },
  };
}
