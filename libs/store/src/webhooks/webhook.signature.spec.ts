import { createHmac } from 'node:crypto';
import { newWebhookSecret, signWebhook, signatureHeader, verifyWebhookSignature } from './webhook.signature';

describe('webhook signatures', () => {
  const secret = 'whsec_0123456789abcdef0123456789abcdef';
  const body = '{"id":"evt.acme.7","type":"run.finished"}';

  it('is the hex HMAC-SHA256 of "<timestamp>.<raw body>" with the whole secret as key', () => {
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    expect(signWebhook(secret, 1700000000, body)).toBe(expected);
    expect(signatureHeader([secret], 1700000000, body)).toBe(`v1=${expected}`);
  });

  it('carries one v1 signature per secret in force, and either verifies', () => {
    const other = newWebhookSecret();
    const header = signatureHeader([other, secret], 1700000000, body);
    expect(header.split(' ')).toHaveLength(2);
    for (const key of [secret, other]) {
      expect(verifyWebhookSignature({ secret: key, header, timestamp: '1700000000', body, nowSecs: 1700000010 })).toBe(true);
    }
  });

  it('refuses a changed body, a changed timestamp, another secret, an old timestamp and garbage', () => {
    const header = signatureHeader([secret], 1700000000, body);
    const ok = { secret, header, timestamp: '1700000000', body, nowSecs: 1700000000 };
    expect(verifyWebhookSignature(ok)).toBe(true);
    expect(verifyWebhookSignature({ ...ok, body: body.replace('7', '8') })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, timestamp: '1700000001' })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, secret: newWebhookSecret() })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, nowSecs: 1700000000 + 301 })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, timestamp: 'soon' })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, header: 'v1=zz' })).toBe(false);
    expect(verifyWebhookSignature({ ...ok, header: header.replace('v1=', 'v0=') })).toBe(false);
  });

  it('mints distinct secrets of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
