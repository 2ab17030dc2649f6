import { Inject, Injectable } from '@nestjs/common';
import { UnauthenticatedError, type Run, type TokenClaims } from '@parley/contracts';
import { verifyToken, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG } from '@parley/store';

/** Who a request is, and what of a tenant they may see. */
@Injectable()
export class AuthService {
  constructor(@Inject(PARLEY_CONFIG) private readonly config: ParleyConfig) {}

  authenticate(header: string | undefined): TokenClaims {
    if (!header) {
      throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <jwt>)');
    }
    const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!match) {
      throw new UnauthenticatedError('Authorization header must be "Bearer <jwt>"');
    }
    return verifyToken(match[1], this.config.jwtSecret);
  }

  /** Members see their own runs; admins and services see the whole tenant. */
  canSee(user: TokenClaims, run: Pick<Run, 'tenant' | 'owner'>): boolean {
    return run.tenant === user.tenant && (user.role !== 'member' || run.owner === user.sub);
  }
}
