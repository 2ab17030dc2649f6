import { ValidationFailedError } from '@parley/contracts';
import { loadConfig } from './config';

describe('loadConfig', () => {
  it('takes PARLEY_METRICS_TOKEN for /metrics, refuses one too short to guess at, and has none by default', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ PARLEY_METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
    expect(loadConfig({ PARLEY_METRICS_TOKEN: 'a-scrape-token-0123' }).metricsToken).toBe('a-scrape-token-0123');
    let refused: unknown;
    try {
      loadConfig({ PARLEY_METRICS_TOKEN: 'short' });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ValidationFailedError);
    expect((refused as ValidationFailedError).details).toEqual({ issues: [{ field: 'PARLEY_METRICS_TOKEN', reason: expect.stringContaining('16') }] });
  });

  it('takes a variable set to "" as not set: its default, never 0', () => {
    const empty = loadConfig({ PARLEY_LIMIT_CONCURRENT_RUNS: '', PARLEY_SHUTDOWN_GRACE_MS: '', PARLEY_MODEL_STEP_RETRIES: '', REDIS_URL: '' });
    const defaults = loadConfig({});
    expect([empty.limitConcurrentRuns, empty.shutdownGraceMs, empty.redisUrl]).toEqual([defaults.limitConcurrentRuns, defaults.shutdownGraceMs, defaults.redisUrl]);
    expect(empty.shutdownGraceMs).toBeGreaterThan(0);
  });

  it('refuses a REDIS_URL that is not a redis:// or rediss:// URL, naming it', () => {
    for (const url of ['http://127.0.0.1:6379', 'notaurl', 'redis://']) {
      expect(() => loadConfig({ REDIS_URL: url })).toThrow(expect.objectContaining({ details: { issues: [{ field: 'REDIS_URL', reason: expect.stringContaining('redis://') }] } }));
    }
    expect(loadConfig({ REDIS_URL: 'rediss://user:pw@cache.internal:6380/2' }).redisUrl).toBe('rediss://user:pw@cache.internal:6380/2');
  });
});
