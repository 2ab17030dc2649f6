import { z } from 'zod';
import { queryInt } from './api.schema';
import { EntityIdSchema, TenantIdSchema } from './ids.schema';

/** The events a tenant can subscribe a webhook endpoint to (names as they appear in the event stream). */
export const WEBHOOK_EVENT_TYPES = ['interaction.opened', 'interaction.resolved', 'run.finished', 'run.failed', 'run.cancelled'] as const;
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

export const WEBHOOK_LIMITS = {
  urlChars: 2048,
  descriptionChars: 500,
  /** Deliveries kept in an endpoint's log; older ones are dropped as new ones come. */
  deliveriesPerEndpoint: 1000,
  /** Attempts kept on one delivery record. */
  attemptsPerDelivery: 25,
  /** Characters of a receiver's reply kept in the log. */
  responseChars: 300,
} as const;

/** BullMQ queue of outgoing webhook deliveries (before the deployment's prefix). */
export const WEBHOOK_QUEUE = 'webhook-deliveries';

/** BullMQ rejects ":" in custom ids; a delivery id is unique per tenant, so this is too. */
export const webhookJobId = (tenant: string, deliveryId: string): string => `wh.${tenant}.${deliveryId}`;

/** The event id a receiver sees: stable across retries and replays of the same event. */
export const webhookEventId = (tenant: string, seq: number): string => `evt.${tenant}.${seq}`;

/** Why a URL's shape is not acceptable, or null. Address checks (private ranges) come on top, with the config. */
export function webhookUrlProblem(value: string): string | null {
  // The URL parser drops tabs and newlines, and escapes spaces: the URL called would not be the one shown.
  if ([...value].some((char) => /\s/.test(char) || char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)) {
    return 'must not contain spaces or control characters';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return 'must use http or https';
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (user:password@)';
  }
  if (url.hostname === '') {
    return 'must name a host';
  }
  if (url.hash !== '') {
    return 'must not have a fragment (#...)';
  }
  return null;
}

export const WebhookUrlSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(WEBHOOK_LIMITS.urlChars)
  .superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
    }
  })
  // Kept as it will be called ("https:example.com" is https://example.com/).
  .transform((value) => new URL(value).href);

// A list first: zod would apply the length bounds to a string too, saying so in a second issue.
const EventsSchema = z
  .array(z.unknown())
  .pipe(z.array(WebhookEventTypeSchema).min(1, 'must name at least one event').max(WEBHOOK_EVENT_TYPES.length * 2))
  .transform((events) => [...new Set(events)]);

const DescriptionSchema = z.string().trim().max(WEBHOOK_LIMITS.descriptionChars);

export const CreateWebhookBodySchema = z.strictObject({
  url: WebhookUrlSchema,
  events: EventsSchema,
  description: DescriptionSchema.optional(),
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBodySchema>;

export const UpdateWebhookBodySchema = z
  .strictObject({
    url: WebhookUrlSchema.optional(),
    events: EventsSchema.optional(),
    enabled: z.boolean().optional(),
    description: DescriptionSchema.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'must change at least one of url, events, enabled, description' });
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBodySchema>;

export const ListDeliveriesQuerySchema = z.strictObject({
  limit: queryInt(1, WEBHOOK_LIMITS.deliveriesPerEndpoint).default(50),
});

/** An endpoint as the API shows it: never its secret. */
export const WebhookSchema = z.strictObject({
  id: EntityIdSchema,
  url: z.string(),
  events: z.array(WebhookEventTypeSchema),
  description: z.string().optional(),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  secretRotatedAt: z.string().optional(),
});
export type Webhook = z.infer<typeof WebhookSchema>;

/**
 * An endpoint as stored in Redis (written by the gateway, read by the interaction-service).
 * `createdSeq` is the tenant's event sequence number when the endpoint was made: it receives only
 * later events. After a rotation, each of `previousSecrets` (newest first) still signs deliveries until
 * its `until`. (`previousSecret`/`previousSecretUntil`: the one previous secret endpoints rotated before
 * that kept; still read.)
 */
export const StoredWebhookSchema = WebhookSchema.extend({
  tenant: TenantIdSchema,
  secret: z.string().min(16),
  createdSeq: z.int().min(0),
  previousSecrets: z.array(z.strictObject({ secret: z.string().min(16), until: z.string() })).optional(),
  previousSecret: z.string().min(16).optional(),
  previousSecretUntil: z.string().optional(),
});
export type StoredWebhook = z.infer<typeof StoredWebhookSchema>;

/** The JSON body POSTed to an endpoint. `id` is the event id; `seq` orders the tenant's events. */
export const WebhookPayloadSchema = z.strictObject({
  id: z.string(),
  type: WebhookEventTypeSchema,
  tenant: TenantIdSchema,
  seq: z.int().min(1),
  runId: z.string(),
  owner: z.string(),
  at: z.string(),
  data: z.unknown(),
});
export type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

export const DeliveryStatusSchema = z.enum(['pending', 'delivered', 'failed']);
export type DeliveryStatus = z.infer<typeof DeliveryStatusSchema>;

/** One try at sending a delivery: the receiver's HTTP status, or why there was none. */
export const DeliveryAttemptSchema = z.strictObject({
  at: z.string(),
  durationMs: z.int().min(0),
  status: z.int().optional(),
  error: z.string().optional(),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

export const WebhookDeliverySchema = z.strictObject({
  id: EntityIdSchema,
  webhookId: EntityIdSchema,
  eventId: z.string(),
  eventType: WebhookEventTypeSchema,
  seq: z.int().min(1),
  runId: z.string(),
  status: DeliveryStatusSchema,
  attempts: z.int().min(0),
  lastStatus: z.int().optional(),
  lastError: z.string().optional(),
  /** The delivery this one re-sends (a replay). */
  replayOf: EntityIdSchema.optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  deliveredAt: z.string().optional(),
  attemptLog: z.array(DeliveryAttemptSchema),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/** A job of the webhook delivery queue: the payload lives on the delivery record, not in the job. */
export const WebhookDeliveryJobSchema = z.strictObject({
  tenant: TenantIdSchema,
  webhookId: EntityIdSchema,
  deliveryId: EntityIdSchema,
});
export type WebhookDeliveryJob = z.infer<typeof WebhookDeliveryJobSchema>;
