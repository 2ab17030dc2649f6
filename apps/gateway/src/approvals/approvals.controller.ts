import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { TenantAgents } from '@parley/agents';
import { EntityIdSchema, ListApprovalsQuerySchema, SafeCommandsQuerySchema, type Interaction, type TokenClaims } from '@parley/contracts';
import type { SafeCommandInEffect } from '@parley/tools';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { parseQuery } from '../http/zod-query';
import { Roles } from '../auth/roles';
import { InteractionsService, type ApprovalPage } from '../interactions/interactions.service';

/** The approval queue: open tool approvals, claims, and the safe commands that skip approval. */
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(
    private readonly interactions: InteractionsService,
    private readonly agents: TenantAgents,
  ) {}

  @Get()
  list(@User() user: TokenClaims, @Query() query: unknown): Promise<ApprovalPage> {
    return this.interactions.listApprovals(user, parseQuery(ListApprovalsQuerySchema, query));
  }

  /** What is in effect, for every agent or for one, and where each entry came from. */
  @Get('safe-commands')
  async safeCommands(@User() user: TokenClaims, @Query() query: unknown): Promise<{ agent: string | null; safeCommands: SafeCommandInEffect[] }> {
    const { agent } = parseQuery(SafeCommandsQuerySchema, query);
    // A tenant agent's own entries are listed only once an operator enabled its version.
    return { agent: agent ?? null, safeCommands: await this.agents.safeCommands(user.tenant, agent) };
  }

  @Post(':id/claim')
  @Roles(['admin'], 'claim approvals')
  @HttpCode(200)
  async claim(@User() user: TokenClaims, @Param('id') id: string): Promise<{ interaction: Interaction }> {
    return { interaction: await this.interactions.claim(user, interactionId(id), false) };
  }

  @Delete(':id/claim')
  @Roles(['admin'], 'claim approvals')
  @HttpCode(200)
  async release(@User() user: TokenClaims, @Param('id') id: string): Promise<{ interaction: Interaction }> {
    return { interaction: await this.interactions.claim(user, interactionId(id), true) };
  }
}

function interactionId(id: string): string {
  return parsePathParam(EntityIdSchema, id, 'id', 'interaction id');
}
