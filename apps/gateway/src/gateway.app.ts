import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { LIMITS } from '@parley/contracts';
import { PinoNestLogger, createLogger, type ParleyConfig } from '@parley/platform';
import type { OpsPort } from '@parley/store';
import { mountBullBoard } from './admin/bull-board';
import { serveConsole } from './console/console.static';
import { GatewayModule } from './gateway.module';
import { BoundedIoAdapter } from './http/bounded-io.adapter';
import { answerClientErrors } from './http/client-errors';
import { toErrorReply } from './http/error.filter';
import { rejectDeepBodies } from './http/input-bounds';
import { readsAsJson, rejectNonJsonBodies } from './http/json-bodies';

/** Builds the gateway (HTTP /v1 + socket.io /v1) without listening; callers pick the port. `ops`: see openOpsPort. */
export async function createGateway(config: ParleyConfig, ops?: OpsPort): Promise<NestExpressApplication> {
  const logger = createLogger('gateway', config.logLevel);
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(config, ops), {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
  });
  // First, so that every reply, the errors of the body checks below included, carries its CORS headers.
  app.enableCors({ origin: true });
  // A body that is not JSON is a 415 before it is read, rather than a body the parser skips.
  app.use(rejectNonJsonBodies);
  app.useBodyParser('json', { limit: LIMITS.bodyBytes, strict: true, type: readsAsJson });
  // A body nested deeper than MAX_NESTING_DEPTH is a 400 before any route (or the auth guard) runs.
  app.use(rejectDeepBodies);
  // Body parser failures (malformed JSON, oversize) happen before Nest's filters see the request.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const { status, body } = toErrorReply(error);
    res.status(status).json(body);
  });
  // What Node's HTTP parser refuses (e.g. headers over 16 KiB) gets a JSON error body too.
  answerClientErrors(app.getHttpServer());
  // Bull Board for platform operators at /admin/queues.
  mountBullBoard(app);
  // The web console at / (static files and client routes); /v1, /healthz and socket.io are untouched.
  serveConsole(app, config);
  // socket.io messages: the same size and nesting bounds; unknown events get an error ack. On
  // shutdown, connections still open after the grace period are cut.
  app.useWebSocketAdapter(
    new BoundedIoAdapter(app, config.shutdownGraceMs, (count) => logger.warn({ connections: count }, 'shutdown: cut the connections still open after the grace period')),
  );
  app.enableShutdownHooks();
  return app;
}
