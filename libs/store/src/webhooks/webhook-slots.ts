import type { StoreContext } from '../store.context';

/** How an endpoint is protected from piling up: deliveries in flight at once, and pauses after failures in a row. */
export interface EndpointGuard {
  /** Deliveries to one endpoint being sent at once, across every interaction-service. */
  inFlight: number;
  /** Failures in a row (no answer, 5xx, 408, 429) after which the endpoint is paused. */
  failuresToPause: number;
  /** The first pause; each further failure in a row doubles it, up to `longestPauseMs`. */
  pauseMs: number;
  longestPauseMs: number;
  /** A slot never given back (its sender died) lapses this long after it was taken. */
  slotLapseMs: number;
}

export type SlotResult = { status: 'ok' } | { status: 'paused'; until: number } | { status: 'busy'; averageMs: number };

export interface SlotReturn {
  failures: number;
  /** When this try paused the endpoint, until when (epoch ms). */
  pausedUntil: number | null;
}

/** Health of a quiet endpoint is forgotten after this. */
const HEALTH_TTL_SECS = 24 * 3600;

/**
 * Slots to send to an endpoint. A dead or slow receiver holds at most `inFlight` of the workers'
 * slots, and after `failuresToPause` failures in a row none: its deliveries wait, without using up
 * their tries, while those of every other endpoint go on.
 */
export class WebhookSlots {
  constructor(
    private readonly ctx: StoreContext,
    private readonly guard: EndpointGuard,
  ) {}

  async take(tenant: string, webhookId: string, deliveryId: string, now = Date.now()): Promise<SlotResult> {
    const k = this.ctx.keys;
    const [status, value] = (await this.ctx.scripts.run(
      'webhookSlotTake',
      [k.webhookInflight(tenant, webhookId), k.webhookHealth(tenant, webhookId)],
      [deliveryId, now, now + this.guard.slotLapseMs, this.guard.inFlight, this.guard.failuresToPause],
    )) as [string, number?];
    switch (status) {
      case 'paused':
        return { status: 'paused', until: Number(value) };
      case 'busy':
        return { status: 'busy', averageMs: Number(value ?? 0) };
      default:
        return { status: 'ok' };
    }
  }

  /** `answered`: the endpoint replied (delivered, or refused for good); otherwise it failed to. */
  async give(tenant: string, webhookId: string, deliveryId: string, answered: boolean, durationMs: number, now = Date.now()): Promise<SlotReturn> {
    const k = this.ctx.keys;
    const [failures, pausedUntil] = (await this.ctx.scripts.run(
      'webhookSlotGive',
      [k.webhookInflight(tenant, webhookId), k.webhookHealth(tenant, webhookId)],
      [deliveryId, now, answered ? 'answered' : 'failed', Math.max(0, Math.round(durationMs)), this.guard.failuresToPause, this.guard.pauseMs, this.guard.longestPauseMs, HEALTH_TTL_SECS],
    )) as [number, number];
    return { failures: Number(failures), pausedUntil: Number(pausedUntil) > 0 ? Number(pausedUntil) : null };
  }
}
