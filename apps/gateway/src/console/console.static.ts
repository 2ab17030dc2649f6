import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import type { ParleyConfig } from '@parley/platform';

/**
 * The console's pages may run only the bundle served from here and talk only to this gateway
 * (HTTP and socket.io); markdown from models is sanitised, and this keeps anything that slips
 * through from loading scripts, posting forms elsewhere or being framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths the console never owns: the API, health, Bull Board, socket.io and the built assets. */
const NOT_CONSOLE = /^\/(v1|healthz|health|admin|socket\.io|assets)(\/|$)/;
/** A client route has no file extension in its last segment (`/runs/abc`, not `/favicon.ico`). */
const CLIENT_ROUTE = /^(\/[A-Za-z0-9_-]+)*\/?$/;

/**
 * Serves the built console: hashed assets with a long cache, and index.html (never cached) at `/`
 * and at every client route, to browsers. Registered before the API routes; /v1, /healthz and
 * socket.io are left as they are, so an unknown /v1 path still gets the JSON 404.
 */
export function serveConsole(app: NestExpressApplication, config: ParleyConfig): void {
  const dir = resolve(config.consoleDir ?? join(packageRoot(), 'dist', 'console'));
  // Vite names every asset by its content hash, so an asset never changes under its name.
  app.useStaticAssets(join(dir, 'assets'), { prefix: '/assets/', index: false, immutable: true, maxAge: '365d', fallthrough: true });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !wantsPage(req) || NOT_CONSOLE.test(req.path) || !CLIENT_ROUTE.test(req.path)) {
      next();
      return;
    }
    readFile(join(dir, 'index.html')).then(
      (html) => {
        res.setHeader('Content-Security-Policy', CONSOLE_CSP);
        res.setHeader('Referrer-Policy', 'no-referrer');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('X-Frame-Options', 'DENY');
        res.setHeader('Cache-Control', 'no-cache');
        res.type('html').send(html);
      },
      () => {
        res.status(404).setHeader('Cache-Control', 'no-cache');
        res.type('text/plain').send(notBuilt(dir));
      },
    );
  });
}

/**
 * Browsers ask for a page (`Accept: text/html…`) when they navigate; API clients (curl, fetch, SDKs)
 * do not, and keep getting the API's JSON 404 for paths that are not routes of theirs.
 */
function wantsPage(req: Request): boolean {
  return (req.headers.accept ?? '').toLowerCase().includes('text/html');
}

function notBuilt(dir: string): string {
  return [
    'The Parley web console is not built.',
    '',
    `The gateway looks for it in ${dir} (set PARLEY_CONSOLE_DIR to change that).`,
    'Build it with `npm run build:console` (or `npm run build`, which `npm start` runs), then reload.',
    'The HTTP API is at /v1 and socket.io at the namespace /v1.',
    '',
  ].join('\n');
}

/** The folder of Parley's package.json, from the source tree or from dist/ alike. */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'parley') {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      return process.cwd();
    }
    dir = parent;
  }
}
