import type { Interaction } from '@parley/contracts';

export type Claim = NonNullable<Interaction['claim']>;

/** A claim is judged a little after its `until`, so the gateway's clock has surely let it go too. */
const LAPSE_MARGIN_MS = 1000;
/** When a claim's `until` cannot be read, look again after this long. */
const UNREADABLE_UNTIL_MS = 60_000;

/**
 * Approvals set aside because another admin holds a claim on them. Each comes back (through
 * `resume`) when its claim is released, or when it lapses: a lapse sends no event, so a timer
 * stands in for one.
 */
export class ClaimWaits {
  private readonly waiting = new Map<string, { interaction: Interaction; timer: NodeJS.Timeout }>();

  constructor(private readonly resume: (interaction: Interaction) => void) {}

  has(id: string): boolean {
    return this.waiting.has(id);
  }

  /** Sets the interaction aside until `claim` ends; holding it again follows the newer claim. */
  hold(interaction: Interaction, claim: Claim): void {
    clearTimeout(this.waiting.get(interaction.id)?.timer);
    const until = Date.parse(claim.until);
    const delayMs = Number.isNaN(until) ? UNREADABLE_UNTIL_MS : Math.max(0, until - Date.now()) + LAPSE_MARGIN_MS;
    const timer = setTimeout(() => this.release(interaction.id), delayMs);
    timer.unref();
    this.waiting.set(interaction.id, { interaction, timer });
  }

  /** The claim was taken over or extended: wait for the new one to end. */
  renew(id: string, claim: Claim): void {
    const entry = this.waiting.get(id);
    if (entry !== undefined) {
      this.hold(entry.interaction, claim);
    }
  }

  /** The claim ended: the interaction comes back to be asked. */
  release(id: string): void {
    const entry = this.forget(id);
    if (entry !== undefined) {
      this.resume(entry.interaction);
    }
  }

  /** The interaction as it stands now says whether the claim it was set aside for still holds. */
  recheck(current: Interaction, subject: string | undefined): void {
    if (!this.has(current.id)) {
      return;
    }
    if (current.status !== 'open') {
      // Its interaction.resolved event says how.
      this.drop(current.id);
      return;
    }
    const others = othersLiveClaim(current.claim, subject);
    if (others === undefined) {
      this.release(current.id);
    } else {
      this.renew(current.id, others);
    }
  }

  /** The interaction was resolved (or the run ended): it never comes back. */
  drop(id: string): void {
    this.forget(id);
  }

  clear(): void {
    for (const id of [...this.waiting.keys()]) {
      this.forget(id);
    }
  }

  private forget(id: string): { interaction: Interaction } | undefined {
    const entry = this.waiting.get(id);
    if (entry !== undefined) {
      clearTimeout(entry.timer);
      this.waiting.delete(id);
    }
    return entry;
  }
}

/** `claim` when it is someone else's than `subject` and still holds; undefined when `subject` is unknown (the gateway then decides). */
export function othersLiveClaim(claim: Claim | undefined, subject: string | undefined): Claim | undefined {
  if (claim === undefined || subject === undefined || claim.subject === subject) {
    return undefined;
  }
  return Date.parse(claim.until) > Date.now() ? claim : undefined;
}
