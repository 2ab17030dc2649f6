import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { PinoNestLogger, createLogger, type ParleyConfig } from '@parley/platform';
import type { OpsPort } from '@parley/store';
import { InteractionServiceModule } from './interaction-service.module';

/** `ops`: see openOpsPort. */
export async function startInteractionService(config: ParleyConfig, ops?: OpsPort): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(InteractionServiceModule.forRoot(config, ops), {
    logger: new PinoNestLogger(createLogger('interaction-service', config.logLevel)),
  });
}
