import { Inject, Injectable } from '@nestjs/common';
import { ForbiddenError, UnauthenticatedError, type Run, type TokenClaims } from '@parley/contracts';
import { TokenVerifier, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG } from '@parley/store';

/** Who a request is, and what of a tenant they may see. */
@Injectable()
export class AuthService {
  /** One per gateway: it caches a remote key set. A bad JWKS file stops the gateway at start. */
  private readonly verifier: TokenVerifier;

  constructor(@Inject(PARLEY_CONFIG) config: ParleyConfig) {
    this.verifier = TokenVerifier.fromConfig(config);
  }

  /** A tenant's caller. An operator token is a platform credential: it sees no tenant's data, here or on the socket. */
  async authenticate(header: string | undefined): Promise<TokenClaims> {
    const claims = await this.verify(header);
    if (claims.role === 'operator') {
      throw new ForbiddenError('operator tokens reach only the /v1/operator routes');
    }
    return claims;
  }

  /** A platform operator (the `/v1/operator` routes, or Bull Board: `where` names them); every other role is refused. */
  async authenticateOperator(header: string | undefined, where = 'the /v1/operator routes'): Promise<TokenClaims> {
    const claims = await this.verify(header);
    if (claims.role !== 'operator') {
      throw new ForbiddenError(`only operator tokens reach ${where}`);
    }
    return claims;
  }

  private async verify(header: string | undefined): Promise<TokenClaims> {
    if (!header) {
      throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <jwt>)');
    }
    const token = bearerToken(header);
    if (token === undefined) {
      throw new UnauthenticatedError('Authorization header must be "Bearer <jwt>"');
    }
    return this.verifier.verify(token);
  }

  /** Members see their own runs; admins and services see the whole tenant. */
  canSee(user: TokenClaims, run: Pick<Run, 'tenant' | 'owner'>): boolean {
    return run.tenant === user.tenant && (user.role !== 'member' || run.owner === user.sub);
  }
}

/** The token of an `Authorization: Bearer <jwt>` header, read exactly as it is verified (so the socket's expiry and key checks see the token that signed it in). */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header?.trim() ?? '')?.[1];
}
