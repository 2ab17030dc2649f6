import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  CreateWebhookBodySchema,
  EntityIdSchema,
  ListDeliveriesQuerySchema,
  UpdateWebhookBodySchema,
  parseOrThrow,
  type TokenClaims,
  type Webhook,
  type WebhookDelivery,
} from '@parley/contracts';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { parseQuery } from '../http/zod-query';
import { WebhooksService } from './webhooks.service';
import { Roles } from '../auth/roles';

/** Webhook endpoints of the caller's tenant (admins only: the role is checked before any input). */
@Controller('v1/webhooks')
@Roles(['admin'], 'manage webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  async create(@User() user: TokenClaims, @Body() body: unknown): Promise<{ webhook: Webhook; secret: string }> {
    return this.webhooks.create(user, parseOrThrow(CreateWebhookBodySchema, body, 'body'));
  }

  @Get()
  async list(@User() user: TokenClaims): Promise<{ webhooks: Webhook[] }> {
    return { webhooks: await this.webhooks.list(user) };
  }

  // Declared before the ":id" routes: "deliveries" is not an endpoint id.
  @Get('deliveries/:deliveryId')
  async delivery(@User() user: TokenClaims, @Param('deliveryId') deliveryId: string): Promise<{ delivery: WebhookDelivery }> {
    return { delivery: await this.webhooks.delivery(user, deliveryIdOf(deliveryId)) };
  }

  @Post('deliveries/:deliveryId/replay')
  @HttpCode(201)
  async replay(@User() user: TokenClaims, @Param('deliveryId') deliveryId: string): Promise<{ delivery: WebhookDelivery }> {
    return { delivery: await this.webhooks.replay(user, deliveryIdOf(deliveryId)) };
  }

  @Get(':id')
  async get(@User() user: TokenClaims, @Param('id') id: string): Promise<{ webhook: Webhook }> {
    return { webhook: await this.webhooks.get(user, webhookId(id)) };
  }

  @Patch(':id')
  async update(@User() user: TokenClaims, @Param('id') id: string, @Body() body: unknown): Promise<{ webhook: Webhook }> {
    const target = webhookId(id);
    return { webhook: await this.webhooks.update(user, target, parseOrThrow(UpdateWebhookBodySchema, body, 'body')) };
  }

  @Delete(':id')
  async remove(@User() user: TokenClaims, @Param('id') id: string): Promise<{ webhook: Webhook }> {
    return { webhook: await this.webhooks.remove(user, webhookId(id)) };
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(@User() user: TokenClaims, @Param('id') id: string): Promise<{ webhook: Webhook; secret: string }> {
    return this.webhooks.rotateSecret(user, webhookId(id));
  }

  @Get(':id/deliveries')
  async deliveries(@User() user: TokenClaims, @Param('id') id: string, @Query() query: unknown): Promise<{ deliveries: WebhookDelivery[] }> {
    const target = webhookId(id);
    const { limit } = parseQuery(ListDeliveriesQuerySchema, query);
    return { deliveries: await this.webhooks.deliveries(user, target, limit) };
  }
}

function webhookId(id: string): string {
  return parsePathParam(EntityIdSchema, id, 'id', 'webhook id');
}

function deliveryIdOf(deliveryId: string): string {
  return parsePathParam(EntityIdSchema, deliveryId, 'deliveryId', 'delivery id');
}
