import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { io } from 'socket.io-client';
import type { Role } from '@parley/contracts';
import { signToken } from '@parley/platform';
import { askerAgent } from '../support/agents';
import { EventsGateway } from '../../apps/gateway/src/events/events.gateway';
import { TestStack, writeAgents, type TestClient } from '../support/stack';
import { waitFor } from '../support/wait-for';

/**
 * Tokens from an identity provider (RS256, verified against a local JWKS file, issuer and audience
 * checked), and the service role: a tenant's backend starts runs on behalf of an end user, who then
 * owns them.
 */

const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'parley-e2e';

let stack: TestStack;
let privateKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const jwksFile = join(mkdtempSync(join(tmpdir(), 'parley-jwks-')), 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'test-1', alg: 'RS256', use: 'sig' }] }));
  stack = await TestStack.start({
    agentsDir: writeAgents([askerAgent()]),
    // As loadConfig decides with PARLEY_JWKS_FILE set and PARLEY_JWT_SECRET unset: key set tokens only.
    overrides: { jwksFile, jwtIssuer: ISSUER, jwtAudience: AUDIENCE, acceptSecretTokens: false, usingDevSecret: false },
  });
});

afterAll(async () => {
  await stack.close();
});

/** A token as the identity provider would issue it. */
function idToken(sub: string, role: Role, overrides: { aud?: string; iss?: string; tenant?: string } = {}): Promise<string> {
  return new SignJWT({ tenant: overrides.tenant ?? 'acme', role })
    .setProtectedHeader({ alg: 'RS256', kid: 'test-1' })
    .setSubject(sub)
    .setIssuer(overrides.iss ?? ISSUER)
    .setAudience(overrides.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}

/** Resolves on connect (the caller disconnects), rejects with the connect_error. */
async function connectRaw(token: string): Promise<void> {
  const socket = io(`${stack.url}/v1`, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', (error) => reject(error));
    });
  } finally {
    socket.disconnect();
  }
}

describe('tokens from a JWKS', () => {
  it('accepts an RS256 token of the key set over HTTP and socket.io', async () => {
    const token = await idToken('alice', 'member');
    expect(await stack.http('GET', '/v1/runs', undefined, token)).toEqual({ status: 200, body: { runs: [], next: null } });
    const client = await stack.connect(token);
    try {
      expect(await client.subscribe({})).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
    } finally {
      client.close();
    }
  });

  it('refuses a wrong audience or issuer, and tokens signed with the (unset) shared secret, with 401', async () => {
    const refused: Array<[string, string]> = [
      [await idToken('alice', 'member', { aud: 'another-app' }), 'invalid token: audience mismatch'],
      [await idToken('alice', 'member', { iss: 'https://evil.example.test/' }), 'invalid token: issuer mismatch'],
      [stack.token({ sub: 'alice' }), 'invalid token: algorithm HS256 is not accepted'],
      [signToken({ tenant: 'acme', sub: 'alice', role: 'admin' }, stack.config.jwtSecret, 600, { issuer: ISSUER, audience: AUDIENCE }), 'algorithm HS256 is not accepted'],
    ];
    for (const [token, message] of refused) {
      const reply = await stack.http('GET', '/v1/runs', undefined, token);
      expect(reply).toEqual({ status: 401, body: { error: { code: 'unauthenticated', message: expect.stringContaining(message) } } });
      expect(reply.body.error.message).not.toContain(token.split('.')[2]);
      await expect(connectRaw(token)).rejects.toThrow(message);
    }
  });
});

describe("socket.io's main namespace", () => {
  it('refuses every connection, token or not: only /v1 is served', async () => {
    for (const auth of [{}, { token: await idToken('alice', 'member') }]) {
      const socket = io(stack.url, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
      try {
        const refused = await new Promise<Error & { data?: unknown }>((resolve, reject) => {
          socket.once('connect', () => reject(new Error('connected to the main namespace')));
          socket.once('connect_error', resolve);
        });
        expect(refused.data).toEqual({ error: { code: 'not_found', message: 'no namespace here: connect to /v1' } });
      } finally {
        socket.disconnect();
      }
    }
  });
});

describe('service tokens start runs on behalf of a user', () => {
  let service: string;
  let alice: string;
  let bob: string;
  let admin: string;

  beforeAll(async () => {
    [service, alice, bob, admin] = await Promise.all([
      idToken('crm-backend', 'service'),
      idToken('alice', 'member'),
      idToken('bob', 'member'),
      idToken('carol', 'admin'),
    ]);
  });

  it('the user named in onBehalfOf owns the run: bob sees and answers it, alice gets 404', async () => {
    const started = await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'for bob', onBehalfOf: 'bob' }, service);
    expect(started).toMatchObject({ status: 201, body: { run: { owner: 'bob', agent: 'asker', tenant: 'acme' } } });
    const runId = started.body.run.id as string;

    let watcher: TestClient | undefined;
    try {
      watcher = await stack.connect(bob);
      expect(await watcher.subscribe({ runId, since: 0 })).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      const question = await stack.waitForQuestion(runId, 20_000, bob);
      await watcher.waitForEvent((e) => e.type === 'interaction.opened' && e.runId === runId, 'the question over socket.io');

      // Alice is a member too, but not the owner: the run and its question do not exist for her.
      expect((await stack.http('GET', `/v1/runs/${runId}`, undefined, alice)).status).toBe(404);
      expect((await stack.http('GET', '/v1/runs', undefined, alice)).body.runs).toEqual([]);
      expect((await stack.answer(question.id, { text: 'from alice' }, alice)).status).toBe(404);
      // The service and an admin see the whole tenant.
      expect((await stack.http('GET', `/v1/runs/${runId}`, undefined, service)).status).toBe(200);
      expect((await stack.http('GET', `/v1/runs/${runId}`, undefined, admin)).status).toBe(200);
      expect((await stack.http('GET', '/v1/runs', undefined, bob)).body.runs.map((r: { id: string }) => r.id)).toEqual([runId]);

      expect(await watcher.answer(question.id, { text: 'yes please' })).toMatchObject({
        ok: true,
        interaction: { status: 'answered', resolvedBy: { kind: 'user', subject: 'bob', role: 'member' } },
      });
      const finished = await waitFor(
        async () => {
          const { body } = await stack.http('GET', `/v1/runs/${runId}`, undefined, bob);
          return body.run?.status === 'finished' ? body.run : undefined;
        },
        { message: 'the run to finish' },
      );
      expect(finished).toMatchObject({ owner: 'bob', summary: 'got: yes please' });
    } finally {
      watcher?.close();
    }
  });

  it('onBehalfOf is required of service tokens and refused from members and admins, with 400', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [service, {}, 'onBehalfOf: required for service tokens'],
      [alice, { onBehalfOf: 'bob' }, 'onBehalfOf: only service tokens start runs on behalf of a user'],
      [admin, { onBehalfOf: 'bob' }, 'onBehalfOf: only service tokens start runs on behalf of a user'],
      [service, { onBehalfOf: '' }, 'onBehalfOf'],
      [service, { onBehalfOf: 'x'.repeat(201) }, 'onBehalfOf'],
      [service, { onBehalfOf: 42 }, 'onBehalfOf'],
      [service, { onBehalfOf: 'parley:scheduler' }, 'must not begin with "parley:"'],
    ];
    for (const [token, extra, message] of cases) {
      const reply = await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'nope', ...extra }, token);
      expect(reply).toEqual({
        status: 400,
        body: { error: { code: 'validation_failed', message: expect.stringContaining(message), details: { issues: [expect.objectContaining({ field: 'onBehalfOf' })] } } },
      });
    }
    // Nothing was started by the refused requests (the only run is bob's from the test above).
    expect((await stack.http('GET', '/v1/runs', undefined, admin)).body.runs.map((r: { task: string }) => r.task)).not.toContain('nope');
  });

  it('members and admins still start runs they own themselves', async () => {
    for (const [token, owner] of [
      [alice, 'alice'],
      [admin, 'carol'],
    ] as const) {
      const reply = await stack.http('POST', '/v1/runs', { agent: 'asker', task: 'mine' }, token);
      expect(reply).toMatchObject({ status: 201, body: { run: { owner } } });
      await stack.http('POST', `/v1/runs/${reply.body.run.id}/cancel`, undefined, token);
    }
  });

  it("a member's tenant-wide replay holds exactly the member's events, those of runs started on its behalf included", async () => {
    const [whole, own] = [await stack.connect(admin), await stack.connect(bob)];
    try {
      const [wholeAck, ownAck] = [await whole.subscribe({ since: 0 }), await own.subscribe({ since: 0 })];
      expect([wholeAck, ownAck]).toEqual([
        { ok: true, lastSeq: expect.any(Number), truncated: false },
        { ok: true, lastSeq: expect.any(Number), truncated: false },
      ]);
      const bobs = whole.events.filter((event) => event.seq <= ownAck.lastSeq && event.owner === 'bob');
      expect(bobs.length).toBeGreaterThan(0);
      expect(new Set(whole.events.map((event) => event.owner))).toEqual(new Set(['alice', 'bob', 'carol']));
      expect(own.events.filter((event) => event.seq <= ownAck.lastSeq)).toEqual(bobs);
    } finally {
      whole.close();
      own.close();
    }
  });
});

describe('a socket lives no longer than its token', () => {
  let own: TestStack;
  beforeAll(async () => {
    // A leeway of 1 s: the socket is closed when it ends, and the token is refused from then on.
    own = await TestStack.start({ overrides: { jwtClockSkewSecs: 1 } });
  });
  afterAll(() => own.close());

  it('is closed by the gateway when its token expires (with the leeway), and that token cannot sign in again', async () => {
    const token = signToken({ tenant: 'acme', sub: 'alice', role: 'member' }, own.config.jwtSecret, 2);
    const socket = io(`${own.url}/v1`, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    const reason = await new Promise<string>((resolve) => socket.once('disconnect', resolve));
    expect(reason).toBe('io server disconnect');
    const again = await new Promise<Error>((resolve) => {
      socket.once('connect_error', resolve);
      socket.connect();
    });
    expect(again.message).toBe('invalid token: token expired');
    socket.close();
  });

  it('is closed at its expiry too when its Authorization header carries trailing whitespace the check trims (a no-break space)', async () => {
    const token = signToken({ tenant: 'acme', sub: 'alice', role: 'member' }, own.config.jwtSecret, 2);
    const socket = io(`${own.url}/v1`, { extraHeaders: { authorization: `Bearer ${token}\u00a0` }, transports: ['polling'], reconnection: false, forceNew: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    const reason = await new Promise<string>((resolve) => socket.once('disconnect', resolve));
    expect(reason).toBe('io server disconnect');
    socket.close();
  });
});

describe('a signing key removed from the key set', () => {
  let keyed: TestStack;
  let jwks: Server;
  let served: object;
  /** The key set once the identity provider has dropped the old key. */
  let rotated: object;
  let oldKey: CryptoKey;

  beforeAll(async () => {
    const [before, after] = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256')]);
    oldKey = before.privateKey;
    const keyOf = async (pair: typeof before, kid: string) => ({ ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' });
    served = { keys: [await keyOf(before, 'old'), await keyOf(after, 'new')] };
    rotated = { keys: [await keyOf(after, 'new')] };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served)));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    keyed = await TestStack.start({
      agentsDir: writeAgents([askerAgent()]),
      overrides: {
        jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
        jwksCacheSecs: 1,
        jwtIssuer: ISSUER,
        jwtAudience: AUDIENCE,
        acceptSecretTokens: false,
        usingDevSecret: false,
      },
    });
  });

  afterAll(async () => {
    await keyed.close();
    jwks.closeAllConnections();
    await new Promise<void>((resolve) => jwks.close(() => resolve()));
  });

  it('closes the sockets that signed in with it and refuses its tokens, within the key set cache', async () => {
    const token = await new SignJWT({ tenant: 'acme', role: 'member' })
      .setProtectedHeader({ alg: 'RS256', kid: 'old' })
      .setSubject('alice')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(oldKey);
    const client = await keyed.connect(token);
    const gateway = keyed.gateway!.get(EventsGateway);
    try {
      await gateway.recheckTokens();
      expect(client.socket.connected).toBe(true);
      expect((await keyed.http('GET', '/v1/runs', undefined, token)).status).toBe(200);

      served = rotated;
      await waitFor(
        async () => {
          await gateway.recheckTokens();
          return !client.socket.connected;
        },
        { message: 'the socket of the removed key to be closed' },
      );
      expect((await keyed.http('GET', '/v1/runs', undefined, token)).status).toBe(401);
    } finally {
      client.close();
    }
  });
});
