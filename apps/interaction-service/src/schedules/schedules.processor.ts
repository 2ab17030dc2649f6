import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { AgentCatalog } from '@parley/agents';
import { QUEUES, ScheduleJobSchema, parseOrThrow, type ScheduleJob } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, RunControl } from '@parley/store';

/** The run id of one firing: the same for every attempt at that firing's job, so it starts one run. */
export function scheduledRunId(bullJobId: string): string {
  return createHash('sha256').update(bullJobId).digest('hex').slice(0, 32);
}

/** Starts an unattended run for each firing of an agent's schedule, as the schedule configures it now. */
@Injectable()
export class SchedulesProcessor extends QueueProcessor<ScheduleJob> {
  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    private readonly agents: AgentCatalog,
    private readonly control: RunControl,
  ) {
    super(QUEUES.schedules, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 8 });
  }

  async process(job: Job<ScheduleJob>): Promise<string> {
    const data = parseOrThrow(ScheduleJobSchema, job.data, 'schedule job');
    // Configured, offered here or not: the loop-worker that takes the run needs the model's key.
    const agent = this.agents.findConfigured(data.agent);
    const schedule = agent?.schedules.find((s) => s.name === data.schedule);
    if (!agent || !schedule) {
      return `no run: schedule ${data.schedule} of agent ${data.agent} is no longer configured`;
    }
    if (!job.id) {
      throw new Error('schedule job without an id');
    }
    const runId = scheduledRunId(job.id);
    const created = await this.store.runs.create({
      tenant: schedule.tenant,
      runId,
      owner: schedule.owner,
      agent: agent.name,
      task: schedule.task,
      trigger: 'schedule',
      unattended: true,
      ...(agent.stages[0] ? { stage: agent.stages[0].name } : {}),
    });
    if (created.created) {
      await this.queues.enqueueRun({ tenant: schedule.tenant, runId, wake: created.wake });
      return `started run ${runId}`;
    }
    // An earlier attempt at this firing created the run, and may have died before enqueueing it; or
    // the run has moved on since and was woken again. A queued run gets the job of its current wake:
    // the job id makes this a no-op while that job exists.
    await this.control.ensureQueued(schedule.tenant, runId);
    return `run ${runId} already started`;
  }
}
