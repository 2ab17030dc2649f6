import { RateLimitedError } from '@parley/contracts';
import { SUBSCRIBE_BURST, SubscribeBudget } from './subscribe.budget';

describe('a socket’s subscribe budget', () => {
  it('allows a burst, then one per 60/perMinute seconds, saying when the next is allowed', () => {
    const budget = new SubscribeBudget(60, 0);
    for (let i = 0; i < SUBSCRIBE_BURST; i++) {
      expect(budget.take(0)).toEqual({ status: 'taken' });
    }
    expect(budget.take(0)).toEqual({ status: 'spent', retryAfterSecs: 1 });
    expect(budget.take(999)).toMatchObject({ status: 'spent' });
    expect(budget.take(1000)).toEqual({ status: 'taken' });
    expect(budget.take(1000)).toEqual({ status: 'spent', retryAfterSecs: 1 });
  });

  it('refills up to the burst only, and rounds the wait up to whole seconds', () => {
    const budget = new SubscribeBudget(6, 0);
    for (let i = 0; i < SUBSCRIBE_BURST; i++) {
      budget.take(0);
    }
    expect(budget.take(0)).toEqual({ status: 'spent', retryAfterSecs: 10 });
    expect(budget.take(4_500)).toEqual({ status: 'spent', retryAfterSecs: 6 });
    // An hour idle refills the burst, no more.
    const rested = 3_600_000;
    for (let i = 0; i < SUBSCRIBE_BURST; i++) {
      expect(budget.take(rested)).toEqual({ status: 'taken' });
    }
    expect(budget.take(rested)).toMatchObject({ status: 'spent' });
  });

  it('0 is no limit; spend throws the 429 naming the limit', () => {
    const unlimited = new SubscribeBudget(0, 0);
    for (let i = 0; i < 1000; i++) {
      expect(unlimited.take(0)).toEqual({ status: 'taken' });
    }
    const budget = new SubscribeBudget(60, 0);
    for (let i = 0; i < SUBSCRIBE_BURST; i++) {
      budget.spend(0);
    }
    expect(() => budget.spend(0)).toThrow(RateLimitedError);
    try {
      budget.spend(0);
    } catch (error) {
      expect(error).toMatchObject({ code: 'rate_limited', details: { limit: 'socket_subscribes_per_minute', retryAfterSecs: 1 } });
    }
  });
});
