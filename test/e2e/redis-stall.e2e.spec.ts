/**
 * A Redis that stops answering over a live connection (CLIENT PAUSE here; in production a stalled
 * server or a link that drops packets): the connection stays "ready", so nothing waits for it to
 * come back, and without a bound a request would wait as long as the stall. The gateway answers 503
 * `unavailable` once a command went unanswered for PARLEY_REDIS_COMMAND_TIMEOUT_MS.
 */
import { Redis } from 'ioredis';
import { askerAgent } from '../support/agents';
import { startRedisServer, type RedisServer } from '../support/redis-server';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const COMMAND_TIMEOUT_MS = 500;
const PAUSE_MS = 4000;

describe('a Redis that stops answering', () => {
  let server: RedisServer;
  let stack: TestStack;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent('asker')]),
      overrides: { redisUrl: server.url, redisCommandTimeoutMs: COMMAND_TIMEOUT_MS },
    });
  });

  afterAll(async () => {
    await stack?.close();
    admin?.disconnect();
    await server?.destroy();
  });

  it('gets requests answered 503 once a command went unanswered past the bound, not when the stall ends; then serves again', async () => {
    const before = await stack.startRun('asker', 'before the stall');
    await admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
    const pausedAt = Date.now();

    const timed = async <T>(request: Promise<T>) => {
      const started = Date.now();
      return { reply: await request, ms: Date.now() - started };
    };
    const [read, write] = await Promise.all([
      timed(stack.http('GET', `/v1/runs/${before}`)),
      timed(stack.request('POST', '/v1/runs', { agent: 'asker', task: 'during the stall' })),
    ]);
    // Both answered well before the stall ended.
    expect(Date.now() - pausedAt).toBeLessThan(PAUSE_MS - 1000);
    for (const { reply, ms } of [read, write]) {
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe('unavailable');
      expect(ms).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 50);
    }

    // The start without a key was not refused before it was sent: it may have been applied, and says so.
    expect(write.reply.body.error.message).toContain('may have been applied');
    expect(write.reply.headers.get('retry-after')).toBeNull();

    await waitFor(async () => (await stack.http('GET', `/v1/runs/${before}`)).status === 200, { timeoutMs: PAUSE_MS + 10_000, message: 'the gateway to serve again' });
    await stack.waitForQuestion(await stack.startRun('asker', 'after the stall'));
  });
});
