import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import { UnauthenticatedError } from '@parley/contracts';
import { devSecretExposure, loadConfig } from './config';
import { KeySetUnavailableError, TokenVerifier, signToken, verifyToken, type TokenVerifierOptions } from './token';
import { VerifiedTokens } from './verified-tokens';

const SECRET = 'a-shared-secret-of-some-length';
const ALICE = { tenant: 'acme', sub: 'alice', role: 'member' } as const;
const now = () => Math.floor(Date.now() / 1000);

interface TestKey {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function testKey(alg: string, kid: string): Promise<TestKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A token signed with `key`, carrying ALICE's claims unless `payload` says otherwise. */
function sign(key: TestKey, payload: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ tenant: 'acme', role: 'member', sub: 'alice', exp: now() + 600, ...payload })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

/** An HS256 token over an arbitrary payload, signed by hand (so any claim can be forged or left out). */
function hs256(payload: Record<string, unknown>, secret = SECRET, alg = 'HS256'): string {
  const input = `${b64({ alg, typ: 'JWT' })}.${b64(payload)}`;
  const digest = alg === 'HS512' ? 'sha512' : 'sha256';
  return `${input}.${createHmac(digest, secret).update(input).digest('base64url')}`;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Refused with a 401 whose message contains `reason` and none of the token. */
async function expectRefused(verifying: Promise<unknown>, token: string, reason: string): Promise<void> {
  const error = await verifying.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  const message = (error as Error).message;
  expect(message).toContain(reason);
  for (const part of token.split('.').filter((p) => p.length > 8)) {
    expect(message).not.toContain(part);
  }
}

let rsa: TestKey;
let ec: TestKey;
let ed: TestKey;
let stranger: TestKey;
let keySet: JSONWebKeySet;

beforeAll(async () => {
  [rsa, ec, ed, stranger] = await Promise.all([testKey('RS256', 'rsa-1'), testKey('ES256', 'ec-1'), testKey('EdDSA', 'ed-1'), testKey('RS256', 'rsa-2')]);
  keySet = { keys: [rsa.jwk, ec.jwk, ed.jwk] };
});

describe('HS256 with the shared secret', () => {
  it('verifies a token from signToken and returns exactly the Parley claims', async () => {
    await expect(verifyToken(signToken(ALICE, SECRET), SECRET)).resolves.toEqual(ALICE);
    const service = { tenant: 'acme', sub: 'backend', role: 'service' } as const;
    await expect(new TokenVerifier({ secret: SECRET }).verify(signToken(service, SECRET, 60))).resolves.toEqual(service);
  });

  it('refuses a bad signature, an expired token and a token that is not a JWT', async () => {
    const forged = signToken(ALICE, 'another-secret-0123456789');
    await expectRefused(verifyToken(forged, SECRET), forged, 'invalid token: invalid signature');
    const expired = hs256({ ...ALICE, exp: now() - 3600 });
    await expectRefused(verifyToken(expired, SECRET), expired, 'invalid token: token expired');
    await expectRefused(verifyToken('not-a-jwt', SECRET), 'not-a-jwt', 'invalid token: not a JWT');
    const truncated = signToken(ALICE, SECRET).split('.').slice(0, 2).join('.');
    await expectRefused(verifyToken(truncated, SECRET), truncated, 'invalid token');
  });

  it('tolerates 30 s of clock skew by default, and what PARLEY_JWT_CLOCK_SKEW_SECS says otherwise', async () => {
    const justExpired = hs256({ ...ALICE, exp: now() - 10 });
    await expect(verifyToken(justExpired, SECRET)).resolves.toEqual(ALICE);
    await expectRefused(verifyToken(justExpired, { secret: SECRET, clockSkewSecs: 0 }), justExpired, 'token expired');
    await expectRefused(verifyToken(hs256({ ...ALICE, exp: now() - 60 }), SECRET), '', 'token expired');
    await expect(verifyToken(justExpired, { secret: SECRET, clockSkewSecs: 120 })).resolves.toEqual(ALICE);

    const soon = hs256({ ...ALICE, nbf: now() + 10, exp: now() + 600 });
    await expect(verifyToken(soon, SECRET)).resolves.toEqual(ALICE);
    const later = hs256({ ...ALICE, nbf: now() + 120, exp: now() + 600 });
    await expectRefused(verifyToken(later, SECRET), later, 'token not yet valid');
  });

  it('names the missing or invalid claims', async () => {
    const exp = now() + 600;
    await expectRefused(verifyToken(hs256({ sub: 'alice', role: 'member', exp }), SECRET), '', 'token lacks valid claims: tenant');
    // A token that never expires could never be taken back.
    await expectRefused(verifyToken(hs256({ tenant: 'acme', sub: 'alice', role: 'member' }), SECRET), '', 'invalid token: exp claim missing');
    await expectRefused(verifyToken(hs256({ tenant: 'Acme Corp', sub: 'alice', role: 'member', exp }), SECRET), '', 'tenant');
    await expectRefused(verifyToken(hs256({ tenant: 'acme', role: 'member', exp }), SECRET), '', 'sub');
    // The owner of scheduled runs: no token may speak for it.
    await expectRefused(verifyToken(hs256({ tenant: 'acme', sub: 'parley:scheduler', role: 'member', exp }), SECRET), '', 'token lacks valid claims: sub');
    await expectRefused(verifyToken(hs256({ tenant: 'acme', sub: 'alice', role: 'root', exp }), SECRET), '', 'role');
  });

  it('refuses alg none and other HMAC algorithms', async () => {
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...ALICE, role: 'admin', exp: now() + 600 })}.`;
    await expectRefused(verifyToken(none, SECRET), none, 'invalid token: algorithm none is not accepted');
    const hs512 = hs256({ ...ALICE, exp: now() + 600 }, SECRET, 'HS512');
    await expectRefused(verifyToken(hs512, SECRET), hs512, 'algorithm HS512 is not accepted');
    const junk = `${b64({ alg: 'x'.repeat(500) })}.${b64(ALICE)}.c2ln`;
    await expectRefused(verifyToken(junk, SECRET), junk, 'algorithm (unreadable) is not accepted');
  });

  it('is refused when the verifier has no secret (a key set only)', async () => {
    const token = signToken(ALICE, SECRET);
    await expectRefused(verifyToken(token, { jwks: keySet }), token, 'algorithm HS256 is not accepted');
  });
});

describe('a token verified lately', () => {
  /** A verifier on a clock the test moves. */
  function onClock(options: TokenVerifierOptions = { secret: SECRET }): { verifier: TokenVerifier; clock: { ms: number } } {
    const clock = { ms: Date.now() };
    return { verifier: new TokenVerifier({ ...options, clock: () => clock.ms }), clock };
  }

  it('is refused once it expires, though it verified before', async () => {
    const { verifier, clock } = onClock({ secret: SECRET, clockSkewSecs: 5 });
    const exp = Math.floor(clock.ms / 1000) + 20;
    const token = hs256({ ...ALICE, exp });
    await expect(verifier.verify(token)).resolves.toEqual(ALICE);
    // The last millisecond jose accepts it (exp plus the leeway), then the first it would refuse it.
    clock.ms = (exp + 5) * 1000 - 1;
    await expect(verifier.verify(token)).resolves.toEqual(ALICE);
    clock.ms += 1;
    await expectRefused(verifier.verify(token), token, 'invalid token: token expired');
  });

  it('only as that very token: the same claims under another signature are checked, and refused', async () => {
    const { verifier } = onClock();
    const token = signToken(ALICE, SECRET);
    await expect(verifier.verify(token)).resolves.toEqual(ALICE);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${createHmac('sha256', 'another-secret-0123456789').update(`${header}.${payload}`).digest('base64url')}`;
    await expectRefused(verifier.verify(forged), forged, 'invalid token: invalid signature');
    await expectRefused(verifier.verify(`${token}x`), token, 'invalid token');
  });

  it('is kept a minute at most, and so many tokens at most, the least recently used going first', () => {
    const tokens = new VerifiedTokens(60_000, 2);
    const at = Date.now();
    tokens.remember('a', ALICE, at, undefined);
    tokens.remember('b', ALICE, at, undefined);
    expect(tokens.get('a', at)).toEqual(ALICE);
    tokens.remember('c', ALICE, at, undefined);
    expect(tokens.size).toBe(2);
    expect(tokens.get('b', at)).toBeUndefined();
    expect(tokens.get('a', at)).toEqual(ALICE);
    expect(tokens.get('c', at + 60_001)).toBeUndefined();
    tokens.remember('d', ALICE, at, at - 1);
    expect(tokens.get('d', at)).toBeUndefined();
  });
});

describe('asymmetric tokens against a key set', () => {
  it('verifies RS256, ES256 and EdDSA tokens from a key set given inline or as a file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'parley-jwks-')), 'jwks.json');
    writeFileSync(file, JSON.stringify(keySet));
    for (const verifier of [new TokenVerifier({ jwks: keySet }), new TokenVerifier({ jwksFile: file, secret: SECRET })]) {
      for (const key of [rsa, ec, ed]) {
        await expect(verifier.verify(await sign(key))).resolves.toEqual(ALICE);
      }
      // A key without a kid is still found when exactly one key of its type fits.
      await expect(verifier.verify(await sign(ec, {}, { kid: undefined }))).resolves.toEqual(ALICE);
    }
  });

  it('refuses a token of an unknown key, a forged signature and an expired token', async () => {
    const verifier = new TokenVerifier({ jwks: keySet, secret: SECRET });
    const unknown = await sign(stranger);
    await expectRefused(verifier.verify(unknown), unknown, 'invalid token: unknown key');
    const forged = await sign({ ...stranger, kid: rsa.kid });
    await expectRefused(verifier.verify(forged), forged, 'invalid token: invalid signature');
    const expired = await sign(rsa, { exp: now() - 3600 });
    await expectRefused(verifier.verify(expired), expired, 'invalid token: token expired');
  });

  it('refuses an HS256 token "signed" with a public key as the HMAC secret', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const pem = await exportSPKI(publicKey);
    const pemKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid: 'pem', alg: 'RS256' }] };
    for (const secret of [pem, JSON.stringify(pemKeySet.keys[0])]) {
      const confused = hs256({ ...ALICE, role: 'admin', exp: now() + 600 }, secret);
      // Key set only: HS256 has no verifier at all.
      await expectRefused(verifyToken(confused, { jwks: pemKeySet }), confused, 'algorithm HS256 is not accepted');
      // Key set and secret: HS256 is checked against the secret, never against the key set.
      await expectRefused(verifyToken(confused, { jwks: pemKeySet, secret: SECRET }), confused, 'invalid signature');
    }
  });

  it('refuses an asymmetric token when no key set is configured', async () => {
    const token = await sign(rsa);
    await expectRefused(verifyToken(token, SECRET), token, 'algorithm RS256 is not accepted');
  });

  it('will not load a key set with private or shared keys, or without keys', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    expect(() => new TokenVerifier({ jwks: { keys: [privateJwk] } })).toThrow('private key material');
    expect(() => new TokenVerifier({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } })).toThrow('shared secret');
    expect(() => new TokenVerifier({ jwks: { keys: [] } })).toThrow('at least one key');
    expect(() => new TokenVerifier({ jwksFile: '/nonexistent/jwks.json' })).toThrow('JWKS file /nonexistent/jwks.json');
    const notJson = join(mkdtempSync(join(tmpdir(), 'parley-jwks-')), 'jwks.json');
    writeFileSync(notJson, 'nope');
    expect(() => new TokenVerifier({ jwksFile: notJson })).toThrow(`JWKS file ${notJson}`);
    expect(() => new TokenVerifier({})).toThrow('neither a secret nor a key set');
  });
});

describe('issuer and audience', () => {
  const checks: TokenVerifierOptions = { jwks: undefined, secret: SECRET, issuer: 'https://id.example.com/', audience: 'parley' };

  it('accepts matching tokens of either kind, aud given as a string or a list', async () => {
    const verifier = new TokenVerifier({ ...checks, jwks: keySet });
    await expect(verifier.verify(signToken(ALICE, SECRET, 60, { issuer: 'https://id.example.com/', audience: 'parley' }))).resolves.toEqual(ALICE);
    await expect(verifier.verify(await sign(rsa, { iss: 'https://id.example.com/', aud: ['other', 'parley'] }))).resolves.toEqual(ALICE);
  });

  it('refuses a mismatch or a missing claim, saying which', async () => {
    const verifier = new TokenVerifier({ ...checks, jwks: keySet });
    const cases: Array<[JWTPayload, string]> = [
      [{ iss: 'https://evil.example.com/', aud: 'parley' }, 'invalid token: issuer mismatch'],
      [{ iss: 'https://id.example.com/', aud: 'someone-else' }, 'invalid token: audience mismatch'],
      [{ aud: 'parley' }, 'invalid token: iss claim missing'],
      [{ iss: 'https://id.example.com/' }, 'invalid token: aud claim missing'],
    ];
    for (const [payload, reason] of cases) {
      const token = await sign(rsa, payload);
      await expectRefused(verifier.verify(token), token, reason);
    }
    // The same checks apply to tokens signed with the shared secret.
    const plain = signToken(ALICE, SECRET);
    await expectRefused(verifier.verify(plain), plain, 'iss claim missing');
  });
});

describe('a remote key set', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let reply: () => { status: number; body: string } = () => ({ status: 200, body: JSON.stringify(keySet) });

  beforeAll(async () => {
    server = createServer((_req, res) => {
      fetches += 1;
      const { status, body } = reply();
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches the keys once and verifies with them; an unknown key is refused', async () => {
    fetches = 0;
    const verifier = new TokenVerifier({ jwksUrl: url, issuer: 'https://id.example.com/' });
    for (const key of [rsa, ec, ed]) {
      await expect(verifier.verify(await sign(key, { iss: 'https://id.example.com/' }))).resolves.toEqual(ALICE);
    }
    expect(fetches).toBe(1);
    const unknown = await sign(stranger, { iss: 'https://id.example.com/' });
    await expectRefused(verifier.verify(unknown), unknown, 'unknown key');
    const hs = signToken(ALICE, SECRET);
    await expectRefused(verifier.verify(hs), hs, 'algorithm HS256 is not accepted');
  });

  it('reports an unreachable or broken key set as such, not as a bad token', async () => {
    reply = () => ({ status: 500, body: 'oops' });
    await expect(new TokenVerifier({ jwksUrl: url }).verify(await sign(rsa))).rejects.toBeInstanceOf(KeySetUnavailableError);
    reply = () => ({ status: 200, body: 'not json' });
    await expect(new TokenVerifier({ jwksUrl: url }).verify(await sign(rsa))).rejects.toBeInstanceOf(KeySetUnavailableError);
    reply = () => ({ status: 200, body: JSON.stringify(keySet) });
  });
});

describe('TokenVerifier.fromConfig', () => {
  const base = { PARLEY_JWKS_FILE: '/tmp/x.json' };

  it('accepts secret tokens alongside a key set only when PARLEY_JWT_SECRET is set explicitly, and never the dev secret', () => {
    expect(loadConfig({})).toMatchObject({ acceptSecretTokens: true, usingDevSecret: true, jwtClockSkewSecs: 30 });
    expect(loadConfig({ PARLEY_JWT_SECRET: '' })).toMatchObject({ acceptSecretTokens: true, usingDevSecret: true });
    expect(loadConfig(base)).toMatchObject({ acceptSecretTokens: false, usingDevSecret: false, jwksFile: '/tmp/x.json' });
    expect(loadConfig({ ...base, PARLEY_JWT_SECRET: SECRET })).toMatchObject({ acceptSecretTokens: true, usingDevSecret: false });
    // A compose file that passes its placeholder (the dev secret, or nothing) through does not open the key set's deployment.
    expect(loadConfig({ ...base, PARLEY_JWT_SECRET: 'parley-dev-secret-change-me' })).toMatchObject({ acceptSecretTokens: false, usingDevSecret: false });
    expect(loadConfig({ ...base, PARLEY_JWT_SECRET: '' })).toMatchObject({ acceptSecretTokens: false, usingDevSecret: false });
    expect(loadConfig({ PARLEY_JWKS_URL: '', PARLEY_JWT_ISSUER: '' })).toMatchObject({ acceptSecretTokens: true });
    expect(loadConfig({ PARLEY_JWT_ISSUER: 'iss', PARLEY_JWT_AUDIENCE: 'aud', PARLEY_JWT_CLOCK_SKEW_SECS: '5' })).toMatchObject({
      jwtIssuer: 'iss',
      jwtAudience: 'aud',
      jwtClockSkewSecs: 5,
    });
  });

  it('refuses a key set given twice, or a JWKS URL that is not http(s)', () => {
    expect(() => loadConfig({ ...base, PARLEY_JWKS_URL: 'https://id.example.com/jwks' })).toThrow('not both');
    expect(() => loadConfig({ PARLEY_JWKS_URL: 'file:///etc/jwks.json' })).toThrow('PARLEY_JWKS_URL');
    expect(() => loadConfig({ PARLEY_JWT_CLOCK_SKEW_SECS: '-1' })).toThrow('PARLEY_JWT_CLOCK_SKEW_SECS');
  });

  it('builds a verifier that follows the config', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'parley-jwks-')), 'jwks.json');
    writeFileSync(file, JSON.stringify(keySet));
    const devToken = signToken(ALICE, loadConfig({}).jwtSecret);
    const keySetOnly = TokenVerifier.fromConfig(loadConfig({ PARLEY_JWKS_FILE: file }));
    await expect(keySetOnly.verify(await sign(rsa))).resolves.toEqual(ALICE);
    await expectRefused(keySetOnly.verify(devToken), devToken, 'algorithm HS256 is not accepted');
    const both = TokenVerifier.fromConfig(loadConfig({ PARLEY_JWKS_FILE: file, PARLEY_JWT_SECRET: SECRET }));
    await expect(both.verify(signToken(ALICE, SECRET))).resolves.toEqual(ALICE);
    await expect(both.verify(await sign(ec))).resolves.toEqual(ALICE);
    await expectRefused(both.verify(devToken), devToken, 'invalid signature');
  });
});

describe('PARLEY_JWKS_URL', () => {
  it('must be https, but for a key set served on this host', () => {
    expect(loadConfig({ PARLEY_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' })).toMatchObject({ jwksUrl: 'https://idp.example.com/.well-known/jwks.json' });
    expect(loadConfig({ PARLEY_JWKS_URL: 'http://127.0.0.1:8999/jwks' })).toMatchObject({ jwksUrl: 'http://127.0.0.1:8999/jwks' });
    expect(loadConfig({ PARLEY_JWKS_URL: 'http://localhost/jwks' })).toMatchObject({ jwksUrl: 'http://localhost/jwks' });
    expect(() => loadConfig({ PARLEY_JWKS_URL: 'http://idp.example.com/jwks' })).toThrow(expect.objectContaining({ details: { issues: [{ field: 'PARLEY_JWKS_URL', reason: expect.stringContaining('must be https://') }] } }));
    expect(() => loadConfig({ PARLEY_JWKS_URL: 'http://localhost.evil.com/jwks' })).toThrow();
  });
});

describe('devSecretExposure', () => {
  it('refuses a gateway reachable from elsewhere that would accept the public development secret, unless allowed', () => {
    expect(devSecretExposure(loadConfig({}))).toBeNull(); // 127.0.0.1 by default
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: 'localhost' }))).toBeNull();
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '::1' }))).toBeNull();
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '0.0.0.0' }))).toContain('refusing to listen on 0.0.0.0 with the public development secret');
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '0.0.0.0', PARLEY_JWT_SECRET: '' }))).toContain('Set PARLEY_JWT_SECRET');
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '10.0.0.5', PARLEY_ALLOW_DEV_SECRET: 'true' }))).toBeNull();
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '0.0.0.0', PARLEY_JWT_SECRET: SECRET }))).toBeNull();
    // With a key set the dev secret is never accepted: nothing to refuse.
    expect(devSecretExposure(loadConfig({ PARLEY_HOST: '0.0.0.0', PARLEY_JWKS_FILE: '/tmp/x.json' }))).toBeNull();
  });
});
