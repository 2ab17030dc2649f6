import { setMaxListeners } from 'node:events';
import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job, type Worker } from 'bullmq';
import { AgentCatalog, TenantAgents } from '@parley/agents';
import { QUEUES, RunJobSchema, parseOrThrow, runOfJobId, type RunJob } from '@parley/contracts';
import { createModelAdapter } from '@parley/models';
import { createLogger, type ParleyConfig } from '@parley/platform';
import { AgentRepository, PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, RunControl } from '@parley/store';
import { toolsInFlight } from '@parley/tools';
import type { AdvanceOutcome, EngineResources } from '../engine/engine.resources';
import { RecentLogs } from '../engine/held.log';
import { RunEngine } from '../engine/run.engine';

/**
 * The BullMQ side of the loop-worker: one job advances one run. BullMQ's lock is as long as the
 * run lease, so a crashed worker's job is retried within seconds; the lease fences the old one.
 */
@Injectable()
export class RunProcessor extends QueueProcessor<RunJob> {
  private readonly engine: RunEngine;
  private readonly resources: EngineResources;
  private readonly shutdownGraceMs: number;
  /** Aborted when a shutdown's grace period is over: steps still running hand their runs back. */
  private readonly shutdown = new AbortController();
  private graceTimer?: NodeJS.Timeout;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    queues: ParleyQueues,
    agents: AgentCatalog,
    private readonly control: RunControl,
  ) {
    // A dead worker's job is back in the queue within the lease and two stalled checks (the default
    // takeoverOptions), by which time its run lease has run out too.
    super(QUEUES.runs, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: config.workerConcurrency });
    const env = { anthropicApiKey: config.anthropicApiKey, anthropicBaseUrl: config.anthropicBaseUrl, maxRetries: config.modelMaxRetries, timeoutMs: config.modelTimeoutSecs * 1000 };
    this.resources = {
      store,
      queues,
      control,
      agents,
      modelFor: (agent) => createModelAdapter(agent.model, env),
      logger: createLogger('loop-worker', config.logLevel).child({ worker: config.workerId }),
      workerId: config.workerId,
      limits: { workspaceMaxFileBytes: config.workspaceMaxFileBytes, workspaceMaxBytes: config.workspaceMaxBytes },
      modelRetry: { steps: config.modelStepRetries, firstDelayMs: config.modelStepRetryMs },
      logs: new RecentLogs(store),
    };
    this.shutdownGraceMs = config.shutdownGraceMs;
    // Each running step listens to it: past ten (PARLEY_WORKER_CONCURRENCY > 10), Node would warn of a leak.
    setMaxListeners(config.workerConcurrency + 1, this.shutdown.signal);
    const tenantAgents = new TenantAgents(agents, new AgentRepository(store.ctx));
    // A run of a tenant agent sees its version, its powers as enabled right now.
    this.engine = new RunEngine(this.resources, config.leaseMs, (run) => tenantAgents.forRun(run));
  }

  protected override watch(worker: Worker<RunJob>): void {
    worker.on('failed', (job, error) => {
      this.onFailed(job, error).catch((failure: unknown) => this.logger.error(`could not mark a failed run as failed: ${String(failure)}`));
    });
  }

  protected override lostJobLine(jobId: string): { msg: string } & Record<string, unknown> {
    const run = runOfJobId(jobId);
    return { msg: 'run taken over by another worker: this worker lost its job lock', ...(run ? { tenant: run.tenant, runId: run.runId } : {}) };
  }

  async process(job: Job<RunJob>, token?: string): Promise<AdvanceOutcome> {
    const payload = parseOrThrow(RunJobSchema, job.data, 'run job');
    const outcome = await this.engine.advance(payload, this.shutdown.signal);
    if (outcome.status === 'released') {
      // Back to the queue now, for a worker that is not shutting down.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (outcome.status === 'retry') {
      // The count is only a budget: should it not be saved, the call is retried from a lower count.
      await job.updateData({ ...payload, modelRetry: outcome.modelRetry }).catch((error: unknown) => this.logger.warn(`could not save a run job's model retries: ${String(error)}`));
      await job.moveToDelayed(Date.now() + outcome.retryInMs, token);
      throw new DelayedError();
    }
    if (outcome.status === 'busy') {
      // Another worker holds the run (or did until it died): look again once its lease runs out.
      await job.moveToDelayed(Date.now() + outcome.retryInMs + 50, token);
      throw new DelayedError();
    }
    return outcome;
  }

  /**
   * SIGTERM: take no new jobs, let running steps finish for up to PARLEY_SHUTDOWN_GRACE_MS, then
   * abort what still runs (a long model call): those runs go back to the queue, nothing is lost.
   */
  override beforeApplicationShutdown(): void {
    super.beforeApplicationShutdown();
    this.graceTimer = setTimeout(() => this.shutdown.abort(), this.shutdownGraceMs);
    // A call a turn starts after the grace period is not waited for (nor is the next, and so on).
    toolsInFlight.waitOnlyForCallsBegunBy(Date.now() + this.shutdownGraceMs);
  }

  override async onApplicationShutdown(): Promise<void> {
    try {
      await super.onApplicationShutdown();
    } finally {
      clearTimeout(this.graceTimer);
    }
  }

  /**
   * A tool call begun within the grace period is not cut off: the close waits for it up to its own
   * timeout (and a little more to record its result), then the step hands its run back. Abandoning
   * it would leave the command running unwatched while another worker ran it again. One begun later
   * is not waited for: should the close give up, the process kills its command as it exits.
   */
  protected override closeDeadline(): number {
    return Math.max(super.closeDeadline(), toolsInFlight.lastDeadline() + 5000);
  }

  /** A run whose job failed for good is marked failed, so nothing stays `running` forever. */
  private async onFailed(job: Job<RunJob> | undefined, error: Error): Promise<void> {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) {
      return;
    }
    const payload = RunJobSchema.safeParse(job.data);
    if (!payload.success) {
      this.logger.error({ msg: 'a malformed run job failed', jobId: job.id, err: error.message });
      return;
    }
    const { tenant, runId, wake } = payload.data;
    const ended = await this.control.failExhausted(tenant, runId, wake, error.message);
    if (ended.status === 'missing') {
      return;
    }
    if (ended.status === 'ended') {
      this.logger.error({ msg: 'run failed: its job ran out of attempts', tenant, runId, err: error.message });
    } else {
      this.logger.warn({ msg: 'a run job ran out of attempts; the run was left as is', tenant, runId, status: ended.status, err: error.message });
    }
  }
}
