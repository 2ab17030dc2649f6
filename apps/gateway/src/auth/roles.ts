import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ForbiddenError, type Role, type TokenClaims } from '@parley/contracts';
import type { AuthedRequest } from './auth.guard';

const PLURAL: Record<Role, string> = { member: 'members', admin: 'admins', service: 'services', operator: 'operators' };

/** Refuses (403) a caller whose role is not among `allowed`; `doing` finishes "only admins ...". */
export function requireRole(user: TokenClaims, allowed: readonly Role[], doing: string): void {
  if (!allowed.includes(user.role)) {
    throw new ForbiddenError(`only ${allowed.map((role) => PLURAL[role]).join(' and ')} ${doing}`);
  }
}

interface RoleRule {
  allowed: readonly Role[];
  doing: string;
}

const ROLES = 'parley:roles';

/** An HTTP route (or every route of a controller) only these roles may call; `doing` as for {@link requireRole}. */
export const Roles = (allowed: readonly Role[], doing: string): MethodDecorator & ClassDecorator => SetMetadata(ROLES, { allowed, doing } satisfies RoleRule);

/**
 * Checks a route's {@link Roles} once the caller is known and before anything of its request is read
 * (its query, its body, its path): a caller who may not use the route is told that (403), not what
 * is wrong with what it sent.
 */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const rule = this.reflector.getAllAndOverride<RoleRule | undefined>(ROLES, [context.getHandler(), context.getClass()]);
    if (!rule || context.getType() !== 'http') {
      return true;
    }
    const { user } = context.switchToHttp().getRequest<AuthedRequest>();
    if (!user) {
      throw new ForbiddenError(`only callers with a token ${rule.doing}`);
    }
    requireRole(user, rule.allowed, rule.doing);
    return true;
  }
}
