import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job } from 'bullmq';
import { DeadlineJobSchema, QUEUES, parseOrThrow, type DeadlineJob } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { InteractionResolver, PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueWorker } from '@parley/store';

/** Resolves an interaction nobody answered in time; silence on a question means "no answer". */
@Injectable()
export class DeadlineProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeadlineProcessor.name);
  private readonly resolver: InteractionResolver;
  private worker?: QueueWorker<DeadlineJob>;

  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly store: ParleyStore,
    queues: ParleyQueues,
  ) {
    this.resolver = new InteractionResolver(store, queues);
  }

  onApplicationBootstrap(): void {
    this.worker = new QueueWorker<DeadlineJob>(this.config.redisUrl, QUEUES.deadlines, (job) => this.process(job), {
      prefix: this.store.ctx.keys.bullPrefix(),
      concurrency: 32,
    });
    this.worker.worker.on('error', (error) => this.logger.error(`worker error: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  async process(job: Job<DeadlineJob>): Promise<string> {
    const { tenant, interactionId } = parseOrThrow(DeadlineJobSchema, job.data, 'deadline job');
    const interaction = await this.store.interactions.get(tenant, interactionId);
    if (!interaction || interaction.status !== 'open') {
      return 'already resolved';
    }
    const result = await this.resolver.resolve({ interaction, outcome: 'expired', by: { kind: 'deadline' } });
    return result.status;
  }
}
