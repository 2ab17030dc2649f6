import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsRegistry } from './metrics';

/** One dependency's state: 'ok', or why it is not. */
export type CheckResult = 'ok' | { error: string };

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

/** Runs named checks concurrently; a check that throws or takes over `timeoutMs` fails. */
export async function checkReadiness(checks: Record<string, () => Promise<void>>, timeoutMs = 2000): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [name, 'ok'];
      } catch (error) {
        return [name, { error: error instanceof Error ? error.message : String(error) }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, result]) => result === 'ok'), checks: Object.fromEntries(entries) };
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The operations port of a service: GET /health/live, /health/ready and /metrics (Prometheus).
 * Kept off the public port: metrics describe the whole deployment. With `metricsToken`, /metrics
 * answers only a request bearing it; health stays open to probes.
 */
export async function startOpsServer(options: { host: string; port: number; ready: () => Promise<ReadinessReport>; metricsToken?: string }): Promise<OpsServer> {
  const bearsToken = options.metricsToken === undefined ? () => true : tokenCheck(options.metricsToken);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      reply(405, 'application/json', JSON.stringify({ error: { code: 'method_not_allowed', message: `${req.method} is not served here` } }));
      return;
    }
    switch (path) {
      case '/health/live':
        reply(200, 'application/json', JSON.stringify({ live: true }));
        return;
      case '/health/ready':
        options.ready().then(
          (report) => reply(report.ready ? 200 : 503, 'application/json', JSON.stringify(report)),
          (error: unknown) => reply(503, 'application/json', JSON.stringify({ ready: false, error: String(error) })),
        );
        return;
      case '/metrics':
        if (!bearsToken(req)) {
          res.setHeader('www-authenticate', 'Bearer');
          reply(401, 'application/json', JSON.stringify({ error: { code: 'unauthenticated', message: 'metrics need the bearer token of PARLEY_METRICS_TOKEN' } }));
          return;
        }
        metricsRegistry.metrics().then(
          (text) => reply(200, metricsRegistry.contentType, text),
          (error: unknown) => reply(500, 'text/plain', `metrics failed: ${String(error)}\n`),
        );
        return;
      default:
        reply(404, 'application/json', JSON.stringify({ error: { code: 'not_found', message: `${path} is not served here` } }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Its requests are short and answered from memory: cut what is open (a scrape, or a client
        // that never finished its request), which would otherwise hold the service's shutdown.
        server.closeAllConnections();
      }),
  };
}

/** Whether a request bears `token` (compared in constant time, over digests of equal length). */
function tokenCheck(token: string): (req: IncomingMessage) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (req) => {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    return match !== null && timingSafeEqual(createHash('sha256').update(match[1]).digest(), expected);
  };
}
