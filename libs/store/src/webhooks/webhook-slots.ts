import type { StoreContext } from '../store.context';

/** How an endpoint is protected from piling up: deliveries in flight at once, and pauses after failures in a row. */
export interface EndpointGuard {
  /** Deliveries to one endpoint being sent at once, across every interaction-service. */
  inFlight: number;
  /** Deliveries of one tenant being sent at once, to all its endpoints (0: no bound). */
  tenantInFlight: number;
  /** Failures in a row (no answer, 5xx, 408, 429) after which the endpoint is paused. */
  failuresToPause: number;
  /** The first pause; each further failure in a row doubles it, up to `longestPauseMs`. */
  pauseMs: number;
  longestPauseMs: number;
  /** A slot never given back (its sender died) lapses this long after it was taken. */
  slotLapseMs: number;
}

/**
 * `busy`: look again in `retryInMs`, about when this delivery's turn could come. `paused`: until
 * `until` by Redis's clock, which is `retryInMs` from now (wait that long: this host's clock may differ).
 */
export type SlotResult = { status: 'ok' } | { status: 'paused'; until: number; retryInMs: number } | { status: 'busy'; retryInMs: number };

export interface SlotReturn {
  failures: number;
  /** When this try paused the endpoint, until when (epoch ms). */
  pausedUntil: number | null;
}

/** Health of a quiet endpoint is forgotten after this. */
const HEALTH_TTL_SECS = 24 * 3600;
/** A delivery waiting for a busy endpoint looks again at least this often (and at most every 50 ms)... */
const LONGEST_WAIT_MS = 60_000;
/** ...and stops counting as waiting when it has not looked for this long. */
const WAITER_STALE_MS = 5 * LONGEST_WAIT_MS;

/**
 * Slots to send to an endpoint. A dead or slow receiver holds at most `inFlight` of the workers'
 * slots, and after `failuresToPause` failures in a row none: its deliveries wait, without using up
 * their tries, while those of every other endpoint go on. A tenant's endpoints together hold at most
 * `tenantInFlight`, so that one tenant's hanging receivers do not hold every sender.
 */
export class WebhookSlots {
  constructor(
    private readonly ctx: StoreContext,
    private readonly guard: EndpointGuard,
  ) {}

  /** `now` is for tests; by default Redis's clock is used, so that hosts' clocks need not agree. */
  async take(tenant: string, webhookId: string, deliveryId: string, now?: number): Promise<SlotResult> {
    const k = this.ctx.keys;
    const [status, value, waiting, most] = (await this.ctx.scripts.run(
      'webhookSlotTake',
      [k.webhookInflight(tenant, webhookId), k.webhookHealth(tenant, webhookId), k.webhookWaiting(tenant, webhookId), k.webhookTenantInflight(tenant)],
      [deliveryId, now ?? '', this.guard.slotLapseMs, this.guard.inFlight, this.guard.failuresToPause, WAITER_STALE_MS, this.guard.tenantInFlight],
    )) as [string, number?, number?, number?];
    switch (status) {
      case 'paused':
        return { status: 'paused', until: Number(value), retryInMs: Number(waiting) };
      case 'busy': {
        // Ahead of it, about `waiting` deliveries sent `most` at a time, each taking the average try.
        const turn = Math.max(50, Number(value ?? 0)) * Math.max(1, Number(waiting ?? 1) / Number(most ?? this.guard.inFlight));
        return { status: 'busy', retryInMs: Math.round(Math.min(LONGEST_WAIT_MS, turn)) };
      }
      default:
        return { status: 'ok' };
    }
  }

  /** A delivery that stopped waiting for a slot without taking one (given up, settled, its endpoint disabled). */
  async forget(tenant: string, webhookId: string, deliveryId: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.webhookWaiting(tenant, webhookId), deliveryId);
  }

  /** `answered`: the endpoint replied (delivered, or refused for good); otherwise it failed to. */
  async give(tenant: string, webhookId: string, deliveryId: string, answered: boolean, durationMs: number, now?: number): Promise<SlotReturn> {
    const k = this.ctx.keys;
    const [failures, pausedUntil] = (await this.ctx.scripts.run(
      'webhookSlotGive',
      [k.webhookInflight(tenant, webhookId), k.webhookHealth(tenant, webhookId), k.webhookTenantInflight(tenant)],
      [deliveryId, now ?? '', answered ? 'answered' : 'failed', Math.max(0, Math.round(durationMs)), this.guard.failuresToPause, this.guard.pauseMs, this.guard.longestPauseMs, HEALTH_TTL_SECS],
    )) as [number, number];
    return { failures: Number(failures), pausedUntil: Number(pausedUntil) > 0 ? Number(pausedUntil) : null };
  }
}
