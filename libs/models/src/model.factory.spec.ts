import { ModelConfigSchema } from '@parley/contracts';
import { startFakeAnthropic } from '../../../test/support/fake-anthropic';
import { AnthropicModelAdapter } from './anthropic.adapter';
import { createModelAdapter } from './model.factory';
import { MeteredModelAdapter } from './model.metering';
import { ModelError } from './model.errors';
import { ScriptedModelAdapter } from './scripted.adapter';

describe('createModelAdapter', () => {
  it('builds a scripted adapter from the turns of the config', async () => {
    const config = ModelConfigSchema.parse({ provider: 'scripted', turns: [{ text: 'hi there' }] });

    const adapter = createModelAdapter(config, {});

    expect(adapter).toBeInstanceOf(MeteredModelAdapter);
    expect((adapter as MeteredModelAdapter).inner).toBeInstanceOf(ScriptedModelAdapter);
    await expect(adapter.complete({ system: '', messages: [], tools: [] })).resolves.toEqual({
      text: 'hi there',
      toolCalls: [],
      stopReason: 'end_turn',
    });
  });

  it('refuses an anthropic model without an API key', () => {
    const config = ModelConfigSchema.parse({ provider: 'anthropic', name: 'claude-test' });

    for (const anthropicApiKey of [undefined, '']) {
      const attempt = (): unknown => createModelAdapter(config, { anthropicApiKey });
      expect(attempt).toThrow(ModelError);
      expect(attempt).toThrow(/ANTHROPIC_API_KEY is not set/);
    }
  });

  it('builds an anthropic adapter that uses the configured model, key and base URL', async () => {
    const fake = await startFakeAnthropic({ apiKey: 'sk-factory', responder: [{ text: 'from the fake' }] });
    try {
      const config = ModelConfigSchema.parse({ provider: 'anthropic', name: 'claude-factory' });
      const adapter = createModelAdapter(config, { anthropicApiKey: 'sk-factory', anthropicBaseUrl: fake.url, maxRetries: 0 });

      expect((adapter as MeteredModelAdapter).inner).toBeInstanceOf(AnthropicModelAdapter);
      const turn = await adapter.complete({ system: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [] });

      expect(turn.text).toBe('from the fake');
      expect(fake.requests[0]).toMatchObject({ model: 'claude-factory', max_tokens: 4096 });
    } finally {
      await fake.close();
    }
  });
});
