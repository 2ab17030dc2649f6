import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from '@parley/platform';

/** The tenant-agent scripts (in ../scripts, next to the others, so the build ships them) and their key counts. */
const AGENT_SCRIPTS = {
  agentSave: { file: 'agent-save.lua', keys: 3 },
  agentDelete: { file: 'agent-delete.lua', keys: 2 },
  agentPrune: { file: 'agent-prune.lua', keys: 2 },
  agentEnable: { file: 'agent-enable.lua', keys: 2 },
  agentRevoke: { file: 'agent-revoke.lua', keys: 1 },
} as const;

export type AgentScriptName = keyof typeof AGENT_SCRIPTS;

const DIR = join(__dirname, '..', 'scripts');

/** Registers the tenant-agent scripts on a client as EVALSHA commands, like the store's Scripts. */
export class AgentScripts {
  constructor(private readonly redis: RedisClient) {
    for (const [name, { file, keys }] of Object.entries(AGENT_SCRIPTS)) {
      if (!(`parley_${name}` in redis)) {
        redis.defineCommand(`parley_${name}`, { lua: readFileSync(join(DIR, file), 'utf8'), numberOfKeys: keys });
      }
    }
  }

  run(name: AgentScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    const fn = (this.redis as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[`parley_${name}`];
    return fn.apply(this.redis, [...keys, ...args]);
  }
}
