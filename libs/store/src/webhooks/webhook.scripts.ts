import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from '@parley/platform';

type Arg = string | number;

const WEBHOOK_SCRIPTS = {
  create: { file: 'webhook-create.lua', keys: 3 },
  swap: { file: 'webhook-swap.lua', keys: 1 },
  delete: { file: 'webhook-delete.lua', keys: 2 },
  createDelivery: { file: 'webhook-delivery-create.lua', keys: 3 },
  recordAttempt: { file: 'webhook-delivery-attempt.lua', keys: 2 },
} as const;

export type WebhookScriptName = keyof typeof WEBHOOK_SCRIPTS;

const DIR = join(__dirname, '..', 'scripts');

/** The webhook scripts (libs/store/src/scripts/webhook-*.lua), registered on a client as EVALSHA commands. */
export class WebhookScripts {
  constructor(private readonly redis: RedisClient) {
    for (const [name, { file, keys }] of Object.entries(WEBHOOK_SCRIPTS)) {
      const command = `parley_webhook_${name}`;
      if (!(command in redis)) {
        redis.defineCommand(command, { lua: readFileSync(join(DIR, file), 'utf8'), numberOfKeys: keys });
      }
    }
  }

  run(name: WebhookScriptName, keys: string[], args: Arg[]): Promise<unknown> {
    const fn = (this.redis as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[`parley_webhook_${name}`];
    return fn.apply(this.redis, [...keys, ...args]);
  }
}
