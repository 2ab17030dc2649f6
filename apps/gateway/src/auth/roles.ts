import { ForbiddenError, type Role, type TokenClaims } from '@parley/contracts';

const PLURAL: Record<Role, string> = { member: 'members', admin: 'admins', service: 'services', operator: 'operators' };

/** Refuses (403) a caller whose role is not among `allowed`; `doing` finishes "only admins ...". */
export function requireRole(user: TokenClaims, allowed: readonly Role[], doing: string): void {
  if (!allowed.includes(user.role)) {
    throw new ForbiddenError(`only ${allowed.map((role) => PLURAL[role]).join(' and ')} ${doing}`);
  }
}
