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

  it('says a number variable must be a whole number, and a port variable what it takes', () => {
    const issuesOf = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as { details: { issues: unknown[] } }).details.issues;
      }
      throw new Error('expected the configuration to be refused');
    };
    expect(issuesOf({ PORT: 'abc' })).toEqual([{ field: 'PORT', reason: 'must be a whole number' }]);
    expect(issuesOf({ PARLEY_LEASE_MS: '1.5' })).toEqual([{ field: 'PARLEY_LEASE_MS', reason: 'must be a whole number' }]);
    expect(issuesOf({ PARLEY_OPS_PORT: '-1' })).toEqual([{ field: 'PARLEY_OPS_PORT', reason: 'must be a port from 0 to 65535, or off' }]);
    expect(issuesOf({ PARLEY_OPS_PORT: 'of' })).toEqual([{ field: 'PARLEY_OPS_PORT', reason: 'must be a port from 0 to 65535, or off' }]);
    expect(loadConfig({ PARLEY_OPS_PORT: 'off' }).opsPort).toBe('off');
    expect(issuesOf({ PARLEY_MODEL_TIMEOUT_SECS: '0' })).toEqual([{ field: 'PARLEY_MODEL_TIMEOUT_SECS', reason: expect.stringContaining('1') }]);
    expect([loadConfig({}).modelTimeoutSecs, loadConfig({ PARLEY_MODEL_TIMEOUT_SECS: '90' }).modelTimeoutSecs]).toEqual([600, 90]);
  });
});
