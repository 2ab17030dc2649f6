import { Injectable } from '@nestjs/common';
import { TenantAgents, gatedPowers } from '@parley/agents';
import { ConflictError, NotFoundError, type AgentDefinition, type AgentPowers, type TenantAgent, type TokenClaims } from '@parley/contracts';

/** What a platform operator does with a tenant's agents: review them, enable or revoke their powers. */
@Injectable()
export class OperatorService {
  constructor(private readonly agents: TenantAgents) {}

  /** The tenant's agents with what each grants itself and whether that is enabled. */
  async list(tenant: string): Promise<TenantAgent[]> {
    const stored = await this.agents.repository.list(tenant);
    return Promise.all(stored.map(async (agent) => (await this.agents.describe(tenant, agent)).agent));
  }

  /** The current version's powers and definition (to review), and every enabled version still stored. */
  async powers(tenant: string, name: string): Promise<AgentPowers & { definition: AgentDefinition }> {
    const stored = await this.agents.repository.current(tenant, name);
    if (!stored) {
      throw new NotFoundError('agent', name);
    }
    const { definition } = await this.agents.describe(tenant, stored);
    const enabled = await this.agents.repository.enablements(tenant, name);
    return {
      tenant,
      agent: name,
      digest: stored.digest,
      gatedPowers: gatedPowers(definition),
      enabled: enabled.some((e) => e.digest === stored.digest),
      enabledVersions: enabled.map((e) => ({ digest: e.digest, current: e.digest === stored.digest, enabledBy: e.enabledBy, enabledAt: e.enabledAt })),
      definition,
    };
  }

  /** Enables exactly the version the operator reviewed; a version replaced meanwhile is a conflict. */
  async enable(operator: TokenClaims, tenant: string, name: string, digest: string): Promise<AgentPowers> {
    const result = await this.agents.repository.enable(tenant, name, digest, operator.sub);
    if (result.status === 'missing') {
      throw new NotFoundError('agent', name);
    }
    if (result.status === 'stale') {
      const reason = `is not the current version of agent ${name} (now ${result.current}); review that one and enable it`;
      throw new ConflictError(`digest ${reason}`, { issues: [{ field: 'digest', reason }], current: result.current });
    }
    return this.summary(tenant, name);
  }

  /** Revokes every enabled version of the agent (a deleted one too): its runs lose the powers from their next step. */
  async revoke(tenant: string, name: string): Promise<{ revoked: number; powers: AgentPowers | null }> {
    const current = await this.agents.repository.current(tenant, name);
    const revoked = await this.agents.repository.revoke(tenant, name);
    if (!current && revoked === 0) {
      throw new NotFoundError('agent', name);
    }
    return { revoked, powers: current ? await this.summary(tenant, name) : null };
  }

  private async summary(tenant: string, name: string): Promise<AgentPowers> {
    const { definition: _definition, ...powers } = await this.powers(tenant, name);
    return powers;
  }
}
