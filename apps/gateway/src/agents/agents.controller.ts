import { Body, Controller, Delete, Get, HttpCode, Param, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AgentNameSchema, type AgentListing, type TenantAgent, type TokenClaims } from '@parley/contracts';
import { Roles } from '../auth/roles';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { AgentsService, type AgentDetail } from './agents.service';

/**
 * The deployment's agents and the tenant's own: anyone lists and reads them, admins upload and
 * delete. The role is checked before any input, so a member learns nothing from a malformed one.
 */
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Get()
  async list(@User() user: TokenClaims): Promise<{ agents: AgentListing[] }> {
    return { agents: await this.agents.list(user) };
  }

  @Get(':name')
  async get(@User() user: TokenClaims, @Param('name') name: string): Promise<{ agent: AgentDetail }> {
    return { agent: await this.agents.get(user, agentName(name)) };
  }

  /** 201 when the name is new, 200 when it replaced (or already was) the current version. */
  @Put(':name')
  @Roles(['admin'], 'upload agents')
  async upload(
    @User() user: TokenClaims,
    @Param('name') name: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ agent: TenantAgent }> {
    const { created, agent } = await this.agents.upload(user, agentName(name), body);
    response.status(created ? 201 : 200);
    return { agent };
  }

  @Delete(':name')
  @Roles(['admin'], 'delete agents')
  @HttpCode(200)
  async remove(@User() user: TokenClaims, @Param('name') name: string): Promise<{ deleted: { name: string; digest: string } }> {
    return { deleted: await this.agents.remove(user, agentName(name)) };
  }
}

function agentName(name: string): string {
  return parsePathParam(AgentNameSchema, name, 'name', 'agent name');
}
