import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { REDIS } from '@parley/store';
import { Public } from '../auth/auth.guard';

@Controller('healthz')
export class HealthController {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  @Get()
  @Public()
  async check(): Promise<{ ok: true }> {
    try {
      await this.redis.ping();
    } catch {
      throw new ServiceUnavailableException('redis unreachable');
    }
    return { ok: true };
  }
}
