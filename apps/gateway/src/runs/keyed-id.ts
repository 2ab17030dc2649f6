import { createHash } from 'node:crypto';
import type { TokenClaims } from '@parley/contracts';

/**
 * An id derived from an idempotency key and who sent it (UUID-shaped, version 5 style): a message's
 * id (the key joined to its run's id). Releases before 2026-12-01 also derived a keyed start's run id
 * from it, so a retry across the upgrade finds that run.
 */
export function keyedId(user: Pick<TokenClaims, 'tenant' | 'sub'>, key: string): string {
  const hex = createHash('sha256').update(`${user.tenant}\n${user.sub}\n${key}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
