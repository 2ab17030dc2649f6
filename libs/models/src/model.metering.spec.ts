import { metrics } from '@parley/platform';
import { ModelError } from './model.errors';
import { MeteredModelAdapter } from './model.metering';
import type { ModelRequest } from './model.types';

const request: ModelRequest = { system: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [] };

async function tokens(provider: string, direction: string): Promise<number> {
  const { values } = await metrics.modelTokens.get();
  return values.find((v) => v.labels.provider === provider && v.labels.direction === direction)?.value ?? 0;
}

describe('metered model calls', () => {
  it('count the tokens of a call that succeeded, and of one that failed after the provider started answering', async () => {
    const usage = { input: 100, output: 7, cacheRead: 50, cacheWrite: 3 };
    const ok = new MeteredModelAdapter({ complete: () => Promise.resolve({ text: 'x', toolCalls: [], stopReason: 'end_turn', usage }) }, 'metering-spec');
    await ok.complete(request);
    const broken = new MeteredModelAdapter(
      { complete: () => Promise.reject(new ModelError('stream cut short', { kind: 'overloaded', retryable: true, usage: { input: 100, output: 2, cacheRead: 0, cacheWrite: 0 } })) },
      'metering-spec',
    );
    await expect(broken.complete(request)).rejects.toBeInstanceOf(ModelError);
    expect([await tokens('metering-spec', 'input'), await tokens('metering-spec', 'output'), await tokens('metering-spec', 'cache_read')]).toEqual([200, 9, 50]);
  });
});
