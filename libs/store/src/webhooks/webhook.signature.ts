import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Headers of a webhook request (lowercase, as Node gives them to a receiver). */
export const WEBHOOK_HEADERS = {
  deliveryId: 'parley-webhook-id',
  eventId: 'parley-event-id',
  timestamp: 'parley-timestamp',
  signature: 'parley-signature',
} as const;

/** A fresh signing secret: 32 random bytes. The whole string, prefix included, is the HMAC key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** hex HMAC-SHA256(secret, "<timestamp>.<body>"): what a receiver recomputes over the raw body. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** The signature header: one `v1=<hex>` per secret in force (two during a rotation's grace period). */
export function signatureHeader(secrets: string[], timestamp: number, body: string): string {
  return secrets.map((secret) => `v1=${signWebhook(secret, timestamp, body)}`).join(' ');
}

export interface VerifyInput {
  secret: string;
  /** The parley-signature header. */
  header: string;
  /** The parley-timestamp header. */
  timestamp: string;
  /** The raw request body, exactly as received. */
  body: string;
  /** How old (or how far ahead) the timestamp may be; 5 minutes by default. */
  toleranceSecs?: number;
  nowSecs?: number;
}

/** What a receiver does: the timestamp is recent and one of the `v1=` signatures matches, compared in constant time. */
export function verifyWebhookSignature({ secret, header, timestamp, body, toleranceSecs = 300, nowSecs = Math.floor(Date.now() / 1000) }: VerifyInput): boolean {
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowSecs - Number(timestamp)) > toleranceSecs) {
    return false;
  }
  const expected = Buffer.from(signWebhook(secret, Number(timestamp), body), 'hex');
  return header
    .split(' ')
    .filter((part) => part.startsWith('v1='))
    .some((part) => {
      const given = Buffer.from(part.slice(3), 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
