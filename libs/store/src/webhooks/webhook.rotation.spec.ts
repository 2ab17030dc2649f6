import type { StoredWebhook } from '@parley/contracts';
import { MAX_PREVIOUS_SECRETS, rotated, signingSecrets } from './webhook.repository';

const T0 = new Date('2026-11-30T12:00:00Z');
const at = (secs: number) => new Date(T0.getTime() + secs * 1000);
const endpoint: StoredWebhook = {
  id: 'wh',
  tenant: 'acme',
  url: 'https://hooks.example.com/a',
  events: ['run.finished'],
  enabled: true,
  createdAt: T0.toISOString(),
  updatedAt: T0.toISOString(),
  secret: 'whsec_aaaaaaaaaaaaaaaa',
  createdSeq: 0,
};

describe('rotating a webhook secret', () => {
  it('keeps every replaced secret signing for its grace period, newest first, however often it is rotated', () => {
    const once = rotated(endpoint, 'whsec_bbbbbbbbbbbbbbbb', 60, T0);
    const twice = rotated(once, 'whsec_cccccccccccccccc', 60, at(10));
    expect(signingSecrets(twice, at(20))).toEqual(['whsec_cccccccccccccccc', 'whsec_bbbbbbbbbbbbbbbb', 'whsec_aaaaaaaaaaaaaaaa']);
    // The first replaced secret's grace ends first.
    expect(signingSecrets(twice, at(65))).toEqual(['whsec_cccccccccccccccc', 'whsec_bbbbbbbbbbbbbbbb']);
    expect(signingSecrets(twice, at(75))).toEqual(['whsec_cccccccccccccccc']);
  });

  it(`signs with at most ${MAX_PREVIOUS_SECRETS} previous secrets, and drops those whose grace is over`, () => {
    let current = endpoint;
    for (let n = 1; n <= 5; n++) {
      current = rotated(current, `whsec_${String(n).repeat(16)}`, 60, at(n));
    }
    expect(signingSecrets(current, at(6))).toEqual(['whsec_5555555555555555', 'whsec_4444444444444444', 'whsec_3333333333333333', 'whsec_2222222222222222']);
    expect(rotated(current, 'whsec_6666666666666666', 60, at(100)).previousSecrets).toEqual([{ secret: 'whsec_5555555555555555', until: at(160).toISOString() }]);
  });

  it('carries on the one previous secret an endpoint rotated before kept', () => {
    const older: StoredWebhook = { ...endpoint, previousSecret: 'whsec_oooooooooooooooo', previousSecretUntil: at(30).toISOString() };
    expect(signingSecrets(older, at(10))).toEqual(['whsec_aaaaaaaaaaaaaaaa', 'whsec_oooooooooooooooo']);
    const next = rotated(older, 'whsec_bbbbbbbbbbbbbbbb', 60, at(10));
    expect(next).not.toHaveProperty('previousSecret');
    expect(signingSecrets(next, at(20))).toEqual(['whsec_bbbbbbbbbbbbbbbb', 'whsec_aaaaaaaaaaaaaaaa', 'whsec_oooooooooooooooo']);
  });
});
