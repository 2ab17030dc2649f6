import { Injectable } from '@nestjs/common';
import { TenantAgents, parseUploadedAgent } from '@parley/agents';
import {
  NotFoundError,
  TENANT_AGENTS_MAX,
  UploadAgentBodySchema,
  parseOrThrow,
  type AgentDefinition,
  type AgentListing,
  type AgentSummary,
  type TenantAgent,
  type TokenClaims,
} from '@parley/contracts';

/** One agent as `GET /v1/agents/:name` shows it: a global one's summary, or a tenant one with its definition. */
export type AgentDetail = (AgentSummary & { source: 'global' }) | (TenantAgent & { definition: AgentDefinition });

/** The agents a tenant sees (the deployment's and its own) and the admin's uploads. */
@Injectable()
export class AgentsService {
  constructor(private readonly agents: TenantAgents) {}

  async list(user: TokenClaims): Promise<AgentListing[]> {
    const globals = this.agents.catalog.summaries().map((summary) => ({ ...summary, source: 'global' as const }));
    const own = await this.agents.repository.list(user.tenant);
    const tenant = await Promise.all(
      own
        // A global agent added after the upload takes the name; its tenant agent is no longer offered.
        .filter((stored) => !this.agents.catalog.isReserved(stored.name))
        .map((stored) => this.agents.describe(user.tenant, stored)),
    );
    // As for the deployment's own: an agent of a provider this deployment does not run cannot start a run.
    const startable = tenant.filter(({ definition }) => definition.model.provider !== 'anthropic' || this.agents.catalog.anthropicAvailable);
    return [...globals, ...startable.map(({ agent }) => agent)];
  }

  /** Another tenant's agent answers exactly like a missing one. */
  async get(user: TokenClaims, name: string): Promise<AgentDetail> {
    const global = this.agents.catalog.summaries().find((summary) => summary.name === name);
    if (global) {
      return { ...global, source: 'global' };
    }
    const stored = await this.agents.repository.current(user.tenant, name);
    if (!stored) {
      throw new NotFoundError('agent', name);
    }
    const { agent, definition } = await this.agents.describe(user.tenant, stored);
    return { ...agent, definition };
  }

  /** Stores a new version (201), replaces the current one (200), or keeps an identical one (200). Admins only: the controller checks. */
  async upload(user: TokenClaims, name: string, body: unknown): Promise<{ created: boolean; agent: TenantAgent }> {
    const uploaded = parseUploadedAgent(name, parseOrThrow(UploadAgentBodySchema, body, 'body'), this.agents.catalog);
    const stored = { name, digest: uploaded.digest, uploadedAt: new Date().toISOString(), uploadedBy: user.sub, sizeBytes: uploaded.sizeBytes };
    const saved = await this.agents.repository.save(user.tenant, stored, uploaded.canonical, TENANT_AGENTS_MAX);
    const current = saved.status === 'unchanged' ? await this.agents.repository.current(user.tenant, name) : stored;
    if (!current) {
      throw new NotFoundError('agent', name);
    }
    return { created: saved.status === 'created', agent: (await this.agents.describe(user.tenant, current)).agent };
  }

  /** Runs already started keep their version until they end. Admins only: the controller checks. */
  async remove(user: TokenClaims, name: string): Promise<{ name: string; digest: string }> {
    const digest = await this.agents.repository.remove(user.tenant, name);
    if (digest === null) {
      throw new NotFoundError('agent', name);
    }
    return { name, digest };
  }
}

