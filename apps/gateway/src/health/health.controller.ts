import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Redis } from 'ioredis';
import { StoreUnavailableError, type ErrorBody } from '@parley/contracts';
import { checkReadiness, type ReadinessReport } from '@parley/platform';
import { QUEUE_REDIS, REDIS } from '@parley/store';
import { Public } from '../auth/auth.guard';
import { AnswersWithoutStore } from '../http/store-ready.guard';

/** Health for load balancers on the public port (the ops port serves the same plus /metrics). */
@Controller()
@AnswersWithoutStore()
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(QUEUE_REDIS) private readonly queueRedis: Redis,
  ) {}

  /** The older check: Redis answers (within the readiness checks' bound). */
  @Get('healthz')
  @Public()
  async check(@Res({ passthrough: true }) res: Response): Promise<{ ok: true } | ErrorBody> {
    const report = await checkReadiness({ redis: async () => void (await this.redis.ping()) });
    if (!report.ready) {
      res.status(503);
      return new StoreUnavailableError().toBody();
    }
    return { ok: true };
  }

  @Get('health/live')
  @Public()
  @HttpCode(200)
  live(): { live: true } {
    return { live: true };
  }

  /** Which checks failed, not why: the reasons (addresses, errors) are for the ops port, not the public one. */
  @Get('health/ready')
  @Public()
  async ready(@Res({ passthrough: true }) res: Response): Promise<{ ready: boolean; checks: Record<string, 'ok' | 'failed'> }> {
    const report: ReadinessReport = await checkReadiness({
      redis: async () => void (await this.redis.ping()),
      queues: async () => void (await this.queueRedis.ping()),
    });
    res.status(report.ready ? 200 : 503);
    const checks = Object.fromEntries(Object.entries(report.checks).map(([name, result]) => [name, result === 'ok' ? ('ok' as const) : ('failed' as const)]));
    return { ready: report.ready, checks };
  }
}
