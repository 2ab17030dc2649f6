import type { ParleyEvent } from '@parley/contracts';
import { LIVE_BUFFER, admits, type Subscription } from './subscription';

const event = (seq: number, runId = 'run-1'): ParleyEvent =>
  ({ seq, tenant: 'acme', runId, owner: 'alice', at: '2026-11-30T00:00:00.000Z', type: 'run.status', data: { status: 'running' } });

describe('a subscription', () => {
  it('while its replay runs, holds the live events it asked for, and past LIVE_BUFFER starts over and says so', () => {
    const subscription: Subscription = { runId: 'run-1', lastSeq: 0, buffer: [] };
    expect(admits(subscription, event(1, 'run-2'))).toBe(false);
    expect(subscription.buffer).toEqual([]);
    for (let seq = 1; seq <= LIVE_BUFFER; seq++) {
      expect(admits(subscription, event(seq))).toBe(false);
    }
    expect(subscription.buffer).toHaveLength(LIVE_BUFFER);
    expect(subscription.overflowed).toBeUndefined();
    admits(subscription, event(LIVE_BUFFER + 1));
    expect(subscription.overflowed).toBe(true);
    expect(subscription.buffer?.map((e) => e.seq)).toEqual([LIVE_BUFFER + 1]);
  });

  it('once live, takes each event it asked for once, in order, and moves past the others', () => {
    const subscription: Subscription = { runId: 'run-1', lastSeq: 5, buffer: null };
    expect(admits(subscription, event(5))).toBe(false);
    expect(admits(subscription, event(6, 'run-2'))).toBe(false);
    expect(subscription.lastSeq).toBe(6);
    expect(admits(subscription, event(7))).toBe(true);
    expect(admits(subscription, event(7))).toBe(false);
  });
});
