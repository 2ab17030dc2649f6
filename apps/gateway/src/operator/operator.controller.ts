import { Body, Controller, Delete, Get, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { AgentNameSchema, EnablePowersBodySchema, TenantIdSchema, parseOrThrow, type AgentDefinition, type AgentPowers, type TenantAgent, type TokenClaims } from '@parley/contracts';
import { Public } from '../auth/auth.guard';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { OperatorGuard } from './operator.guard';
import { OperatorService } from './operator.service';

/**
 * Platform operators enable what a tenant's uploaded agent grants itself. @Public() skips the
 * tenant AuthGuard only: OperatorGuard admits operator tokens and nothing else.
 */
@Controller('v1/operator/tenants/:tenant/agents')
@Public()
@UseGuards(OperatorGuard)
export class OperatorController {
  constructor(private readonly operator: OperatorService) {}

  @Get()
  async list(@Param('tenant') tenant: string): Promise<{ tenant: string; agents: TenantAgent[] }> {
    const id = tenantId(tenant);
    return { tenant: id, agents: await this.operator.list(id) };
  }

  @Get(':name/powers')
  async powers(@Param('tenant') tenant: string, @Param('name') name: string): Promise<{ powers: AgentPowers & { definition: AgentDefinition } }> {
    return { powers: await this.operator.powers(tenantId(tenant), agentName(name)) };
  }

  @Put(':name/powers')
  @HttpCode(200)
  async enable(@User() user: TokenClaims, @Param('tenant') tenant: string, @Param('name') name: string, @Body() body: unknown): Promise<{ powers: AgentPowers }> {
    const { digest } = parseOrThrow(EnablePowersBodySchema, body, 'body');
    return { powers: await this.operator.enable(user, tenantId(tenant), agentName(name), digest) };
  }

  @Delete(':name/powers')
  @HttpCode(200)
  revoke(@Param('tenant') tenant: string, @Param('name') name: string): Promise<{ revoked: number; powers: AgentPowers | null }> {
    return this.operator.revoke(tenantId(tenant), agentName(name));
  }
}

function tenantId(tenant: string): string {
  return parsePathParam(TenantIdSchema, tenant, 'tenant', 'tenant');
}

function agentName(name: string): string {
  return parsePathParam(AgentNameSchema, name, 'name', 'agent name');
}
