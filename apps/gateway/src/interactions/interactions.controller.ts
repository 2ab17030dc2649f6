import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AnswerBodySchema, EntityIdSchema, ListInteractionsQuerySchema, parseAnswerBody, type Interaction, type TokenClaims } from '@parley/contracts';
import type { InteractionPage } from '@parley/store';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { parseQuery } from '../http/zod-query';
import { InteractionsService } from './interactions.service';

@Controller('v1/interactions')
export class InteractionsController {
  constructor(private readonly interactions: InteractionsService) {}

  @Get()
  list(@User() user: TokenClaims, @Query() query: unknown): Promise<InteractionPage> {
    return this.interactions.list(user, parseQuery(ListInteractionsQuerySchema, query));
  }

  @Get(':id')
  async get(@User() user: TokenClaims, @Param('id') id: string): Promise<{ interaction: Interaction }> {
    return { interaction: await this.interactions.get(user, interactionId(id)) };
  }

  @Post(':id/answer')
  @HttpCode(200)
  async answer(@User() user: TokenClaims, @Param('id') id: string, @Body() body: unknown): Promise<{ interaction: Interaction }> {
    const target = interactionId(id);
    return { interaction: await this.interactions.answer(user, target, parseAnswerBody(AnswerBodySchema, body)) };
  }
}

function interactionId(id: string): string {
  return parsePathParam(EntityIdSchema, id, 'id', 'interaction id');
}
