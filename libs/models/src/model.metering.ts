import { metrics } from '@parley/platform';
import { isModelError } from './model.errors';
import type { ModelAdapter, ModelRequest, ModelTurn, ModelUsage } from './model.types';

/** An adapter whose calls' duration, outcome and tokens reach /metrics. */
export class MeteredModelAdapter implements ModelAdapter {
  constructor(
    readonly inner: ModelAdapter,
    private readonly provider: string,
  ) {}

  async complete(request: ModelRequest): Promise<ModelTurn> {
    const provider = this.provider;
    const stop = metrics.modelLatency.startTimer({ provider });
    try {
      const turn = await this.inner.complete(request);
      stop({ outcome: 'ok' });
      this.count(turn.usage);
      return turn;
    } catch (error) {
      stop({ outcome: request.signal?.aborted ? 'aborted' : isModelError(error) ? error.kind : 'error' });
      // A call that failed after the provider started answering is billed all the same.
      this.count(isModelError(error) ? error.usage : undefined);
      throw error;
    }
  }

  private count(usage: ModelUsage | undefined): void {
    if (usage) {
      const provider = this.provider;
      metrics.modelTokens.inc({ provider, direction: 'input' }, usage.input);
      metrics.modelTokens.inc({ provider, direction: 'output' }, usage.output);
      metrics.modelTokens.inc({ provider, direction: 'cache_read' }, usage.cacheRead);
      metrics.modelTokens.inc({ provider, direction: 'cache_write' }, usage.cacheWrite);
    }
  }
}
