import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { PinoNestLogger, createLogger, type ParleyConfig } from '@parley/platform';
import { InteractionServiceModule } from './interaction-service.module';

export async function startInteractionService(config: ParleyConfig): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(InteractionServiceModule.forRoot(config), {
    logger: new PinoNestLogger(createLogger('interaction-service', config.logLevel)),
  });
}
