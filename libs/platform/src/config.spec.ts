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
});
