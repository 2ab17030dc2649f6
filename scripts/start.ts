/**
 * `npm start`: the whole of Parley on one machine. Uses (or starts) Redis, runs the three
 * services as child processes with their output prefixed, waits for the gateway's /healthz,
 * prints how to use it, and stops everything on Ctrl-C or when any service dies.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadAgentDefinitions } from '@parley/agents';
import { loadConfig, redactUrl, signToken, type ParleyConfig } from '@parley/platform';
import { OPS_PORT_DEFAULTS } from '@parley/store';
import { ensureRedis, type DevRedis } from './dev-redis';
import { formatLine } from './log-format';
import { canListen } from './ports';
import { describeExit, ServiceProcess } from './service-process';

const SERVICES = ['gateway', 'loop-worker', 'interaction-service'] as const;
const HEALTH_TIMEOUT_MS = 60_000;
/** How long our Redis gets to write its AOF and exit. */
const REDIS_STOP_MS = 10_000;
/** Beyond a loop-worker's grace period and its longest tool call: recording how steps ended, closing connections. */
const STOP_MARGIN_MS = 30_000;
const NAME_WIDTH = Math.max(...SERVICES.map((s) => s.length));
const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

const services: ServiceProcess[] = [];
let redis: DevRedis | undefined;
let stopping = false;
let stopTimeoutMs = 10_000;

function say(message: string): void {
  process.stdout.write(`${formatLine('parley', message, { width: NAME_WIDTH, color })}\n`);
}

function printFrom(name: string): (line: string) => void {
  return (line) => process.stdout.write(`${formatLine(name, line, { width: NAME_WIDTH, color })}\n`);
}

/** The dist/ entry point of a service; start.js itself lives in dist/scripts/. */
function entryOf(service: string): string {
  return path.resolve(__dirname, '..', 'apps', service, 'src', 'main.js');
}

/** Stops the services (SIGTERM, SIGKILL after a timeout), then our Redis, then exits. */
async function shutdown(reason: string, exitCode: number): Promise<void> {
  if (stopping) {
    return;
  }
  stopping = true;
  const anythingRunning = services.length > 0 || redis?.server !== undefined;
  if (anythingRunning) {
    say(`stopping (${reason})`);
  }
  if (services.length > 0) {
    say(`running steps may finish first: waiting up to ${Math.round(stopTimeoutMs / 1000)} s (Ctrl-C again to kill everything now)`);
  }
  const outcomes = await Promise.all(services.map(async (s) => ({ name: s.name, how: await s.stop(stopTimeoutMs) })));
  for (const { name } of outcomes.filter((o) => o.how === 'killed')) {
    say(`${name} did not stop within ${Math.round(stopTimeoutMs / 1000)} s: killed with SIGKILL`);
    exitCode = 1;
  }
  if (redis?.server) {
    if ((await redis.server.stop(REDIS_STOP_MS)) === 'killed') {
      say('redis-server did not stop in time: killed with SIGKILL (its last second of writes may be lost)');
      exitCode = 1;
    }
  }
  if (anythingRunning) {
    say(exitCode === 0 ? 'stopped' : `stopped, exit code ${exitCode}`);
  }
  process.exit(exitCode);
}

/**
 * How long the services get to stop: a loop-worker lets running steps finish for its grace period,
 * and waits for a tool call begun within it up to the call's timeout (the longest of the
 * deployment's agents), then records how it ended.
 */
function stopTimeoutFor(config: ParleyConfig): number {
  let longestToolMs = 0;
  try {
    for (const agent of loadAgentDefinitions(config.agentsDir)) {
      const timeouts = [agent.tools.includes('shell') ? agent.shell.timeout_secs : 0, agent.tools.includes('http_request') ? agent.http.timeout_secs : 0];
      longestToolMs = Math.max(longestToolMs, ...timeouts.map((secs) => secs * 1000));
    }
  } catch {
    // A bad agents folder: the services say so and stop.
  }
  return config.shutdownGraceMs + longestToolMs + STOP_MARGIN_MS;
}

function forceKill(): never {
  say('second signal: killing everything now');
  services.forEach((s) => s.kill());
  void redis?.server?.kill9();
  process.exit(1);
}

function onSignal(signal: NodeJS.Signals): void {
  if (stopping) {
    forceKill();
  }
  void shutdown(signal, 0);
}

function fail(message: string): Promise<void> {
  process.stderr.write(`\nparley: ${message}\n\n`);
  return shutdown('startup failed', 1);
}

async function waitForHealth(url: string): Promise<'up' | 'stopping' | 'timeout'> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (stopping) {
      return 'stopping';
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) {
        return 'up';
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return 'timeout';
}

/** Where the three services' /metrics are: one PARLEY_OPS_PORT is given to all three, so only the defaults differ. */
function metricsWhere(config: ParleyConfig): string {
  switch (config.opsPort) {
    case undefined:
      return `http://${config.opsHost}:{${Object.values(OPS_PORT_DEFAULTS).join(',')}}/metrics   (gateway, loop-worker, interaction-service; PARLEY_OPS_PORT)`;
    case 'off':
      return 'off (PARLEY_OPS_PORT=off)';
    case 0:
      return 'a free port each (PARLEY_OPS_PORT=0): every service logs its own ("health and metrics on ...")';
    default:
      return `http://${config.opsHost}:${config.opsPort}/metrics for the first service to bind it; the others log that the port is in use (PARLEY_OPS_PORT)`;
  }
}

function printWelcome(config: ParleyConfig, gatewayUrl: string, redisUrl: string): void {
  const token = signToken({ tenant: 'dev', sub: 'you', role: 'admin' }, config.jwtSecret);
  const cliEnv = gatewayUrl === 'http://127.0.0.1:8080' ? '' : `PARLEY_URL=${gatewayUrl} `;
  const lines = [
    '',
    'Parley is running.',
    '',
    `  Console      ${gatewayUrl}/?token=${token}`,
    `  Gateway      ${gatewayUrl}   (HTTP /v1, socket.io /v1, GET /health/ready)`,
    `  Metrics      ${metricsWhere(config)}`,
    `  Redis        ${redactUrl(redisUrl)}${redis?.server ? `   (started here: data in .parley/redis/${new URL(redisUrl).port}, AOF everysec)` : ''}`,
    `  Workers      1 loop-worker process, concurrency ${config.workerConcurrency} (PARLEY_WORKER_CONCURRENCY)`,
    `  Dev token    ${token}`,
    '               (tenant "dev", subject "you", role admin; valid 24 h; send as Authorization: Bearer <token>)',
  ];
  if (config.usingDevSecret) {
    lines.push(
      '',
      '  WARNING: PARLEY_JWT_SECRET is unset (or the public dev secret), so tokens are signed with the public dev secret.',
      '           Anyone can mint tokens for this gateway. Set PARLEY_JWT_SECRET before exposing it.',
    );
  }
  lines.push(
    '',
    config.anthropicApiKey
      ? '  Agent "assistant" (Anthropic) is available: ANTHROPIC_API_KEY is set.'
      : '  Agent "assistant" (Anthropic) is unavailable: set ANTHROPIC_API_KEY to use it. The scripted "demo" agent needs no key.',
    '',
    '  Next, in another terminal:',
    `    ${cliEnv}npm run parley -- run demo "Plan a team offsite"`,
    '',
    '  Stop with Ctrl-C.',
    '',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let config: ParleyConfig;
  try {
    config = loadConfig();
  } catch (error) {
    return fail(`invalid configuration: ${error instanceof Error ? error.message : String(error)}\nSee docs/configuration.md.`);
  }
  stopTimeoutMs = stopTimeoutFor(config);
  const missing = SERVICES.map(entryOf).filter((entry) => !fs.existsSync(entry));
  if (missing.length > 0) {
    return fail(`not built: ${missing.map((m) => path.relative(process.cwd(), m)).join(', ')} missing. Run \`npm run build\` (or use \`npm start\`, which builds first).`);
  }
  if (config.port === 0) {
    return fail('PORT=0 is not supported here: npm start must know the gateway port. Choose one, e.g. PORT=8080.');
  }
  // Probing on the wildcard address would always succeed against a gateway bound elsewhere.
  const probeHost = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  if (!(await canListen(probeHost, config.port))) {
    return fail(`port ${config.port} on ${probeHost} is already in use (another Parley still running?). Stop it or set PORT to a free port.`);
  }

  try {
    redis = await ensureRedis(config.redisUrl, {
      dataDir: path.resolve(process.cwd(), '.parley', 'redis'),
      log: say,
      onRedisLine: printFrom('redis'),
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  void redis.server?.exited.then((exit) => {
    if (!stopping) {
      say(`redis-server exited unexpectedly (${exit.signal ?? `code ${exit.code}`})`);
      void shutdown('redis-server exited', 1);
    }
  });

  const env = { ...process.env, REDIS_URL: redis.url };
  for (const name of SERVICES) {
    const service = ServiceProcess.spawn(name, entryOf(name), env, printFrom(name));
    services.push(service);
    void service.exited.then((exit) => {
      if (!stopping) {
        say(`${name} exited unexpectedly (${describeExit(exit)})`);
        void shutdown(`${name} crashed`, 1);
      }
    });
  }
  say(`started ${services.map((s) => `${s.name} (pid ${s.pid})`).join(', ')}`);

  const gatewayUrl = `http://${probeHost.includes(':') ? `[${probeHost}]` : probeHost}:${config.port}`;
  const health = await waitForHealth(`${gatewayUrl}/healthz`);
  if (health === 'timeout') {
    return fail(`the gateway did not answer 200 on ${gatewayUrl}/healthz within ${HEALTH_TIMEOUT_MS / 1000} s. Its log lines above should say why.`);
  }
  if (health === 'up') {
    printWelcome(config, gatewayUrl, redis.url);
  }
}

process.on('uncaughtException', (error) => {
  process.stderr.write(`parley: unexpected error: ${error.stack ?? error.message}\n`);
  void shutdown('unexpected error', 1);
});

void main();
