import { metrics } from '@parley/platform';
import { isModelError } from './model.errors';
import type { ModelAdapter, ModelRequest, ModelTurn } from './model.types';

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
      if (turn.usage) {
        metrics.modelTokens.inc({ provider, direction: 'input' }, turn.usage.input);
        metrics.modelTokens.inc({ provider, direction: 'output' }, turn.usage.output);
        metrics.modelTokens.inc({ provider, direction: 'cache_read' }, turn.usage.cacheRead);
        metrics.modelTokens.inc({ provider, direction: 'cache_write' }, turn.usage.cacheWrite);
      }
      return turn;
    } catch (error) {
      stop({ outcome: request.signal?.aborted ? 'aborted' : isModelError(error) ? error.kind : 'error' });
      throw error;
    }
  }
}
