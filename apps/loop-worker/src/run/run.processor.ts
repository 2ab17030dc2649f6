import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { AgentCatalog } from '@parley/agents';
import { QUEUES, RunJobSchema, parseOrThrow, type RunJob } from '@parley/contracts';
import { createModelAdapter } from '@parley/models';
import { createLogger, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueWorker } from '@parley/store';
import type { AdvanceOutcome } from '../engine/engine.resources';
import { RunEngine } from '../engine/run.engine';

/**
 * The BullMQ side of the loop-worker: one job advances one run. BullMQ's lock is as long as the
 * run lease, so a crashed worker's job is retried within seconds; the lease fences the old one.
 */
@Injectable()
export class RunProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RunProcessor.name);
  private readonly engine: RunEngine;
  private worker?: QueueWorker<RunJob>;

  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    agents: AgentCatalog,
  ) {
    const env = { anthropicApiKey: config.anthropicApiKey, anthropicBaseUrl: config.anthropicBaseUrl, maxRetries: config.modelMaxRetries };
    this.engine = new RunEngine(
      {
        store,
        queues,
        agents,
        modelFor: (agent) => createModelAdapter(agent.model, env),
        logger: createLogger('loop-worker', config.logLevel),
        limits: { workspaceMaxFileBytes: config.workspaceMaxFileBytes, workspaceMaxBytes: config.workspaceMaxBytes },
      },
      config.leaseMs,
    );
  }

  onApplicationBootstrap(): void {
    this.worker = new QueueWorker<RunJob>(this.config.redisUrl, QUEUES.runs, (job, token) => this.process(job, token), {
      prefix: this.store.ctx.keys.bullPrefix(),
      concurrency: this.config.workerConcurrency,
      lockDuration: this.config.leaseMs,
      stalledInterval: Math.max(1000, Math.floor(this.config.leaseMs / 2)),
      maxStalledCount: 10,
    });
    this.worker.worker.on('failed', (job, error) => void this.onFailed(job, error));
    this.worker.worker.on('error', (error) => this.logger.error(`worker error: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  private async process(job: Job<RunJob>, token?: string): Promise<AdvanceOutcome> {
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
    this.logger.error(`run ${job.data.runId} failed: ${error.message}`);
    const run = await this.store.runs.get(job.data.tenant, job.data.runId);
    if (run) {
      await this.store.runs.end(
        { tenant: run.tenant, runId: run.id, owner: run.owner, token: '' },
        { status: 'failed', reason: 'internal_error', error: error.message },
        false,
      );
    }
  }
}
