/**
 * Preloaded (`node -r`) into every service the harness starts, so the services run from the
 * TypeScript sources of a clean clone without a build: each `.ts` file is compiled by @swc/core
 * when it is first required (the same .swcrc the jest run uses), and `@parley/<lib>` resolves to
 * `libs/<lib>/src`. The harness compiles this file itself to plain JavaScript before it starts a
 * service; the environment names the repository (PARLEY_HARNESS_ROOT) and the test process
 * (PARLEY_HARNESS_PARENT_PID).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface InternalModule {
  _compile(code: string, filename: string): void;
}
interface ModuleInternals {
  _extensions: Record<string, (module: InternalModule, filename: string) => void>;
  _resolveFilename: (request: string, ...rest: unknown[]) => string;
}
interface Swc {
  transformSync(code: string, options: Record<string, unknown>): { code: string };
}

const root = process.env.PARLEY_HARNESS_ROOT;
if (!root) {
  throw new Error('ts-hook: PARLEY_HARNESS_ROOT is not set');
}
const swc = createRequire(join(root, 'package.json'))('@swc/core') as Swc;
const swcrc = JSON.parse(readFileSync(join(root, '.swcrc'), 'utf8')) as Record<string, unknown>;
const internals = Module as unknown as ModuleInternals;

// Several services start at once and compile the same files: a content-addressed cache shares the work.
const cacheDir = join(tmpdir(), 'parley-harness-swc');
mkdirSync(cacheDir, { recursive: true });
const swcVersion = (createRequire(join(root, 'package.json'))('@swc/core/package.json') as { version: string }).version;

function compile(source: string, filename: string): string {
  const key = createHash('sha1').update(swcVersion).update('\0').update(filename).update('\0').update(source).digest('hex');
  const cached = join(cacheDir, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    const { code } = swc.transformSync(source, { ...swcrc, swcrc: false, filename, sourceMaps: 'inline' });
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
    return code;
  }
}

internals._extensions['.ts'] = (module, filename) => {
  module._compile(compile(readFileSync(filename, 'utf8'), filename), filename);
};

const resolve = internals._resolveFilename;
internals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  const lib = /^@parley\/([a-z-]+)$/.exec(request);
  return resolve.call(this, lib ? join(root, 'libs', lib[1], 'src') : request, ...rest);
};

// PID 1 of a container may not reap orphans, and a test process that dies cannot stop what it
// started: a service whose parent is gone ends itself.
const parent = Number(process.env.PARLEY_HARNESS_PARENT_PID);
if (parent > 0) {
  setInterval(() => {
    if (process.ppid !== parent) {
      process.kill(process.pid, 'SIGKILL');
    }
  }, 500).unref();
}
