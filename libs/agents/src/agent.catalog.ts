import { NotFoundError, type AgentDefinition, type AgentSummary } from '@parley/contracts';
import { safeCommandsInEffect, type SafeCommandInEffect } from '@parley/tools';
import { loadAgentDefinitions } from './agent.loader';

export interface CatalogOptions {
  anthropicAvailable: boolean;
  /** Safe commands the deployment adds for every agent (PARLEY_SAFE_COMMANDS). */
  globalSafeCommands?: readonly string[];
}

/**
 * The agents a deployment offers. An anthropic agent is offered only when a key is configured, so
 * a fresh checkout lists what actually works.
 */
export class AgentCatalog {
  private readonly byName: Map<string, AgentDefinition>;
  /** Every global agent, offered here or not. */
  private readonly configuredByName: Map<string, AgentDefinition>;
  private readonly safe: Map<string, SafeCommandInEffect[]>;
  private readonly globalSafe: SafeCommandInEffect[];
  /** Every global agent's name, offered or not: a tenant agent may take none of them. */
  private readonly reserved: Set<string>;
  /** The deployment's own safe commands (PARLEY_SAFE_COMMANDS). */
  readonly globalSafeCommands: readonly string[];
  readonly anthropicAvailable: boolean;

  /** Throws when a safe-command entry (global or of an agent) is invalid, naming it and where it came from. */
  constructor(definitions: AgentDefinition[], options: CatalogOptions) {
    const offered = definitions.filter((agent) => agent.model.provider !== 'anthropic' || options.anthropicAvailable);
    this.byName = new Map(offered.map((agent) => [agent.name, agent]));
    const global = options.globalSafeCommands ?? [];
    this.configuredByName = new Map(definitions.map((agent) => [agent.name, agent]));
    this.reserved = new Set(this.configuredByName.keys());
    this.globalSafeCommands = global;
    this.anthropicAvailable = options.anthropicAvailable;
    this.globalSafe = safeCommandsInEffect({ global });
    this.safe = new Map(offered.map((agent) => [agent.name, safeCommandsInEffect({ global, agent: { name: agent.name, entries: agent.safe_commands } })]));
  }

  static fromDirectory(dir: string, options: CatalogOptions): AgentCatalog {
    return new AgentCatalog(loadAgentDefinitions(dir), options);
  }

  /** The catalog a service builds at start from its configuration. */
  static fromConfig(config: { agentsDir: string; anthropicApiKey?: string; safeCommands?: readonly string[] }): AgentCatalog {
    return AgentCatalog.fromDirectory(config.agentsDir, {
      anthropicAvailable: Boolean(config.anthropicApiKey),
      globalSafeCommands: config.safeCommands ?? [],
    });
  }

  /** The safe commands in effect for an agent (or for every agent, without a name), each with where it came from. */
  safeCommands(agentName?: string): SafeCommandInEffect[] {
    if (agentName === undefined) {
      return this.globalSafe;
    }
    const safe = this.safe.get(agentName);
    if (!safe) {
      throw new NotFoundError('agent', agentName);
    }
    return safe;
  }

  /** A global agent has this name, even one not offered here (an anthropic agent without a key). */
  isReserved(name: string): boolean {
    return this.reserved.has(name);
  }

  find(name: string): AgentDefinition | undefined {
    return this.byName.get(name);
  }

  /**
   * Every global agent, offered here or not. The deployment's schedules come from these: a process
   * without a model's key (the interaction-service, the gateway) still starts and lists their runs;
   * the loop-worker that takes such a run is the one that needs the key.
   */
  configured(): AgentDefinition[] {
    return [...this.configuredByName.values()];
  }

  /** A global agent by name, offered here or not (see `configured`). */
  findConfigured(name: string): AgentDefinition | undefined {
    return this.configuredByName.get(name);
  }

  /** Why `find` has no agent of that name here: one this process cannot run, or one not configured. */
  whyMissing(name: string): string {
    const agent = this.configuredByName.get(name);
    if (agent && !this.byName.has(name)) {
      return `agent ${name} uses the ${agent.model.provider} model provider, which this process cannot run: ANTHROPIC_API_KEY is not set`;
    }
    return `agent ${name} is no longer configured`;
  }

  get(name: string): AgentDefinition {
    const agent = this.byName.get(name);
    if (!agent) {
      throw new NotFoundError('agent', name);
    }
    return agent;
  }

  summaries(): AgentSummary[] {
    return [...this.byName.values()].map((agent) => ({
      name: agent.name,
      description: agent.description,
      provider: agent.model.provider,
      tools: agent.tools,
    }));
  }
}
