import { Logger, type LoggerService, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PinoNestLogger, checkReadiness, createLogger, startOpsServer, type ParleyConfig, type ReadinessReport, type RedisClient } from '@parley/platform';
import { PARLEY_CONFIG, QUEUE_REDIS, REDIS } from '../store.module';

/** Each service's operations port when PARLEY_OPS_PORT is unset, so one host runs one of each. */
export const OPS_PORT_DEFAULTS = { gateway: 9464, 'loop-worker': 9465, 'interaction-service': 9466 } as const;
export type ServiceName = keyof typeof OPS_PORT_DEFAULTS;

/** What readiness needs of a job processor (QueueProcessor has it). */
export interface ProcessorReadiness {
  readonly queueName: string;
  readiness(): Promise<void>;
}

/** A service's operations server; `port` is undefined when it has none (PARLEY_OPS_PORT=off, or the port was taken). */
export interface OpsPort {
  readonly port: number | undefined;
  /** From now on /health/ready answers with `ready`; until then, that the service is starting. */
  serve(ready: () => Promise<ReadinessReport>): void;
  close(): Promise<void>;
}

const STARTING: ReadinessReport = { ready: false, checks: { startup: { error: 'starting: waiting for Redis' } } };
const NO_PORT: OpsPort = { port: undefined, serve: () => undefined, close: () => Promise.resolve() };

/**
 * Opens a service's operations server, live at once and not ready until the app serves its checks:
 * main.ts opens it before the app, whose start waits for Redis, so that a liveness probe does not
 * restart a service whose Redis is slow to come up. A port already taken is reported and the service
 * runs without it (a second process of the same kind on one host: give each its own PARLEY_OPS_PORT,
 * or 0 for any free port).
 */
export async function openOpsPort(service: ServiceName, config: ParleyConfig, logger: LoggerService = new PinoNestLogger(createLogger(service, config.logLevel))): Promise<OpsPort> {
  if (config.opsPort === 'off') {
    return NO_PORT;
  }
  const port = config.opsPort ?? OPS_PORT_DEFAULTS[service];
  let ready = (): Promise<ReadinessReport> => Promise.resolve(STARTING);
  try {
    const server = await startOpsServer({
      host: config.opsHost,
      port,
      ready: () => ready(),
      ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
    });
    logger.log(`health and metrics on http://${config.opsHost}:${server.port} (/health/live, /health/ready, /metrics)`, 'ServiceOps');
    return { port: server.port, serve: (checks) => (ready = checks), close: () => server.close() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
      throw error;
    }
    logger.warn(`ops port ${port} is in use: /health and /metrics are off for this ${service} (set PARLEY_OPS_PORT)`, 'ServiceOps');
    return NO_PORT;
  }
}

/**
 * Serves a service's readiness on its operations port (the one main.ts opened, or its own when
 * given none, as in tests that run services in one process) and closes it with the app. Ready
 * means: both Redis connections answer and every job processor of the service runs.
 */
export class ServiceOps implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ServiceOps');

  constructor(
    private readonly service: ServiceName,
    private readonly processors: Array<Type<ProcessorReadiness>>,
    private readonly moduleRef: ModuleRef,
    private readonly config: ParleyConfig,
    private ops?: OpsPort,
  ) {}

  get port(): number | undefined {
    return this.ops?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
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
    this.ops ??= await openOpsPort(this.service, this.config, this.logger);
    this.ops.serve(() => checkReadiness(checks));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.ops?.close();
  }
}

/** The provider that gives a service its readiness on `ops` (opened by main.ts), or on an ops port of its own. */
export function serviceOpsProvider(service: ServiceName, processors: Array<Type<ProcessorReadiness>> = [], ops?: OpsPort): Provider {
  return {
    provide: ServiceOps,
    inject: [ModuleRef, PARLEY_CONFIG],
    useFactory: (moduleRef: ModuleRef, config: ParleyConfig) => new ServiceOps(service, processors, moduleRef, config, ops),
  };
}
