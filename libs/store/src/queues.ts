import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { QUEUES, jobIds, type DeadlineJob, type InteractionRequest, type RunJob } from '@parley/contracts';

const KEEP: JobsOptions = {
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

/**
 * The only place that adds BullMQ jobs. Every job id is derived from Parley's own ids, so a
 * retried add is a no-op while the first job exists, and a late duplicate finds its work done.
 */
export class ParleyQueues {
  readonly runs: Queue<RunJob>;
  readonly interactionRequests: Queue<InteractionRequest>;
  readonly deadlines: Queue<DeadlineJob>;

  constructor(connection: ConnectionOptions, readonly prefix: string) {
    this.runs = new Queue<RunJob>(QUEUES.runs, { connection, prefix });
    this.interactionRequests = new Queue<InteractionRequest>(QUEUES.interactionRequests, { connection, prefix });
    this.deadlines = new Queue<DeadlineJob>(QUEUES.deadlines, { connection, prefix });
  }

  async enqueueRun(job: RunJob): Promise<void> {
    await this.runs.add('advance', job, {
      ...KEEP,
      jobId: jobIds.run(job),
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    });
  }

  async publishInteractionRequest(request: InteractionRequest): Promise<void> {
    await this.interactionRequests.add('open', request, {
      ...KEEP,
      jobId: jobIds.interactionRequest(request.tenant, request.interactionId),
      attempts: 10,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  async scheduleDeadline(job: DeadlineJob, deadline: Date): Promise<void> {
    await this.deadlines.add('expire', job, {
      ...KEEP,
      jobId: jobIds.deadline(job.tenant, job.interactionId),
      delay: Math.max(0, deadline.getTime() - Date.now()),
      attempts: 10,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  /** Best effort: a deadline that fires anyway meets a resolved interaction and does nothing. */
  async cancelDeadline(tenant: string, interactionId: string): Promise<void> {
    try {
      await this.deadlines.remove(jobIds.deadline(tenant, interactionId));
    } catch {
      // The job is being processed right now; its resolve will lose the race and change nothing.
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.runs.close(), this.interactionRequests.close(), this.deadlines.close()]);
  }
}
