import { z } from 'zod';
import { EntityIdSchema, TenantIdSchema } from './ids.schema';
import { CheckpointRefSchema, PromptSchema, WaitReasonSchema } from './interaction.schema';

/** BullMQ queue names (before the deployment's prefix). */
export const QUEUES = {
  runs: 'runs',
  deadlines: 'deadlines',
  schedules: 'schedules',
  /** The interaction-services' periodic sweep (a job scheduler; one sweep at a time). */
  sweeper: 'sweeper',
} as const;

/** Advance one run. `wake` is the run's wake counter; the job id is derived from it. */
export const RunJobSchema = z.strictObject({
  tenant: TenantIdSchema,
  runId: EntityIdSchema,
  wake: z.int().min(0),
  /** Times the model call of turn `turn` (the run's model turns before it) failed in a way that may pass, and was put off. */
  modelRetry: z.strictObject({ turn: z.int().min(0), count: z.int().min(1) }).optional(),
});
export type RunJob = z.infer<typeof RunJobSchema>;

/** The interaction a parking worker opens (`park`), with what its deadline is computed from. */
export const InteractionRequestSchema = z.strictObject({
  tenant: TenantIdSchema,
  runId: EntityIdSchema,
  interactionId: EntityIdSchema,
  owner: z.string(),
  agent: z.string(),
  waitReason: WaitReasonSchema,
  prompt: PromptSchema,
  checkpoint: CheckpointRefSchema.optional(),
  /** 0 = no deadline. */
  timeoutSecs: z.int().min(0),
  requestedAt: z.string(),
});
export type InteractionRequest = z.infer<typeof InteractionRequestSchema>;

/** A tenant's deadline timer: expire every interaction of the tenant whose deadline has passed. */
export const DeadlineJobSchema = z.strictObject({
  tenant: TenantIdSchema,
});
export type DeadlineJob = z.infer<typeof DeadlineJobSchema>;

/** One firing of an agent's cron schedule (a BullMQ job scheduler's job). */
export const ScheduleJobSchema = z.strictObject({
  agent: z.string(),
  schedule: z.string(),
});
export type ScheduleJob = z.infer<typeof ScheduleJobSchema>;

/** BullMQ rejects ":" in custom ids; these are the only job ids Parley mints. */
export const jobIds = {
  run: (job: RunJob) => `run.${job.tenant}.${job.runId}.${job.wake}`,
  deadlineTimer: (tenant: string, dueMs: number) => `dl.${tenant}.${dueMs}`,
  scheduler: (agent: string, schedule: string) => `sched.${agent}.${schedule}`,
};

/** The run a {@link jobIds.run} id names; undefined for any other job id. */
export function runOfJobId(jobId: string): Pick<RunJob, 'tenant' | 'runId' | 'wake'> | undefined {
  // Tenant and run ids have no dots (ids.schema), so the parts split cleanly.
  const [kind, tenant, runId, wake, ...rest] = jobId.split('.');
  if (kind !== 'run' || rest.length > 0 || !/^\d+$/.test(wake ?? '')) {
    return undefined;
  }
  const parsed = RunJobSchema.safeParse({ tenant, runId, wake: Number(wake) });
  return parsed.success ? parsed.data : undefined;
}
