import { Controller, Get } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import type { AgentSummary } from '@parley/contracts';

@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentCatalog) {}

  @Get()
  list(): { agents: AgentSummary[] } {
    return { agents: this.agents.summaries() };
  }
}
