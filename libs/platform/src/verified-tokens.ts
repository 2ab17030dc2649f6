import type { TokenClaims } from '@parley/contracts';

/** How long a verified token is taken on trust before its signature is checked again. */
export const VERIFIED_TOKEN_TTL_MS = 60_000;
export const VERIFIED_TOKENS_MAX = 5_000;

/**
 * Tokens this process verified lately, with their claims: a client sends the same token with every
 * request, and checking its signature again each time is most of what authenticating costs. Keyed
 * by the whole token (signature included), so only the exact token that verified is served from
 * here; an entry is good until the token expires (with the verifier's leeway) and for at most
 * `ttlMs`, after which the token is checked again, against the key set as it is then. Least
 * recently used first out.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { claims: TokenClaims; until: number }>();

  constructor(
    private readonly ttlMs = VERIFIED_TOKEN_TTL_MS,
    private readonly max = VERIFIED_TOKENS_MAX,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The claims of `token` if it verified within its time, else undefined. */
  get(token: string, nowMs: number): TokenClaims | undefined {
    const entry = this.entries.get(token);
    if (!entry) {
      return undefined;
    }
    this.entries.delete(token);
    if (nowMs >= entry.until) {
      return undefined;
    }
    this.entries.set(token, entry);
    return entry.claims;
  }

  /** `validUntilMs`: from when the token is no longer accepted (its exp plus the leeway), if it says. */
  remember(token: string, claims: TokenClaims, nowMs: number, validUntilMs: number | undefined): void {
    const until = Math.min(nowMs + this.ttlMs, validUntilMs ?? Number.POSITIVE_INFINITY);
    if (until <= nowMs) {
      return;
    }
    this.entries.delete(token);
    this.entries.set(token, { claims, until });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.max) {
        break;
      }
      this.entries.delete(oldest);
    }
  }
}
