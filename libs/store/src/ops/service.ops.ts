import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { checkReadiness, startOpsServer, type OpsServer, type ParleyConfig, type RedisClient } from '@parley/platform';
import { PARLEY_CONFIG, QUEUE_REDIS, REDIS } from '../store.module';

/** Each service's operations port when PARLEY_OPS_PORT is unset, so one host runs one of each. */
export const OPS_PORT_DEFAULTS = { gateway: 9464, 'loop-worker': 9465, 'interaction-service': 9466 } as const;
export type ServiceName = keyof typeof OPS_PORT_DEFAULTS;

/** What readiness needs of a job processor (QueueProcessor has it). */
export interface ProcessorReadiness {
  readonly queueName: string;
  readiness(): Promise<void>;
}

/**
 * A service's operations server (/health/live, /health/ready, /metrics), started with the app and
 * closed with it. Ready means: both Redis connections answer and every job processor of the
 * service runs. A port already taken is reported and the service runs without it (a second process
 * of the same kind on one host: give each its own PARLEY_OPS_PORT, or 0 for any free port).
 */
export class ServiceOps implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ServiceOps');
  private server?: OpsServer;

  constructor(
    private readonly service: ServiceName,
    private readonly processors: Array<Type<ProcessorReadiness>>,
    private readonly moduleRef: ModuleRef,
    private readonly config: ParleyConfig,
  ) {}

  get port(): number | undefined {
    return this.server?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.opsPort === 'off') {
      return;
    }
    const redis = this.moduleRef.get<RedisClient>(REDIS, { strict: false });
    const queueRedis = this.moduleRef.get<RedisClient>(QUEUE_REDIS, { strict: false });
    const checks: Record<string, () => Promise<void>> = {
      redis: async () => void (await redis.ping()),
      queues: async () => void (await queueRedis.ping()),
    };
    for (const processor of this.processors) {
      const instance = this.moduleRef.get(processor, { strict: false });
      checks[`worker:${instance.queueName}`] = () => instance.readiness();
    }
    const port = this.config.opsPort ?? OPS_PORT_DEFAULTS[this.service];
    try {
      this.server = await startOpsServer({
        host: this.config.opsHost,
        port,
        ready: () => checkReadiness(checks),
        ...(this.config.metricsToken === undefined ? {} : { metricsToken: this.config.metricsToken }),
      });
      this.logger.log(`health and metrics on http://${this.config.opsHost}:${this.server.port} (/health/live, /health/ready, /metrics)`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        throw error;
      }
      this.logger.warn(`ops port ${port} is in use: /health and /metrics are off for this ${this.service} (set PARLEY_OPS_PORT)`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}

/** The provider that gives a service its operations server. */
export function serviceOpsProvider(service: ServiceName, processors: Array<Type<ProcessorReadiness>> = []): Provider {
  return {
    provide: ServiceOps,
    inject: [ModuleRef, PARLEY_CONFIG],
    useFactory: (moduleRef: ModuleRef, config: ParleyConfig) => new ServiceOps(service, processors, moduleRef, config),
  };
}
