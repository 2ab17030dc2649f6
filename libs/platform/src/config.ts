import { hostname } from 'node:os';
import { z } from 'zod';
import { ValidationFailedError, toIssues } from '@parley/contracts';

const DEV_SECRET = 'parley-dev-secret-change-me';

/** One Redis Cluster node: host (or [IPv6]) and port 1–65535. */
const CLUSTER_NODE = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])$/;

/** An integer variable: "abc" or "1.5" is "must be a whole number", not a number parser's NaN. */
const wholeNumber = () => z.coerce.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a whole number' : undefined) }).int({ error: 'must be a whole number' });

const OPS_PORT_RULE = 'must be a port from 0 to 65535, or off';

/** Every environment variable Parley reads, declared and validated in one place. */
const EnvSchema = z.object({
  REDIS_URL: z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL').default('redis://127.0.0.1:6379'),
  /** Redis Cluster: some of its nodes (host:port, comma-separated); REDIS_URL then gives only user, password and TLS. */
  REDIS_CLUSTER_NODES: z
      .string()
      .transform((list) => list.split(',').map((node) => node.trim()))
      .pipe(z.array(z.string().regex(CLUSTER_NODE, 'must be host:port with a port from 1 to 65535')).min(1).max(64))
      .optional(),
  /** Gateway: how long a request's Redis command may go unanswered (a Redis that stalls, a link that drops packets) before the request is answered 503. */
  PARLEY_REDIS_COMMAND_TIMEOUT_MS: wholeNumber().min(100).max(600_000).default(5000),
  PARLEY_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('parley'),
  PARLEY_JWT_SECRET: z.string().min(16).optional(),
  /** An identity provider's JWKS endpoint (jwks_uri): tokens signed with its public keys are accepted. */
  PARLEY_JWKS_URL: z
      .url({ protocol: /^https?$/ })
      // Whoever can answer a plain-HTTP fetch of the key set could sign tokens of any tenant and role.
      .refine((url) => url.startsWith('https:') || /^http:\/\/(localhost|127\.[\d.]+|\[::1\])(:\d+)?(\/|$)/.test(url), 'must be https:// (http:// only on this host: localhost, 127.x, [::1])')
      .optional(),
  /** The same as a local file, for air-gapped deployments and tests. */
  PARLEY_JWKS_FILE: z.string().optional(),
  /** How long a fetched PARLEY_JWKS_URL key set is used before it is fetched again. */
  PARLEY_JWKS_CACHE_SECS: wholeNumber().min(1).max(86_400).default(600),
  PARLEY_JWT_ISSUER: z.string().optional(),
  PARLEY_JWT_AUDIENCE: z.string().optional(),
  PARLEY_JWT_CLOCK_SKEW_SECS: wholeNumber().min(0).max(600).default(30),
  PARLEY_AGENTS_DIR: z.string().default('agents'),
  PARLEY_HOST: z.string().default('127.0.0.1'),
  /** A gateway on a non-loopback address starts with the public development secret only when this is true. */
  PARLEY_ALLOW_DEV_SECRET: z.enum(['true', 'false']).default('false'),
  PORT: wholeNumber().min(0).max(65535).default(8080),
  PARLEY_WORKER_CONCURRENCY: wholeNumber().min(1).max(1000).default(8),
  /** Short enough that a dead worker's run is taken over within ~5 s (lease, then one stalled check). */
  PARLEY_LEASE_MS: wholeNumber().min(1000).max(600_000).default(3_000),
  /** How often the interaction-service's sweeper looks for runs and interactions whose job was lost. */
  PARLEY_SWEEP_MS: wholeNumber().min(100).max(3_600_000).default(10_000),
  /** Names a loop-worker in its logs and in the `worker` field of the runs it advances. */
  PARLEY_WORKER_ID: z.string().regex(/^[A-Za-z0-9_.:@-]{1,128}$/).optional(),
  PARLEY_WORKSPACE_MAX_FILE_BYTES: wholeNumber().min(1).default(256 * 1024),
  PARLEY_WORKSPACE_MAX_BYTES: wholeNumber().min(1).default(5 * 1024 * 1024),
  PARLEY_RETENTION_SECS: wholeNumber().min(60).default(7 * 24 * 3600),
  PARLEY_EVENTS_MAXLEN: wholeNumber().min(100).default(100_000),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.string().optional(),
  PARLEY_MODEL_MAX_RETRIES: wholeNumber().min(0).max(10).default(4),
  /** How long one try of a model call may wait for the answer to start, and how long its stream may then go silent. */
  PARLEY_MODEL_TIMEOUT_SECS: wholeNumber().min(1).max(3600).default(600),
  /** Times a step whose model call failed in a way that may pass (overload, rate limit, network) is tried again later. */
  PARLEY_MODEL_STEP_RETRIES: wholeNumber().min(0).max(50).default(8),
  /** The first wait before such a step is tried again; doubled each time, up to 60 s. */
  PARLEY_MODEL_STEP_RETRY_MS: wholeNumber().min(1).max(600_000).default(2_000),
  /** Comma-separated shell programs (optionally "program subcommand") that need no approval in any agent. */
  PARLEY_SAFE_COMMANDS: z.string().default(''),
  PARLEY_APPROVAL_CLAIM_SECS: wholeNumber().min(10).max(24 * 3600).default(600),
  /** Per-tenant limits, the same for every tenant; 0 turns a limit off. */
  PARLEY_LIMIT_RUNS_PER_MINUTE: wholeNumber().min(0).default(120),
  PARLEY_LIMIT_RUNS_PER_MINUTE_PER_USER: wholeNumber().min(0).default(30),
  PARLEY_LIMIT_CONCURRENT_RUNS: wholeNumber().min(0).default(500),
  PARLEY_LIMIT_CONCURRENT_RUNS_PER_USER: wholeNumber().min(0).default(100),
  PARLEY_LIMIT_OPEN_INTERACTIONS: wholeNumber().min(0).default(1000),
  PARLEY_LIMIT_SOCKETS: wholeNumber().min(0).default(1000),
  PARLEY_LIMIT_SOCKETS_PER_USER: wholeNumber().min(0).default(50),
  PARLEY_LIMIT_MESSAGES_PER_MINUTE: wholeNumber().min(0).default(600),
  PARLEY_LIMIT_MESSAGES_PER_MINUTE_PER_USER: wholeNumber().min(0).default(120),
  /** Subscribes one socket may send a minute, after a burst of 10; 0 turns it off. */
  PARLEY_LIMIT_SUBSCRIBES_PER_MINUTE_PER_SOCKET: wholeNumber().min(0).default(60),
  /** Webhooks: deliver to private, loopback and link-local addresses too (tests, on-premises receivers). */
  PARLEY_WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  PARLEY_WEBHOOK_MAX_ENDPOINTS: wholeNumber().min(1).max(1000).default(20),
  PARLEY_WEBHOOK_ATTEMPTS: wholeNumber().min(1).max(25).default(8),
  PARLEY_WEBHOOK_BACKOFF_MS: wholeNumber().min(10).max(3_600_000).default(15_000),
  PARLEY_WEBHOOK_TIMEOUT_MS: wholeNumber().min(100).max(60_000).default(10_000),
  PARLEY_WEBHOOK_CONCURRENCY: wholeNumber().min(1).max(500).default(16),
  PARLEY_WEBHOOK_ENDPOINT_CONCURRENCY: wholeNumber().min(1).max(500).default(4),
  /** Deliveries of one tenant sent at once, across every interaction-service (0: no bound). */
  PARLEY_WEBHOOK_TENANT_CONCURRENCY: wholeNumber().min(0).max(5000).default(8),
  PARLEY_WEBHOOK_PAUSE_AFTER: wholeNumber().min(1).max(1000).default(5),
  PARLEY_WEBHOOK_PAUSE_MS: wholeNumber().min(10).max(3_600_000).default(30_000),
  PARLEY_WEBHOOK_CLAIM_IDLE_MS: wholeNumber().min(100).max(3_600_000).default(60_000),
  PARLEY_WEBHOOK_ROUTE_TRIES: wholeNumber().min(2).max(1000).default(20),
  /** How long a stopping loop-worker lets running steps finish before it hands their runs back. */
  PARLEY_SHUTDOWN_GRACE_MS: wholeNumber().min(0).max(600_000).default(10_000),
  /** Port of the service's operations server (/health/live, /health/ready, /metrics); "off" turns it off. */
  PARLEY_OPS_PORT: z
    .string()
    .regex(/^(off|\d{1,5})$/, OPS_PORT_RULE)
    .transform((value) => (value === 'off' ? ('off' as const) : Number(value)))
    .refine((port) => port === 'off' || port <= 65535, OPS_PORT_RULE)
    .optional(),
  /** Address the operations server listens on; default PARLEY_HOST. */
  PARLEY_OPS_HOST: z.string().optional(),
  /** A bearer token /metrics requires when set (a scraper sends `Authorization: Bearer <token>`). */
  PARLEY_METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The built web console the gateway serves at `/` (default: dist/console of the package). */
  PARLEY_CONSOLE_DIR: z.string().optional(),
});

export interface ParleyConfig {
  redisUrl: string;
  /** Cluster mode when set: seed nodes (host:port) of a Redis Cluster; see docs/cluster.md. */
  redisClusterNodes?: string[];
  /** Gateway: a request's Redis command unanswered this long fails it with 503 `unavailable` (it may have been applied). */
  redisCommandTimeoutMs: number;
  /** Namespace of every Redis key and BullMQ queue of this deployment. */
  prefix: string;
  /** HS256 secret: dev tokens (CLI, `npm start`) are signed with it. */
  jwtSecret: string;
  /**
   * Whether tokens signed with jwtSecret (HS256) are accepted. Always without a key set; with one
   * (PARLEY_JWKS_URL / PARLEY_JWKS_FILE) only when PARLEY_JWT_SECRET is set to another value, so the
   * public dev secret never opens a deployment that uses an identity provider.
   */
  acceptSecretTokens: boolean;
  /** How long a fetched remote key set is used (a removed key stops verifying within this); a verified token is trusted no longer. */
  jwksCacheSecs: number;
  /** The gateway accepts tokens signed with the public development secret. */
  usingDevSecret: boolean;
  /** PARLEY_ALLOW_DEV_SECRET: a gateway reachable from elsewhere may still start with the development secret. */
  allowDevSecret: boolean;
  /** Remote JWKS (asymmetric keys of an identity provider). At most one of jwksUrl and jwksFile. */
  jwksUrl?: string;
  /** Local JWKS file, read when the gateway starts. */
  jwksFile?: string;
  /** When set, every token must carry this `iss`. */
  jwtIssuer?: string;
  /** When set, every token's `aud` must contain this. */
  jwtAudience?: string;
  /** Leeway for `exp`, `nbf` and `iat`. */
  jwtClockSkewSecs: number;
  agentsDir: string;
  host: string;
  port: number;
  workerConcurrency: number;
  leaseMs: number;
  sweepMs: number;
  /** This process as a loop-worker: PARLEY_WORKER_ID, or hostname:pid. */
  workerId: string;
  workspaceMaxFileBytes: number;
  workspaceMaxBytes: number;
  retentionSecs: number;
  eventsMaxLen: number;
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  modelMaxRetries: number;
  modelTimeoutSecs: number;
  /** Times a step whose model call failed retryably is tried again later, before the run fails. */
  modelStepRetries: number;
  /** The first wait before that; doubled each time, up to 60 s. */
  modelStepRetryMs: number;
  /** Safe commands added to the shipped defaults for every agent. */
  safeCommands: string[];
  /** How long an admin's claim on an approval lasts. */
  approvalClaimSecs: number;
  /** Runs a tenant may start per minute through the gateway (0 = no limit). */
  limitRunsPerMinute: number;
  /** Runs that may be started for one user (the run's owner) of a tenant per minute (0 = no limit). */
  limitUserRunsPerMinute: number;
  /** Runs of a tenant not yet ended; a start past it is refused (0 = no limit). */
  limitConcurrentRuns: number;
  /** Runs of one owner (the caller, or a service token's onBehalfOf) that have not ended; 0 = off. */
  limitUserConcurrentRuns: number;
  /** Open interactions of a tenant; a start past it is refused (0 = no limit). */
  limitOpenInteractions: number;
  /** socket.io connections of a tenant across all gateways (0 = no limit). */
  limitSockets: number;
  /** Live socket.io connections of one user (token subject) of a tenant, across gateways (0 = no limit). */
  limitSocketsPerUser: number;
  /** Messages to runs a tenant may send per minute (0 = no limit). */
  limitMessagesPerMinute: number;
  /** Messages one user of a tenant may send per minute; service tokens are not limited on their own (0 = no limit). */
  limitUserMessagesPerMinute: number;
  /** Subscribes one socket may send a minute (after a burst); 0 = no limit. */
  limitSocketSubscribesPerMinute: number;
  /** Webhooks may target private, loopback and link-local addresses (refused by default). */
  webhookAllowPrivate: boolean;
  /** Webhook endpoints per tenant. */
  webhookMaxEndpoints: number;
  /** Tries per webhook delivery, the first included. */
  webhookAttempts: number;
  /** First retry delay of a webhook delivery; doubles on each retry. */
  webhookBackoffMs: number;
  /** How long one webhook attempt may take, connect to last byte. */
  webhookTimeoutMs: number;
  /** Webhook deliveries one interaction-service sends at once. */
  webhookConcurrency: number;
  /** Deliveries to one endpoint sent at once, across every interaction-service. */
  webhookEndpointConcurrency: number;
  webhookTenantConcurrency: number;
  /** Failures in a row (no answer, 5xx, 408, 429) after which an endpoint is paused. */
  webhookPauseAfter: number;
  /** The first pause of a failing endpoint; doubled per further failure in a row, up to 32 times this. */
  webhookPauseMs: number;
  /** Events a dispatcher read but did not finish for this long are taken over by another (checked as often). */
  webhookClaimIdleMs: number;
  /** Failed tries to route an event (record its deliveries, Redis answering) after which it is given up: acknowledged, logged, counted. */
  webhookRouteTries: number;
  /** How long a stopping loop-worker lets running steps finish before it hands their runs back. */
  shutdownGraceMs: number;
  /** Operations server port; undefined = the service's default (see OPS_PORT_DEFAULTS), 'off' = none. */
  opsPort?: number | 'off';
  /** Address of the operations server (/health, and /metrics without metricsToken, need no token: keep it off public interfaces). */
  opsHost: string;
  /** When set, /metrics answers only requests bearing this token. */
  metricsToken?: string;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Folder of the built web console; unset: dist/console of the package. */
  consoleDir?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<ParleyConfig> = {}): ParleyConfig {
  // An empty variable is one not set (compose files often pass `VAR=`): never 0 or "" by coercion.
  const parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')));
  if (!parsed.success) {
    throw new ValidationFailedError('environment', toIssues(parsed.error));
  }
  const e = parsed.data;
  if (e.PARLEY_JWKS_URL && e.PARLEY_JWKS_FILE) {
    throw new ValidationFailedError('environment', [{ field: 'PARLEY_JWKS_FILE', reason: 'set PARLEY_JWKS_URL or PARLEY_JWKS_FILE, not both' }]);
  }
  const usingKeySet = e.PARLEY_JWKS_URL !== undefined || e.PARLEY_JWKS_FILE !== undefined;
  const jwtSecret = e.PARLEY_JWT_SECRET ?? DEV_SECRET;
  // The public dev secret never opens a deployment that uses an identity provider, even when set
  // explicitly (a compose file passing its placeholder through).
  const acceptSecretTokens = !usingKeySet || jwtSecret !== DEV_SECRET;
  return {
    redisUrl: e.REDIS_URL,
    redisCommandTimeoutMs: e.PARLEY_REDIS_COMMAND_TIMEOUT_MS,
    ...(e.REDIS_CLUSTER_NODES ? { redisClusterNodes: e.REDIS_CLUSTER_NODES } : {}),
    prefix: e.PARLEY_PREFIX,
    jwtSecret,
    acceptSecretTokens,
    usingDevSecret: acceptSecretTokens && jwtSecret === DEV_SECRET,
    allowDevSecret: e.PARLEY_ALLOW_DEV_SECRET === 'true',
    ...(e.PARLEY_JWKS_URL ? { jwksUrl: e.PARLEY_JWKS_URL } : {}),
    ...(e.PARLEY_JWKS_FILE ? { jwksFile: e.PARLEY_JWKS_FILE } : {}),
    ...(e.PARLEY_JWT_ISSUER ? { jwtIssuer: e.PARLEY_JWT_ISSUER } : {}),
    ...(e.PARLEY_JWT_AUDIENCE ? { jwtAudience: e.PARLEY_JWT_AUDIENCE } : {}),
    jwtClockSkewSecs: e.PARLEY_JWT_CLOCK_SKEW_SECS,
    jwksCacheSecs: e.PARLEY_JWKS_CACHE_SECS,
    agentsDir: e.PARLEY_AGENTS_DIR,
    host: e.PARLEY_HOST,
    port: e.PORT,
    workerConcurrency: e.PARLEY_WORKER_CONCURRENCY,
    leaseMs: e.PARLEY_LEASE_MS,
    sweepMs: e.PARLEY_SWEEP_MS,
    workerId: e.PARLEY_WORKER_ID ?? `${hostname()}:${process.pid}`,
    workspaceMaxFileBytes: e.PARLEY_WORKSPACE_MAX_FILE_BYTES,
    workspaceMaxBytes: e.PARLEY_WORKSPACE_MAX_BYTES,
    retentionSecs: e.PARLEY_RETENTION_SECS,
    eventsMaxLen: e.PARLEY_EVENTS_MAXLEN,
    anthropicApiKey: e.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: e.ANTHROPIC_BASE_URL || undefined,
    modelMaxRetries: e.PARLEY_MODEL_MAX_RETRIES,
    modelTimeoutSecs: e.PARLEY_MODEL_TIMEOUT_SECS,
    modelStepRetries: e.PARLEY_MODEL_STEP_RETRIES,
    modelStepRetryMs: e.PARLEY_MODEL_STEP_RETRY_MS,
    safeCommands: e.PARLEY_SAFE_COMMANDS.split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
    approvalClaimSecs: e.PARLEY_APPROVAL_CLAIM_SECS,
    limitRunsPerMinute: e.PARLEY_LIMIT_RUNS_PER_MINUTE,
    limitUserRunsPerMinute: e.PARLEY_LIMIT_RUNS_PER_MINUTE_PER_USER,
    limitConcurrentRuns: e.PARLEY_LIMIT_CONCURRENT_RUNS,
    limitUserConcurrentRuns: e.PARLEY_LIMIT_CONCURRENT_RUNS_PER_USER,
    limitOpenInteractions: e.PARLEY_LIMIT_OPEN_INTERACTIONS,
    limitSockets: e.PARLEY_LIMIT_SOCKETS,
    limitSocketsPerUser: e.PARLEY_LIMIT_SOCKETS_PER_USER,
    limitMessagesPerMinute: e.PARLEY_LIMIT_MESSAGES_PER_MINUTE,
    limitUserMessagesPerMinute: e.PARLEY_LIMIT_MESSAGES_PER_MINUTE_PER_USER,
    limitSocketSubscribesPerMinute: e.PARLEY_LIMIT_SUBSCRIBES_PER_MINUTE_PER_SOCKET,
    webhookAllowPrivate: e.PARLEY_WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookMaxEndpoints: e.PARLEY_WEBHOOK_MAX_ENDPOINTS,
    webhookAttempts: e.PARLEY_WEBHOOK_ATTEMPTS,
    webhookBackoffMs: e.PARLEY_WEBHOOK_BACKOFF_MS,
    webhookTimeoutMs: e.PARLEY_WEBHOOK_TIMEOUT_MS,
    webhookConcurrency: e.PARLEY_WEBHOOK_CONCURRENCY,
    webhookEndpointConcurrency: e.PARLEY_WEBHOOK_ENDPOINT_CONCURRENCY,
    webhookTenantConcurrency: e.PARLEY_WEBHOOK_TENANT_CONCURRENCY,
    webhookPauseAfter: e.PARLEY_WEBHOOK_PAUSE_AFTER,
    webhookPauseMs: e.PARLEY_WEBHOOK_PAUSE_MS,
    webhookClaimIdleMs: e.PARLEY_WEBHOOK_CLAIM_IDLE_MS,
    webhookRouteTries: e.PARLEY_WEBHOOK_ROUTE_TRIES,
    shutdownGraceMs: e.PARLEY_SHUTDOWN_GRACE_MS,
    ...(e.PARLEY_OPS_PORT !== undefined ? { opsPort: e.PARLEY_OPS_PORT } : {}),
    opsHost: e.PARLEY_OPS_HOST ?? e.PARLEY_HOST,
    ...(e.PARLEY_METRICS_TOKEN !== undefined ? { metricsToken: e.PARLEY_METRICS_TOKEN } : {}),
    logLevel: e.LOG_LEVEL,
    ...(e.PARLEY_CONSOLE_DIR ? { consoleDir: e.PARLEY_CONSOLE_DIR } : {}),
    ...overrides,
  };
}

/**
 * Why a gateway must not start: it would accept tokens signed with the public development secret on
 * an address other machines reach (anyone could sign an admin token of any tenant). Null when it may.
 */
export function devSecretExposure(config: Pick<ParleyConfig, 'usingDevSecret' | 'allowDevSecret' | 'host'>): string | null {
  const loopback = config.host === 'localhost' || config.host === '::1' || config.host.startsWith('127.');
  if (!config.usingDevSecret || loopback || config.allowDevSecret) {
    return null;
  }
  return `refusing to listen on ${config.host} with the public development secret (PARLEY_JWT_SECRET is unset): anyone could sign tokens. Set PARLEY_JWT_SECRET to a long random value (openssl rand -hex 32), or PARLEY_ALLOW_DEV_SECRET=true for a throwaway trial`;
}
