import { ConflictError } from '@parley/contracts';
import type { StoreContext } from '../store.context';

/** The current version of a tenant agent, as its name's index entry keeps it. */
export interface StoredAgent {
  name: string;
  digest: string;
  uploadedAt: string;
  uploadedBy: string;
  sizeBytes: number;
}

/** An operator's enablement of one version's powers. */
export interface PowersEnablement {
  digest: string;
  agent: string;
  enabledBy: string;
  enabledAt: string;
}

export type SaveAgentResult = { status: 'created' } | { status: 'updated'; previous: string } | { status: 'unchanged' };
export type EnablePowersResult = { status: 'enabled' | 'already' } | { status: 'stale'; current: string } | { status: 'missing' };

/** Most superseded versions one prune looks at (oldest first). */
const PRUNE_BATCH = 100;

/**
 * Tenant agents in Redis: each version stored once under its digest and never changed, a name →
 * current-version index, the versions runs still use, and the versions an operator enabled.
 */
export class AgentRepository {
  constructor(private readonly ctx: StoreContext) {}

  async current(tenant: string, name: string): Promise<StoredAgent | null> {
    const raw = await this.ctx.redis.hget(this.ctx.keys.tenantAgents(tenant), name);
    return raw ? toStored(name, raw) : null;
  }

  /** Sorted by name. */
  async list(tenant: string): Promise<StoredAgent[]> {
    const all = await this.ctx.redis.hgetall(this.ctx.keys.tenantAgents(tenant));
    return Object.entries(all)
      .map(([name, raw]) => toStored(name, raw))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A version's canonical JSON, or null when it is not (or no longer) stored. */
  version(tenant: string, digest: string): Promise<string | null> {
    return this.ctx.redis.get(this.ctx.keys.agentVersion(tenant, digest));
  }

  /** Makes `canonical` the agent's current version; refuses a new name past `maxAgents` (nothing written). */
  async save(tenant: string, agent: StoredAgent, canonical: string, maxAgents: number): Promise<SaveAgentResult> {
    const k = this.ctx.keys;
    const record = JSON.stringify({ digest: agent.digest, uploadedAt: agent.uploadedAt, uploadedBy: agent.uploadedBy, sizeBytes: agent.sizeBytes });
    const [status, detail] = (await this.ctx.scripts.run(
      'agentSave',
      [k.tenantAgents(tenant), k.agentVersion(tenant, agent.digest), k.agentSuperseded(tenant)],
      [agent.name, agent.digest, record, canonical, maxAgents, Date.now()],
    )) as [string, string | number | undefined];
    switch (status) {
      case 'full':
        throw new ConflictError(`tenant ${tenant} already has ${String(detail)} agents (at most ${maxAgents}); delete one first`, { limit: maxAgents });
      case 'updated':
        await this.prune(tenant);
        return { status, previous: String(detail) };
      case 'created':
      case 'unchanged':
        return { status };
      default:
        throw new Error(`agent-save answered ${status}`);
    }
  }

  /** Removes the name; returns the digest it had, or null when there was no such agent. */
  async remove(tenant: string, name: string): Promise<string | null> {
    const k = this.ctx.keys;
    const digest = (await this.ctx.scripts.run('agentDelete', [k.tenantAgents(tenant), k.agentSuperseded(tenant)], [name, Date.now()])) as string | null;
    if (digest !== null) {
      await this.prune(tenant);
    }
    return digest;
  }

  /** Drops superseded versions that no run still needs; returns how many went. */
  async prune(tenant: string): Promise<number> {
    const k = this.ctx.keys;
    return (await this.ctx.scripts.run('agentPrune', [k.agentSuperseded(tenant), k.agentPowers(tenant)], [k.agentVersionPrefix(tenant), k.runPrefix(tenant), PRUNE_BATCH])) as number;
  }

  async isEnabled(tenant: string, digest: string): Promise<boolean> {
    return (await this.ctx.redis.hexists(this.ctx.keys.agentPowers(tenant), digest)) === 1;
  }

  /** The enabled versions of one agent (or of every agent). */
  async enablements(tenant: string, agent?: string): Promise<PowersEnablement[]> {
    const all = await this.ctx.redis.hgetall(this.ctx.keys.agentPowers(tenant));
    return Object.entries(all)
      .map(([digest, raw]) => ({ digest, ...(JSON.parse(raw) as Omit<PowersEnablement, 'digest'>) }))
      .filter((enablement) => agent === undefined || enablement.agent === agent);
  }

  /** Enables exactly `digest`, which must be the agent's current version. */
  async enable(tenant: string, agent: string, digest: string, by: string): Promise<EnablePowersResult> {
    const k = this.ctx.keys;
    const record = JSON.stringify({ agent, enabledBy: by, enabledAt: new Date().toISOString() });
    const [status, detail] = (await this.ctx.scripts.run('agentEnable', [k.tenantAgents(tenant), k.agentPowers(tenant)], [agent, digest, record])) as [string, string?];
    return status === 'stale' ? { status, current: detail ?? '' } : { status: status as 'enabled' | 'already' | 'missing' };
  }

  /** Revokes every enabled version of the agent; returns how many there were. */
  async revoke(tenant: string, agent: string): Promise<number> {
    return (await this.ctx.scripts.run('agentRevoke', [this.ctx.keys.agentPowers(tenant)], [agent])) as number;
  }
}

function toStored(name: string, raw: string): StoredAgent {
  const record = JSON.parse(raw) as Omit<StoredAgent, 'name'>;
  return { name, digest: record.digest, uploadedAt: record.uploadedAt, uploadedBy: record.uploadedBy, sizeBytes: record.sizeBytes };
}
