import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  type AuditEntry,
  EntityIdSchema,
  EventsQuerySchema,
  IdempotencyKeySchema,
  ListRunsQuerySchema,
  MessageBodySchema,
  StartRunBodySchema,
  parseOrThrow,
  type Interaction,
  type LogEntry,
  type ParleyEvent,
  type Run,
  type TokenClaims,
} from '@parley/contracts';
import type { RunPage } from '@parley/store';
import { User } from '../auth/user.decorator';
import { parsePathParam } from '../http/path-params';
import { parseQuery } from '../http/zod-query';
import { RunsService } from './runs.service';

@Controller('v1/runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Post()
  @HttpCode(201)
  async start(
    @User() user: TokenClaims,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ run: Run }> {
    const start = parseOrThrow(StartRunBodySchema, body, 'body');
    const { run, replayed } = await this.runs.start(user, start, idempotencyKeyOf(key));
    if (replayed) {
      response.setHeader('Idempotent-Replayed', 'true');
    }
    return { run };
  }

  @Get()
  list(@User() user: TokenClaims, @Query() query: unknown): Promise<RunPage> {
    return this.runs.list(user, parseQuery(ListRunsQuerySchema, query));
  }

  @Get(':id')
  async get(@User() user: TokenClaims, @Param('id') id: string): Promise<{ run: Run; interaction?: Interaction }> {
    const run = await this.runs.get(user, runId(id));
    const interaction = await this.runs.pendingInteraction(run);
    return { run, ...(interaction ? { interaction } : {}) };
  }

  @Get(':id/events')
  async events(@User() user: TokenClaims, @Param('id') id: string, @Query() query: unknown): Promise<{ events: ParleyEvent[]; truncated: boolean }> {
    const { since, limit } = parseQuery(EventsQuerySchema, query);
    return this.runs.events(user, runId(id), since, limit);
  }

  @Get(':id/log')
  async log(@User() user: TokenClaims, @Param('id') id: string): Promise<{ entries: LogEntry[] }> {
    return { entries: await this.runs.log(user, runId(id)) };
  }

  /** Who approved what on this run; admins, and the member who owns the run. */
  @Get(':id/audit')
  async audit(@User() user: TokenClaims, @Param('id') id: string): Promise<{ entries: AuditEntry[] }> {
    return { entries: await this.runs.audit(user, runId(id)) };
  }

  /** Stops the run; `cancel` is the older name of the same route. */
  @Post([':id/stop', ':id/cancel'])
  @HttpCode(200)
  async stop(@User() user: TokenClaims, @Param('id') id: string): Promise<{ run: Run }> {
    return { run: await this.runs.stop(user, runId(id)) };
  }

  @Post(':id/messages')
  @HttpCode(202)
  async message(
    @User() user: TokenClaims,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ messageId: string; pending: number }> {
    const target = runId(id);
    const message = parseOrThrow(MessageBodySchema, body, 'body');
    const { messageId, pending, replayed } = await this.runs.message(user, target, message, idempotencyKeyOf(key));
    if (replayed) {
      response.setHeader('Idempotent-Replayed', 'true');
    }
    return { messageId, pending };
  }
}

function runId(id: string): string {
  return parsePathParam(EntityIdSchema, id, 'id', 'run id');
}

function idempotencyKeyOf(header: string | undefined): string | undefined {
  return header === undefined ? undefined : parsePathParam(IdempotencyKeySchema, header, 'Idempotency-Key', 'Idempotency-Key header');
}
