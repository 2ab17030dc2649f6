import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { PinoNestLogger, createLogger, type ParleyConfig } from '@parley/platform';
import type { OpsPort } from '@parley/store';
import { LoopWorkerModule } from './loop-worker.module';

/** Starts a loop-worker in this process; `close()` stops taking jobs and lets running ones finish. `ops`: see openOpsPort. */
export async function startLoopWorker(config: ParleyConfig, ops?: OpsPort): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(LoopWorkerModule.forRoot(config, ops), {
    logger: new PinoNestLogger(createLogger('loop-worker', config.logLevel)),
  });
}
