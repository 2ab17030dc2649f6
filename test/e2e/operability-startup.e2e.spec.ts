import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signToken } from '@parley/platform';
import { freePort } from '../../scripts/ports';
import { startRedisProcess, type RedisProcess } from '../../scripts/redis-process';
import { compileHook } from '../harness/harness';
import { ServiceProcess, type ServiceKind } from '../harness/service.process';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '..', '..');
/** Variables of the developer's shell that must not reach the services (as in the harness). */
const OWN_ENV = /^(PARLEY_|REDIS_URL$|REDIS_CLUSTER_NODES$|PORT$|LOG_LEVEL$|ANTHROPIC_)/;
/** The services whose start waits for Redis: their readiness says they are starting. */
const WAIT_FOR_REDIS: ServiceKind[] = ['gateway', 'interaction-service'];

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: await response.json() };
}

describe('operability: a service started before its Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-ops-startup-'));
  const secret = `startup-${randomUUID()}`;
  const services: ServiceProcess[] = [];
  let redis: RedisProcess | undefined;

  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await Promise.all(services.map((service) => service.closeLog()));
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is live at once and not ready while Redis is away, then ready and serving once Redis is up', async () => {
    const redisPort = await freePort();
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OWN_ENV.test(key)));
    const hook = compileHook(dir);
    for (const kind of ['gateway', 'loop-worker', 'interaction-service'] as const) {
      const port = kind === 'gateway' ? await freePort() : undefined;
      const env = {
        ...inherited,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        PARLEY_PREFIX: `startup-${randomUUID().slice(0, 8)}`,
        PARLEY_JWT_SECRET: secret,
        PARLEY_HOST: '127.0.0.1',
        PARLEY_OPS_PORT: String(await freePort()),
        LOG_LEVEL: 'info',
        PARLEY_HARNESS_ROOT: ROOT,
        PARLEY_HARNESS_PARENT_PID: String(process.pid),
        ...(port === undefined ? {} : { PORT: String(port) }),
      };
      services.push(new ServiceProcess({ name: kind, kind, root: ROOT, hook, logDir: dir, port, env, readyTimeoutMs: 60_000 }));
    }
    // Each start resolves once its service is up, which takes Redis; awaited below, after Redis starts.
    const started = Promise.all(services.map((service) => service.start()));
    started.catch(() => undefined);

    for (const service of services) {
      await waitFor(async () => (await getJson(`${service.opsUrl}/health/live`)).status === 200, { message: `${service.name} live`, timeoutMs: 30_000 });
      const ready = await getJson(`${service.opsUrl}/health/ready`);
      expect({ service: service.name, status: ready.status, ready: ready.body.ready }).toEqual({ service: service.name, status: 503, ready: false });
      if (WAIT_FOR_REDIS.includes(service.kind)) {
        expect(ready.body).toEqual({ ready: false, checks: { startup: { error: expect.stringContaining('starting') } } });
      }
      if (service.kind === 'interaction-service') {
        // It reports the deployment's gauges, which it cannot read yet: unknown, not 0 (a sum would read a false 0).
        const metrics = await (await fetch(`${service.opsUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
        expect(metrics).toMatch(/^parley_parked_runs nan$/im);
      }
    }

    const redisDir = join(dir, 'redis');
    mkdirSync(redisDir);
    redis = await startRedisProcess({ port: redisPort, dir: redisDir });
    await started;
    for (const service of services) {
      await waitFor(async () => (await getJson(`${service.opsUrl}/health/ready`)).status === 200, { message: `${service.name} ready`, timeoutMs: 30_000 });
      const told = service.lines.filter((line) => line.includes(`health and metrics on ${service.opsUrl} `));
      expect({ service: service.name, told: told.length }).toEqual({ service: service.name, told: 1 });
    }
    const gateway = services[0];
    const token = signToken({ tenant: 'startup', sub: 'alice', role: 'member' }, secret);
    const runs = await fetch(`${gateway.url}/v1/runs`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
    expect(runs.status).toBe(200);
  }, 180_000);
});

describe('a gateway whose PORT is taken', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-port-taken-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits with one line naming PORT, not a stack trace', async () => {
    const held = createServer();
    const port = await freePort();
    await new Promise<void>((done) => held.listen(port, '127.0.0.1', done));
    try {
      const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OWN_ENV.test(key)));
      const env = { ...inherited, PORT: String(port), PARLEY_HOST: '127.0.0.1', PARLEY_OPS_PORT: 'off', PARLEY_PREFIX: `port-taken-${randomUUID().slice(0, 8)}`, PARLEY_HARNESS_ROOT: ROOT, PARLEY_HARNESS_PARENT_PID: String(process.pid) };
      const child = spawn(process.execPath, ['-r', compileHook(dir), join(ROOT, 'apps', 'gateway', 'src', 'main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(stderr.trim().split('\n').at(-1)).toBe(`PORT ${port} on 127.0.0.1 is already in use (another gateway?): stop it or set PORT to a free port`);
      expect(stderr).not.toContain('    at ');
    } finally {
      held.close();
    }
  }, 60_000);
});
