import { NotFoundError, type AgentDefinition, type AgentSummary } from '@parley/contracts';
import { loadAgentDefinitions } from './agent.loader';

/**
 * The agents a deployment offers. An anthropic agent is offered only when a key is configured, so
 * a fresh checkout lists what actually works.
 */
export class AgentCatalog {
  private readonly byName: Map<string, AgentDefinition>;

  constructor(definitions: AgentDefinition[], options: { anthropicAvailable: boolean }) {
    const offered = definitions.filter((agent) => agent.model.provider !== 'anthropic' || options.anthropicAvailable);
    this.byName = new Map(offered.map((agent) => [agent.name, agent]));
  }

  static fromDirectory(dir: string, options: { anthropicAvailable: boolean }): AgentCatalog {
    return new AgentCatalog(loadAgentDefinitions(dir), options);
  }

  /** The catalog a service builds at start from its configuration. */
  static fromConfig(config: { agentsDir: string; anthropicApiKey?: string }): AgentCatalog {
    return AgentCatalog.fromDirectory(config.agentsDir, { anthropicAvailable: Boolean(config.anthropicApiKey) });
  }

  find(name: string): AgentDefinition | undefined {
    return this.byName.get(name);
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
