import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const root = path.resolve(__dirname, '..');
const composeFile = path.join(root, 'docker-compose.yml');
const PARLEY_SERVICES = ['gateway', 'loop-worker', 'interaction-service'] as const;

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | null> | string[];
  ports?: (string | { target: number; published?: number | string })[];
  container_name?: string;
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string };
  volumes?: (string | { target?: string })[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Without the shell's own values, so the file's defaults are what `config` prints. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['PARLEY_JWT_SECRET', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'PARLEY_WORKER_CONCURRENCY']) {
    delete env[name];
  }
  return env;
}

function dockerCompose(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('docker-compose', ['-f', composeFile, ...args], { cwd: root, env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

const hasDockerCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;

function envOf(service: ComposeService): Record<string, string | null> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) {
    return env;
  }
  return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.includes('=') ? entry.slice(entry.indexOf('=') + 1) : null]));
}

function targetPorts(service: ComposeService): number[] {
  return (service.ports ?? []).map((p) => (typeof p === 'string' ? Number(p.split(':').pop()) : Number(p.target)));
}

function commandOf(service: ComposeService): string {
  return Array.isArray(service.command) ? service.command.join(' ') : (service.command ?? '');
}

/** What both the file as written (merge keys resolved) and `docker-compose config` must satisfy. */
function expectParleyStack(doc: ComposeFile): void {
  expect(Object.keys(doc.services).sort()).toEqual(['gateway', 'interaction-service', 'loop-worker', 'redis']);

  const redis = doc.services.redis;
  expect(redis.image).toMatch(/^redis:7/);
  expect(commandOf(redis)).toContain('--appendonly yes');
  expect(commandOf(redis)).toContain('--appendfsync everysec');
  expect(JSON.stringify(redis.volumes)).toContain('/data');

  const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const name of PARLEY_SERVICES) {
    const service = doc.services[name];
    expect(service.image ?? service.build).toBeTruthy();
    // The same entry point `npm run start:<service>` runs.
    expect(commandOf(service)).toBe(scripts[`start:${name}`]);
    const env = envOf(service);
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    // The shell's secret, or none (the services then use the dev secret and warn; never beside a key set).
    expect(['${PARLEY_JWT_SECRET:-}', '']).toContain(env.PARLEY_JWT_SECRET);
    expect(env).toHaveProperty('ANTHROPIC_API_KEY');
    expect(service.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  }

  const gateway = doc.services.gateway;
  expect(targetPorts(gateway)).toEqual([8080]);
  expect(JSON.stringify(gateway.healthcheck?.test)).toContain('/health/ready');
  expect(envOf(gateway).PARLEY_HOST).toBe('0.0.0.0');

  // Scaling needs both absent.
  const worker = doc.services['loop-worker'];
  expect(worker.container_name).toBeUndefined();
  expect(worker.ports).toBeUndefined();
  expect(envOf(worker)).toHaveProperty('PARLEY_WORKER_CONCURRENCY');
}

describe('docker-compose.yml', () => {
  it('as written: four services wired to Redis, scalable workers, health-checked gateway', () => {
    const doc = parse(fs.readFileSync(composeFile, 'utf8'), { merge: true }) as ComposeFile;
    expectParleyStack(doc);
    expect(doc.volumes).toHaveProperty('redis-data');
  });

  it(`is accepted by ${hasDockerCompose ? 'docker-compose config' : 'a YAML parser (docker-compose not installed)'}`, () => {
    if (!hasDockerCompose) {
      const text = fs.readFileSync(composeFile, 'utf8');
      expect(() => parse(text, { merge: true, strict: true, uniqueKeys: true })).not.toThrow();
      expectParleyStack(parse(text, { merge: true }) as ComposeFile);
      return;
    }
    const quiet = dockerCompose(['config', '-q']);
    expect({ status: quiet.status, stderr: quiet.stderr }).toEqual({ status: 0, stderr: '' });

    const resolved = dockerCompose(['config']);
    expect(resolved.status).toBe(0);
    expectParleyStack(parse(resolved.stdout) as ComposeFile);
  });
});

describe('Dockerfile', () => {
  it('builds one image in stages on node:20-bookworm-slim: npm ci, build, prune dev deps', () => {
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const stages = dockerfile.match(/^FROM\s+\S+/gm) ?? [];
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.every((from) => from.endsWith('node:20-bookworm-slim'))).toBe(true);
    expect(dockerfile).toMatch(/RUN npm ci\b/);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n')).toEqual(expect.arrayContaining(['node_modules', 'dist']));
  });
});
