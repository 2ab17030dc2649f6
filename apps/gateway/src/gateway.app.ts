import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { LIMITS } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { GatewayModule } from './gateway.module';
import { toErrorReply } from './http/error.filter';

/** Builds the gateway (HTTP /v1 + socket.io /v1) without listening; callers pick the port. */
export async function createGateway(config: ParleyConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(config), {
    bodyParser: false,
    logger: ['error', 'warn'],
  });
  app.useBodyParser('json', { limit: LIMITS.bodyBytes, strict: true });
  // Body parser failures (malformed JSON, oversize) happen before Nest's filters see the request.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const { status, body } = toErrorReply(error);
    res.status(status).json(body);
  });
  app.enableCors({ origin: true });
  app.enableShutdownHooks();
  return app;
}
