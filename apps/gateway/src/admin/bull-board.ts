import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { ParleyQueues, WebhookQueue } from '@parley/store';
import { AuthService } from '../auth/auth.service';
import { toErrorReply } from '../http/error.filter';

export const BULL_BOARD_PATH = '/admin/queues';
const COOKIE = 'parley_admin_token';

function cookieToken(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) {
      return decodeURIComponent(value.join('='));
    }
  }
  return undefined;
}

/**
 * Only platform operators: BullMQ's queues hold every tenant's jobs, so a tenant admin (whose world
 * is one tenant) never sees them. A browser signs in once with `?token=`, which becomes an
 * HttpOnly, SameSite=Strict cookie scoped to this path and leaves the address bar; every request is
 * verified again, so an expired token stops working at once.
 */
function operatorsOnly(auth: AuthService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const fromQuery = typeof req.query.token === 'string' ? req.query.token : undefined;
    // The token that is checked is the one that becomes the cookie: a sign-in link wins over the rest.
    const cookie = cookieToken(req);
    const header = fromQuery ? `Bearer ${fromQuery}` : (req.headers.authorization ?? (cookie ? `Bearer ${cookie}` : undefined));
    auth.authenticateOperator(header, 'Bull Board (/admin/queues)').then(
      () => {
        if (fromQuery) {
          const secure = req.secure ? '; Secure' : '';
          res.setHeader('Set-Cookie', `${COOKIE}=${encodeURIComponent(fromQuery)}; Path=${BULL_BOARD_PATH}; HttpOnly; SameSite=Strict${secure}`);
          // The same view without the token (other parameters of a deep link kept).
          const url = new URL(req.originalUrl, 'http://board.invalid');
          url.searchParams.delete('token');
          res.redirect(303, `${url.pathname}${url.search}`);
          return;
        }
        next();
      },
      (error: unknown) => {
        const { status, body } = toErrorReply(error);
        res.status(status).json(body);
      },
    );
  };
}

/** Bull Board, read-only, over every queue of the deployment, at /admin/queues. */
export function mountBullBoard(app: NestExpressApplication): void {
  const queues = [...app.get(ParleyQueues, { strict: false }).all(), app.get(WebhookQueue, { strict: false }).queue];
  const adapter = new ExpressAdapter();
  adapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    // Read-only: retrying or removing a run's job behind Parley's back could strand or double a step.
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Parley queues' } },
  });
  app.use(BULL_BOARD_PATH, operatorsOnly(app.get(AuthService, { strict: false })), adapter.getRouter());
}
