import jwt from 'jsonwebtoken';
import { TokenClaimsSchema, UnauthenticatedError, type TokenClaims } from '@parley/contracts';

export function signToken(claims: TokenClaims, secret: string, expiresInSecs = 24 * 3600): string {
  return jwt.sign({ tenant: claims.tenant, role: claims.role }, secret, {
    algorithm: 'HS256',
    subject: claims.sub,
    expiresIn: expiresInSecs,
  });
}

/** Verifies an HS256 bearer token and returns its Parley claims, or throws UnauthenticatedError. */
export function verifyToken(token: string, secret: string): TokenClaims {
  let payload: unknown;
  try {
    payload = jwt.verify(token, secret, { algorithms: ['HS256'], clockTolerance: 30 });
  } catch (error) {
    throw new UnauthenticatedError(`invalid token: ${(error as Error).message}`);
  }
  const claims = TokenClaimsSchema.safeParse(payload);
  if (!claims.success) {
    throw new UnauthenticatedError(`token lacks valid claims: ${claims.error.issues.map((i) => i.path.join('.')).join(', ')}`);
  }
  return claims.data;
}
