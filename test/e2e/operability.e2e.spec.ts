import type { INestApplicationContext } from '@nestjs/common';
import { ServiceOps } from '@parley/store';
import { askerAgent } from '../support/agents';
import { startRedisServer, type RedisServer } from '../support/redis-server';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

function opsUrl(app: INestApplicationContext | undefined): string {
  const port = app?.get(ServiceOps).port;
  if (!port) {
    throw new Error('the service has no ops server');
  }
  return `http://127.0.0.1:${port}`;
}

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/** PARLEY_METRICS_TOKEN of this file's stack: every scrape bears it. */
const METRICS_TOKEN = 'operability-scrape-token';

async function scrape(app: INestApplicationContext | undefined): Promise<string> {
  const response = await fetch(`${opsUrl(app)}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of one sample ("name" or 'name{label="x"}') in Prometheus text, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('operability: health, readiness and metrics on every service', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent('asker'), askerAgent('hurried', 1)]),
      overrides: { opsPort: 0, metricsToken: METRICS_TOKEN },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers /health/live and /health/ready on each service, naming what it checked', async () => {
    for (const [app, workers] of [
      [stack.gateway, []],
      [stack.worker, ['worker:runs']],
      [stack.interactions, ['worker:deadlines', 'worker:schedules', 'worker:webhook-deliveries', 'worker:sweeper']],
    ] as const) {
      expect(await getJson(`${opsUrl(app)}/health/live`)).toEqual({ status: 200, body: { live: true } });
      const ready = await getJson(`${opsUrl(app)}/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body.ready).toBe(true);
      expect(Object.keys(ready.body.checks).sort()).toEqual(['queues', 'redis', ...workers].sort());
      expect(Object.values(ready.body.checks).every((check) => check === 'ok')).toBe(true);
    }
    expect((await stack.http('GET', '/health/ready', undefined, null)).status).toBe(200);
    expect((await stack.http('GET', '/health/live', undefined, null)).status).toBe(200);
    expect((await fetch(`${opsUrl(stack.gateway)}/nope`)).status).toBe(404);
    // Metrics describe the whole deployment: with PARLEY_METRICS_TOKEN set, a scrape without it is refused.
    for (const app of [stack.gateway, stack.worker, stack.interactions]) {
      expect((await fetch(`${opsUrl(app)}/metrics`)).status).toBe(401);
    }
  });

  it('counts parked runs and open interactions by kind as runs park, resume and stop', async () => {
    const before = await scrape(stack.interactions);
    expect(sample(before, 'parley_parked_runs')).toBe(0);
    const first = await stack.startRun('asker');
    const second = await stack.startRun('asker');
    const [question] = await Promise.all([stack.waitForQuestion(first), stack.waitForQuestion(second)]);
    await stack.waitForStatus(first, 'waiting');
    await stack.waitForStatus(second, 'waiting');

    let text = await scrape(stack.interactions);
    expect(sample(text, 'parley_parked_runs')).toBe(2);
    expect(sample(text, 'parley_open_interactions{kind="free_text"}')).toBe(2);

    const resumesBefore = sample(text, 'parley_answer_to_resume_seconds_count');
    expect((await stack.answer(question.id, { text: 'go' })).status).toBe(200);
    await stack.waitForStatus(first, 'finished');
    text = await scrape(stack.interactions);
    expect(sample(text, 'parley_parked_runs')).toBe(1);
    expect(sample(text, 'parley_open_interactions{kind="free_text"}')).toBe(1);
    expect(sample(text, 'parley_answer_to_resume_seconds_count')).toBe(resumesBefore + 1);
    expect(sample(text, 'parley_model_request_seconds_count{provider="scripted",outcome="ok"}')).toBeGreaterThanOrEqual(3);

    expect((await stack.http('POST', `/v1/runs/${second}/stop`)).status).toBe(200);
    await stack.waitForStatus(second, 'cancelled');
    text = await scrape(stack.interactions);
    expect(sample(text, 'parley_parked_runs')).toBe(0);
    expect(sample(text, 'parley_open_interactions{kind="free_text"}')).toBe(0);
    expect(sample(text, 'parley_queue_jobs{queue="runs",state="failed"}')).toBe(0);
    expect(sample(text, 'parley_queue_jobs{queue="sweeper",state="failed"}')).toBe(0);
  });

  it('shows Bull Board at /admin/queues to platform operators only, read-only', async () => {
    const board = `${stack.url}/admin/queues`;
    expect((await fetch(board, { headers: { accept: 'text/html' } })).status).toBe(401);
    const admin = stack.token({ role: 'admin' });
    const refused = await fetch(board, { headers: { authorization: `Bearer ${admin}` } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'forbidden', message: 'only operator tokens reach Bull Board (/admin/queues)' } });
    expect((await fetch(`${board}?token=${admin}`, { redirect: 'manual' })).status).toBe(403);

    const operator = stack.token({ tenant: 'platform', sub: 'ops', role: 'operator' });
    const signIn = await fetch(`${board}?token=${operator}`, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/admin/queues');
    const deepLink = await fetch(`${board}/queue/runs?status=failed&token=${operator}&page=2`, { redirect: 'manual' });
    expect(deepLink.headers.get('location')).toBe('/admin/queues/queue/runs?status=failed&page=2');
    const cookie = signIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^parley_admin_token=[^;]+; Path=\/admin\/queues; HttpOnly; SameSite=Strict/);
    const sent = cookie.split(';')[0];

    const page = await fetch(board, { headers: { cookie: sent, accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    const api = await fetch(`${board}/api/queues`, { headers: { cookie: sent } });
    expect(api.status).toBe(200);
    const listed = (await api.json()) as { queues: Array<{ name: string; readOnlyMode: boolean }> };
    expect(listed.queues.map((queue) => queue.name).sort()).toEqual(['deadlines', 'runs', 'schedules', 'sweeper', 'webhook-deliveries']);
    expect(listed.queues.every((queue) => queue.readOnlyMode)).toBe(true);
    // The operator's token opens nothing of a tenant.
    expect((await stack.http('GET', '/v1/runs', undefined, operator)).status).toBe(403);
  });

  it('records how late deadlines fire', async () => {
    const lateness = (text: string): number => sample(text, 'parley_deadline_lateness_seconds_count');
    const before = lateness(await scrape(stack.interactions));
    const runId = await stack.startRun('hurried');
    await stack.waitForStatus(runId, 'finished', 20_000);
    await waitFor(async () => lateness(await scrape(stack.interactions)) === before + 1, { message: 'a deadline observation' });
  });
});

describe('operability: readiness follows Redis', () => {
  let redis: RedisServer;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await startRedisServer();
    // A short grace: BullMQ workers whose Redis restarted may not close by themselves (see QueueWorker.close).
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker')]), overrides: { opsPort: 0, redisUrl: redis.url, shutdownGraceMs: 500 } });
  });
  afterAll(async () => {
    await stack.close();
    await redis.destroy();
  });

  it('is not ready while Redis is down, and ready again once it is back', async () => {
    expect((await getJson(`${opsUrl(stack.worker)}/health/ready`)).status).toBe(200);
    await redis.kill9();
    const down = await getJson(`${opsUrl(stack.worker)}/health/ready`);
    expect(down.status).toBe(503);
    expect(down.body.ready).toBe(false);
    expect(down.body.checks.redis).toHaveProperty('error');
    expect((await getJson(`${opsUrl(stack.worker)}/health/live`)).status).toBe(200);
    // The public port says what failed, not why (no addresses, no error text).
    expect(await stack.http('GET', '/health/ready', undefined, null)).toEqual({ status: 503, body: { ready: false, checks: { redis: 'failed', queues: 'failed' } } });
    expect(await stack.http('GET', '/healthz', undefined, null)).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringContaining('Redis') } } });
    // The interaction-service's scrape still answers: the gauges read from Redis unknown, the rest as ever.
    const scraped = await scrape(stack.interactions);
    expect(scraped).toMatch(/^parley_process_process_cpu_seconds_total /m);
    expect(scraped).toMatch(/^parley_parked_runs nan$/im);
    expect(scraped).not.toMatch(/^parley_(open_interactions|queue_jobs)\{/m);
    // A request is told to come back (503 with Retry-After, which clients retry), not that the gateway failed (500).
    const refused = await stack.request('GET', '/v1/runs');
    expect({ status: refused.status, body: refused.body, retryAfter: refused.headers.get('retry-after') }).toEqual({
      status: 503,
      body: { error: { code: 'unavailable', message: expect.stringContaining('try again') } },
      retryAfter: '2',
    });
    // A write sent while Redis is away is refused before anything of it is done: it may be sent again
    // as it is. (One whose connection drops midway may have been applied: error.filter.spec.ts.)
    const write = await stack.request('POST', '/v1/runs', { agent: 'asker', task: 'during the outage' });
    expect({ status: write.status, code: write.body.error.code, message: write.body.error.message, retryAfter: write.headers.get('retry-after') }).toEqual({
      status: 503,
      code: 'unavailable',
      message: expect.stringContaining('try again'),
      retryAfter: '2',
    });
    await redis.restart();
    await waitFor(async () => (await getJson(`${opsUrl(stack.worker)}/health/ready`)).status === 200, { message: 'ready again', timeoutMs: 20_000 });
    // And it works again: a new run is taken by the worker and parks on its question.
    const runId = await stack.startRun('asker');
    await stack.waitForQuestion(runId);
  });

  it('an interaction-service stopped while Redis is down takes one grace period, not one per worker, queue and connection', async () => {
    await redis.kill9();
    const started = Date.now();
    await stack.stopInteractions();
    // Its workers stop together and wait until the same time; closes over a connection that is away
    // do not wait; the webhook control loop's blocked read is not waited for. Added up, the waits
    // took 30 s here (and 40 s, the watchdog, with the default grace period).
    expect(Date.now() - started).toBeLessThan(2 * (stack.config.shutdownGraceMs + 5000));
    await redis.restart();
    await stack.startInteractions();
    await waitFor(async () => (await getJson(`${opsUrl(stack.interactions)}/health/ready`)).status === 200, { message: 'the interaction-service ready again', timeoutMs: 20_000 });
  });

  it('an interaction-service started while Redis is down comes up once Redis is back', async () => {
    await stack.stopInteractions();
    await redis.kill9();
    const starting = stack.startInteractions();
    try {
      // The outage outlasts a command connection's retries (a restart during an outage, as in the chaos run).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await redis.restart();
    } finally {
      await starting;
    }
    await waitFor(async () => (await getJson(`${opsUrl(stack.interactions)}/health/ready`)).status === 200, { message: 'the interaction-service ready', timeoutMs: 20_000 });
  });
});
