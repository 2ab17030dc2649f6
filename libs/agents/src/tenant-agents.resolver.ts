import {
  AgentDefinitionSchema,
  ConflictError,
  NotFoundError,
  type AgentDefinition,
  type AgentSource,
  type Run,
  type SafeCommandInEffect,
  type TenantAgent,
} from '@parley/contracts';
import type { AgentRepository, StoredAgent } from '@parley/store';
import { safeCommandsInEffect } from '@parley/tools';
import type { AgentCatalog } from './agent.catalog';
import { gatedPowers, withInertPowers } from './agent.powers';

/** The agents one run may use: its own (as it runs now) and the global ones it may delegate to. */
export interface RunAgents {
  find(name: string): AgentDefinition | undefined;
  /** Why `find` found no agent of that name: the reason a run of it fails. */
  whyMissing(name: string): string;
  safeCommands(name?: string): SafeCommandInEffect[];
}

/** The agent a new run starts with. */
export interface ResolvedAgent {
  source: AgentSource;
  definition: AgentDefinition;
  /** Tenant agents: the version the run keeps. */
  digest?: string;
}

/** A stored version, parsed once: versions never change, so this is safe to keep in memory. */
interface Version {
  definition: AgentDefinition;
  /** As it runs while its powers are inert. */
  inert: AgentDefinition;
}

/** Parsed versions kept in memory (oldest dropped first). */
const MAX_CACHED_VERSIONS = 1000;

/**
 * Global agents (the catalog) and each tenant's uploaded ones (the repository). A run of a tenant
 * agent uses the version it started with; whether that version's powers are enabled is read
 * again each time a worker picks the run up, so a revocation applies from the run's next step.
 */
export class TenantAgents {
  private readonly versions = new Map<string, Version>();

  constructor(
    readonly catalog: AgentCatalog,
    readonly repository: AgentRepository,
  ) {}

  /** A global agent of that name, else the tenant's current version; 404 otherwise, exactly as for a missing agent. */
  async forStart(tenant: string, name: string): Promise<ResolvedAgent> {
    const global = this.catalog.find(name);
    if (global) {
      return { source: 'global', definition: global };
    }
    const stored = await this.repository.current(tenant, name);
    const version = stored ? await this.version(tenant, stored.digest) : undefined;
    if (!stored || !version) {
      throw new NotFoundError('agent', name);
    }
    if (version.definition.model.provider === 'anthropic' && !this.catalog.anthropicAvailable) {
      throw new ConflictError(`agent ${name} uses anthropic, which this deployment does not run (no ANTHROPIC_API_KEY is configured)`);
    }
    return { source: 'tenant', definition: version.definition, digest: stored.digest };
  }

  /** A run's agent as it runs now: a global run gets the catalog; a tenant run its version, inert unless enabled. */
  async forRun(run: Pick<Run, 'tenant' | 'agent' | 'agentDigest'>): Promise<RunAgents> {
    if (!run.agentDigest) {
      return this.catalog;
    }
    const version = await this.version(run.tenant, run.agentDigest);
    if (!version) {
      return new ScopedAgents(this.catalog, run.agent, null);
    }
    const enabled = await this.repository.isEnabled(run.tenant, run.agentDigest);
    return new ScopedAgents(this.catalog, run.agent, { definition: enabled ? version.definition : version.inert, safe: this.safeCommandsFor(version.definition, enabled) });
  }

  /** The definition a run started with (powers as written), or undefined when it is no longer stored. */
  async definitionOf(run: Pick<Run, 'tenant' | 'agent' | 'agentDigest'>): Promise<AgentDefinition | undefined> {
    return run.agentDigest ? (await this.version(run.tenant, run.agentDigest))?.definition : this.catalog.find(run.agent);
  }

  /** The safe commands in effect for an agent the tenant may start (or for every agent, without a name). */
  async safeCommands(tenant: string, name?: string): Promise<SafeCommandInEffect[]> {
    if (name === undefined || this.catalog.find(name)) {
      return this.catalog.safeCommands(name);
    }
    const stored = await this.repository.current(tenant, name);
    const version = stored ? await this.version(tenant, stored.digest) : undefined;
    if (!stored || !version) {
      throw new NotFoundError('agent', name);
    }
    return this.safeCommandsFor(version.definition, await this.repository.isEnabled(tenant, stored.digest));
  }

  /** A tenant agent as its tenant sees it, with its full definition. */
  async describe(tenant: string, stored: StoredAgent): Promise<{ agent: TenantAgent; definition: AgentDefinition }> {
    const version = await this.version(tenant, stored.digest);
    if (!version) {
      throw new NotFoundError('agent', stored.name);
    }
    const enabled = await this.repository.isEnabled(tenant, stored.digest);
    return { agent: tenantAgentView(stored, version.definition, enabled), definition: version.definition };
  }

  /** A stored version, parsed once per process. */
  async version(tenant: string, digest: string): Promise<Version | undefined> {
    const key = `${tenant}\n${digest}`;
    const cached = this.versions.get(key);
    if (cached) {
      return cached;
    }
    const raw = await this.repository.version(tenant, digest);
    if (raw === null) {
      return undefined;
    }
    const definition = AgentDefinitionSchema.parse(JSON.parse(raw));
    const version = { definition, inert: withInertPowers(definition) };
    if (this.versions.size >= MAX_CACHED_VERSIONS) {
      this.versions.delete(this.versions.keys().next().value as string);
    }
    this.versions.set(key, version);
    return version;
  }

  private safeCommandsFor(definition: AgentDefinition, enabled: boolean): SafeCommandInEffect[] {
    return safeCommandsInEffect({ global: this.catalog.globalSafeCommands, ...(enabled ? { agent: { name: definition.name, entries: definition.safe_commands } } : {}) });
  }
}

/** A tenant agent's summary, its powers inert unless `enabled`. */
export function tenantAgentView(stored: StoredAgent, definition: AgentDefinition, enabled: boolean): TenantAgent {
  return {
    name: stored.name,
    source: 'tenant',
    description: definition.description,
    provider: definition.model.provider,
    tools: definition.tools,
    digest: stored.digest,
    sizeBytes: stored.sizeBytes,
    uploadedAt: stored.uploadedAt,
    uploadedBy: stored.uploadedBy,
    inertPowers: enabled ? [] : gatedPowers(definition),
    powersEnabled: enabled,
  };
}

/** One run's view: its own agent by name (none when its version is gone), everything else from the catalog. */
class ScopedAgents implements RunAgents {
  constructor(
    private readonly catalog: AgentCatalog,
    private readonly name: string,
    private readonly own: { definition: AgentDefinition; safe: SafeCommandInEffect[] } | null,
  ) {}

  find(name: string): AgentDefinition | undefined {
    return name === this.name ? this.own?.definition : this.catalog.find(name);
  }

  whyMissing(name: string): string {
    return name === this.name ? `agent ${name}: the version this run started with is no longer stored` : this.catalog.whyMissing(name);
  }

  safeCommands(name?: string): SafeCommandInEffect[] {
    if (name !== this.name) {
      return this.catalog.safeCommands(name);
    }
    if (!this.own) {
      throw new NotFoundError('agent', name);
    }
    return this.own.safe;
  }
}
