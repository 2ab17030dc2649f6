import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job, type Worker } from 'bullmq';
import { AgentCatalog } from '@parley/agents';
import { QUEUES, RunJobSchema, parseOrThrow, type RunJob } from '@parley/contracts';
import { createModelAdapter } from '@parley/models';
import { createLogger, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, RunControl } from '@parley/store';
import type { AdvanceOutcome } from '../engine/engine.resources';
import { RunEngine } from '../engine/run.engine';

/**
 * The BullMQ side of the loop-worker: one job advances one run. BullMQ's lock is as long as the
 * run lease, so a crashed worker's job is retried within seconds; the lease fences the old one.
 */
@Injectable()
export class RunProcessor extends QueueProcessor<RunJob> {
  private readonly engine: RunEngine;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    queues: ParleyQueues,
    agents: AgentCatalog,
    private readonly control: RunControl,
  ) {
    super(QUEUES.runs, config, {
      prefix: store.ctx.keys.bullPrefix(),
      concurrency: config.workerConcurrency,
      lockDuration: config.leaseMs,
      stalledInterval: Math.max(1000, Math.floor(config.leaseMs / 2)),
      maxStalledCount: 10,
    });
    const env = { anthropicApiKey: config.anthropicApiKey, anthropicBaseUrl: config.anthropicBaseUrl, maxRetries: config.modelMaxRetries };
    this.engine = new RunEngine(
      {
        store,
        queues,
        control,
        agents,
        modelFor: (agent) => createModelAdapter(agent.model, env),
        logger: createLogger('loop-worker', config.logLevel),
        limits: { workspaceMaxFileBytes: config.workspaceMaxFileBytes, workspaceMaxBytes: config.workspaceMaxBytes },
      },
      config.leaseMs,
    );
  }

  protected override watch(worker: Worker<RunJob>): void {
    worker.on('failed', (job, error) => {
      this.onFailed(job, error).catch((failure: unknown) => this.logger.error(`could not mark a failed run as failed: ${String(failure)}`));
    });
  }

  async process(job: Job<RunJob>, token?: string): Promise<AdvanceOutcome> {
    const payload = parseOrThrow(RunJobSchema, job.data, 'run job');
    const outcome = await this.engine.advance(payload);
    if (outcome.status === 'busy') {
      // Another worker holds the run (or did until it died): look again once its lease runs out.
      await job.moveToDelayed(Date.now() + outcome.retryInMs + 50, token);
      throw new DelayedError();
    }
    return outcome;
  }

  /** A run whose job failed for good is marked failed, so nothing stays `running` forever. */
  private async onFailed(job: Job<RunJob> | undefined, error: Error): Promise<void> {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) {
      return;
    }
    const payload = RunJobSchema.safeParse(job.data);
    if (!payload.success) {
      this.logger.error(`a malformed run job failed: ${error.message}`);
      return;
    }
    this.logger.error(`run ${payload.data.runId} failed: ${error.message}`);
    const run = await this.store.runs.get(payload.data.tenant, payload.data.runId);
    if (run) {
      await this.control.end(
        { tenant: run.tenant, runId: run.id, owner: run.owner, token: '' },
        { status: 'failed', reason: 'internal_error', error: error.message },
        { fenced: false, ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}) },
      );
    }
  }
}
