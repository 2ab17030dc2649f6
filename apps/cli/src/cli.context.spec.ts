import { loadConfig, verifyToken } from '@parley/platform';
import { UsageError } from './cli.errors';
import { DEFAULT_URL, resolveConnection } from './cli.context';

describe('resolveConnection', () => {
  it('prefers flags over the environment over defaults', () => {
    expect(resolveConnection({ url: 'http://flag:1/', token: 't1' }, { PARLEY_URL: 'http://env:2', PARLEY_TOKEN: 't2' })).toEqual({
      baseUrl: 'http://flag:1',
      token: 't1',
    });
    expect(resolveConnection({}, { PARLEY_URL: 'https://env:2/base/', PARLEY_TOKEN: 't2' })).toEqual({ baseUrl: 'https://env:2/base', token: 't2' });
  });

  it('defaults to the local gateway and a dev admin token', async () => {
    const { baseUrl, token } = resolveConnection({}, { PARLEY_URL: '' });
    expect(baseUrl).toBe(DEFAULT_URL);
    await expect(verifyToken(token, loadConfig({}).jwtSecret)).resolves.toEqual({ tenant: 'dev', sub: 'cli', role: 'admin' });
  });

  it('signs the dev token with PARLEY_JWT_SECRET', async () => {
    const { token } = resolveConnection({}, { PARLEY_JWT_SECRET: 'another-secret-0123456789' });
    expect((await verifyToken(token, 'another-secret-0123456789')).sub).toBe('cli');
  });

  it('puts PARLEY_JWT_ISSUER and PARLEY_JWT_AUDIENCE in the dev token, as a gateway that checks them needs', async () => {
    const env = { PARLEY_JWT_SECRET: 'another-secret-0123456789', PARLEY_JWT_ISSUER: 'https://id.example', PARLEY_JWT_AUDIENCE: 'parley' };
    const { token } = resolveConnection({}, env);
    await expect(verifyToken(token, { secret: env.PARLEY_JWT_SECRET, issuer: env.PARLEY_JWT_ISSUER, audience: env.PARLEY_JWT_AUDIENCE })).resolves.toMatchObject({ sub: 'cli' });
  });

  it('rejects a URL that is not http(s)', () => {
    expect(() => resolveConnection({ url: 'localhost:8080' }, {})).toThrow(UsageError);
    expect(() => resolveConnection({ url: 'nope' }, {})).toThrow('invalid gateway URL "nope"');
  });
});
