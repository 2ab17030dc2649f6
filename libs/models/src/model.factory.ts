import type { ModelConfig } from '@parley/contracts';
import { AnthropicModelAdapter } from './anthropic.adapter';
import { ModelError } from './model.errors';
import { MeteredModelAdapter } from './model.metering';
import type { ModelAdapter } from './model.types';
import { ScriptedModelAdapter } from './scripted.adapter';

/** What the factory takes from the deployment's configuration (never read from process.env here). */
export interface ModelEnv {
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  maxRetries?: number;
  /** See AnthropicAdapterOptions.timeoutMs. */
  timeoutMs?: number;
}

/** The adapter an agent's model config names, metered for /metrics. */
export function createModelAdapter(config: ModelConfig, env: ModelEnv): ModelAdapter {
  return new MeteredModelAdapter(createAdapter(config, env), config.provider);
}

function createAdapter(config: ModelConfig, env: ModelEnv): ModelAdapter {
  switch (config.provider) {
    case 'scripted':
      return new ScriptedModelAdapter(config.turns);
    case 'anthropic':
      if (env.anthropicApiKey === undefined || env.anthropicApiKey === '') {
        throw new ModelError('ANTHROPIC_API_KEY is not set: agents with the anthropic model provider need it', {
          kind: 'config',
          retryable: false,
        });
      }
      return new AnthropicModelAdapter({
        apiKey: env.anthropicApiKey,
        baseURL: env.anthropicBaseUrl,
        model: config.name,
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        maxRetries: env.maxRetries,
        timeoutMs: env.timeoutMs,
      });
  }
}
