import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { PinoNestLogger, createLogger, type ParleyConfig } from '@parley/platform';
import { LoopWorkerModule } from './loop-worker.module';

/** Starts a loop-worker in this process; `close()` stops taking jobs and lets running ones finish. */
export async function startLoopWorker(config: ParleyConfig): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(LoopWorkerModule.forRoot(config), {
    logger: new PinoNestLogger(createLogger('loop-worker', config.logLevel)),
  });
}
