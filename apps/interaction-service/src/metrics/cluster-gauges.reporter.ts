import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { setClusterGaugeSource } from '@parley/platform';
import { ParleyQueues, ParleyStore, WebhookQueue, readClusterGauges } from '@parley/store';

/** The interaction-service reports the deployment-wide gauges (parked runs, open interactions, queues). */
@Injectable()
export class ClusterGaugesReporter implements OnApplicationBootstrap, OnApplicationShutdown {
  private stop?: () => void;

  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    private readonly webhooks: WebhookQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.stop = setClusterGaugeSource(() => readClusterGauges(this.store.ctx, [...this.queues.all(), this.webhooks.queue]));
  }

  onApplicationShutdown(): void {
    this.stop?.();
  }
}
