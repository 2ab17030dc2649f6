import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type CryptoKey,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { TokenClaimsSchema, UnauthenticatedError, type TokenClaims } from '@parley/contracts';
import type { ParleyConfig } from './config';
import { VERIFIED_TOKEN_TTL_MS, VerifiedTokens } from './verified-tokens';

/** The only algorithm verified with the shared secret. */
const SECRET_ALGORITHMS = ['HS256'];
/** Algorithms verified with the key set (public keys only: never an HMAC). */
const KEY_SET_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export const DEFAULT_CLOCK_SKEW_SECS = 30;

export interface SignTokenOptions {
  issuer?: string;
  audience?: string;
}

/**
 * Signs an HS256 token with the shared secret (dev tokens: CLI, `npm start`, tests). Synchronous,
 * so it is done here with node:crypto: jose only signs asynchronously. Verified with jose below.
 */
export function signToken(claims: TokenClaims, secret: string, expiresInSecs = 24 * 3600, options: SignTokenOptions = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload & { tenant: string; role: string } = {
    tenant: claims.tenant,
    role: claims.role,
    sub: claims.sub,
    iat: now,
    exp: now + expiresInSecs,
    ...(options.issuer === undefined ? {} : { iss: options.issuer }),
    ...(options.audience === undefined ? {} : { aud: options.audience }),
  };
  const signingInput = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(payload)}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export interface TokenVerifierOptions {
  /** HS256 secret; without it HS256 tokens are refused. */
  secret?: string;
  /** Remote JWKS (an identity provider's jwks_uri), fetched and cached by jose. */
  jwksUrl?: string;
  /** A local JWKS file, read once here. */
  jwksFile?: string;
  /** A key set given inline (tests). */
  jwks?: JSONWebKeySet;
  /** Required `iss` when set. */
  issuer?: string;
  /** Required `aud` when set. */
  audience?: string;
  /** Leeway for exp / nbf / iat, default 30 s. */
  clockSkewSecs?: number;
  /** The time (epoch ms) tokens are checked against; the system clock unless a test says. */
  clock?: () => number;
  /**
   * How long a fetched remote key set is used before it is fetched again (default 10 minutes): a key
   * removed from it stops verifying within this. A verified token is trusted no longer than this either.
   */
  keySetCacheMs?: number;
}

/** jose's own default for a remote key set. */
const DEFAULT_KEY_SET_CACHE_MS = 600_000;

/** The key set could not be fetched: not the caller's fault, so a 500 (and a log line), not a 401. */
export class KeySetUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the JWKS could not be fetched: ${(cause as Error | undefined)?.message ?? String(cause)}`, { cause });
    this.name = 'KeySetUnavailableError';
  }
}

/**
 * Verifies bearer tokens with jose and returns their Parley claims. The token's `alg` header only
 * picks which of two fixed verifiers runs; each pins its own key and algorithms: HS256 against the
 * shared secret, asymmetric algorithms against the key set. So an HS256 token "signed" with a public
 * key, or `alg: none`, never verifies. Keep one instance per process: it caches the remote key set.
 */
export class TokenVerifier {
  /** Imported once: jose would import raw bytes again on every verification. */
  private readonly secret?: Promise<CryptoKey>;
  private readonly keySet?: JWTVerifyGetKey;
  private readonly remote: boolean;
  private readonly checks: Pick<JWTVerifyOptions, 'issuer' | 'audience' | 'clockTolerance' | 'requiredClaims'>;
  private readonly clockSkewSecs: number;
  private readonly clock: () => number;
  private readonly verified: VerifiedTokens;

  constructor(options: TokenVerifierOptions) {
    const keySetSources = [options.jwksUrl, options.jwksFile, options.jwks].filter((source) => source !== undefined);
    if (keySetSources.length > 1) {
      throw new Error('token verifier: give one key set (jwksUrl, jwksFile or jwks), not several');
    }
    if (options.secret === undefined && keySetSources.length === 0) {
      throw new Error('token verifier: neither a secret nor a key set to verify tokens with');
    }
    if (options.secret !== undefined) {
      this.secret = crypto.subtle.importKey('raw', new TextEncoder().encode(options.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
      // A key that cannot be imported fails each verification that needs it, not the process.
      this.secret.catch(() => undefined);
    }
    this.remote = options.jwksUrl !== undefined;
    const keySetCacheMs = options.keySetCacheMs ?? DEFAULT_KEY_SET_CACHE_MS;
    this.verified = new VerifiedTokens(Math.min(VERIFIED_TOKEN_TTL_MS, keySetCacheMs));
    if (options.jwksUrl !== undefined) {
      // An unknown kid fetches again at most every 30 s (jose's cooldown), or as often as the cache lapses.
      this.keySet = createRemoteJWKSet(new URL(options.jwksUrl), { cacheMaxAge: keySetCacheMs, cooldownDuration: Math.min(30_000, keySetCacheMs) });
    } else if (options.jwksFile !== undefined) {
      this.keySet = createLocalJWKSet(readKeySetFile(options.jwksFile));
    } else if (options.jwks !== undefined) {
      this.keySet = createLocalJWKSet(checkedKeySet(options.jwks, 'the key set'));
    }
    this.clockSkewSecs = options.clockSkewSecs ?? DEFAULT_CLOCK_SKEW_SECS;
    this.clock = options.clock ?? Date.now;
    this.checks = {
      ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
      ...(options.audience === undefined ? {} : { audience: options.audience }),
      clockTolerance: this.clockSkewSecs,
      // A token that never expires cannot be taken back: refuse it.
      requiredClaims: ['exp'],
    };
  }

  static fromConfig(
    config: Pick<ParleyConfig, 'jwtSecret' | 'acceptSecretTokens' | 'jwksUrl' | 'jwksFile' | 'jwtIssuer' | 'jwtAudience' | 'jwtClockSkewSecs' | 'jwksCacheSecs'>,
  ): TokenVerifier {
    return new TokenVerifier({
      keySetCacheMs: config.jwksCacheSecs * 1000,
      ...(config.acceptSecretTokens ? { secret: config.jwtSecret } : {}),
      ...(config.jwksUrl === undefined ? {} : { jwksUrl: config.jwksUrl }),
      ...(config.jwksFile === undefined ? {} : { jwksFile: config.jwksFile }),
      ...(config.jwtIssuer === undefined ? {} : { issuer: config.jwtIssuer }),
      ...(config.jwtAudience === undefined ? {} : { audience: config.jwtAudience }),
      clockSkewSecs: config.jwtClockSkewSecs,
    });
  }

  /** The token's claims, or UnauthenticatedError saying why not (never echoing the token). */
  async verify(token: string): Promise<TokenClaims> {
    const now = this.clock();
    const known = this.verified.get(token, now);
    if (known) {
      return known;
    }
    const { claims, exp } = await this.check(token, new Date(now));
    this.verified.remember(token, claims, now, exp === undefined ? undefined : (exp + this.clockSkewSecs) * 1000);
    return claims;
  }

  private async check(token: string, currentDate: Date): Promise<{ claims: TokenClaims; exp?: number }> {
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw invalid('not a JWT');
    }
    let payload: JWTPayload;
    try {
      if (typeof alg === 'string' && SECRET_ALGORITHMS.includes(alg) && this.secret) {
        payload = (await jwtVerify(token, await this.secret, { ...this.checks, currentDate, algorithms: SECRET_ALGORITHMS })).payload;
      } else if (typeof alg === 'string' && KEY_SET_ALGORITHMS.includes(alg) && this.keySet) {
        payload = (await jwtVerify(token, this.keySet, { ...this.checks, currentDate, algorithms: KEY_SET_ALGORITHMS })).payload;
      } else {
        throw invalid(`algorithm ${typeof alg === 'string' && /^[A-Za-z0-9-]{1,16}$/.test(alg) ? alg : '(unreadable)'} is not accepted`);
      }
    } catch (error) {
      throw explain(error, this.remote);
    }
    const claims = TokenClaimsSchema.safeParse(payload);
    if (!claims.success) {
      throw new UnauthenticatedError(`token lacks valid claims: ${claims.error.issues.map((i) => i.path.join('.')).join(', ')}`);
    }
    return { claims: claims.data, ...(payload.exp === undefined ? {} : { exp: payload.exp }) };
  }
}

/**
 * One-off verification (CLI, tests). A string is an HS256 secret. Services keep one TokenVerifier
 * instead, so a remote key set is fetched once and cached.
 */
export function verifyToken(token: string, secretOrOptions: string | TokenVerifierOptions): Promise<TokenClaims> {
  return new TokenVerifier(typeof secretOrOptions === 'string' ? { secret: secretOrOptions } : secretOrOptions).verify(token);
}

function invalid(reason: string): UnauthenticatedError {
  return new UnauthenticatedError(`invalid token: ${reason}`);
}

/** jose's errors as short reasons; anything that is not about the token itself passes on as a 500. */
function explain(error: unknown, remote: boolean): unknown {
  if (error instanceof UnauthenticatedError) {
    return error;
  }
  if (error instanceof errors.JWTExpired) {
    return invalid('token expired');
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const names: Record<string, string> = { iss: 'issuer', aud: 'audience', iat: 'issued-at time' };
    const name = names[error.claim] ?? `"${error.claim}" claim`;
    if (error.reason === 'missing') {
      return invalid(`${error.claim} claim missing`);
    }
    if (error.reason === 'check_failed' && (error.claim === 'iss' || error.claim === 'aud')) {
      return invalid(`${name} mismatch`);
    }
    if (error.claim === 'nbf') {
      return invalid('token not yet valid');
    }
    return invalid(`${name} invalid`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return invalid('invalid signature');
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return invalid('unknown key');
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return invalid('several keys of the key set match; the token needs a kid');
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return invalid('algorithm is not accepted');
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return invalid('malformed token');
  }
  if (error instanceof errors.JWKInvalid) {
    return invalid('unusable key');
  }
  // Left: a failed fetch of the remote key set (timeout, non-200, network, not JSON), or a bug.
  return remote ? new KeySetUnavailableError(error) : error;
}

function readKeySetFile(file: string): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`JWKS file ${file}: ${(error as Error).message}`, { cause: error });
  }
  return checkedKeySet(parsed, `JWKS file ${file}`);
}

/** A key set of public keys only: no private material, no shared secrets (those go in PARLEY_JWT_SECRET). */
function checkedKeySet(value: unknown, what: string): JSONWebKeySet {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new Error(`${what} must be a JSON object { "keys": [ ... ] } with at least one key`);
  }
  keys.forEach((key: unknown, index) => {
    const jwk = key as Record<string, unknown> | null;
    if (typeof jwk !== 'object' || jwk === null || typeof jwk.kty !== 'string') {
      throw new Error(`${what}: key ${index} is not a JWK (no kty)`);
    }
    if (jwk.kty === 'oct') {
      throw new Error(`${what}: key ${index} is a shared secret (kty oct); only public keys belong in a key set`);
    }
    if ('d' in jwk) {
      throw new Error(`${what}: key ${index} holds private key material ("d"); publish only the public key`);
    }
  });
  return value as JSONWebKeySet;
}
