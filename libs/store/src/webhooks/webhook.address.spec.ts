import { lookup } from 'node:dns';
import { CreateWebhookBodySchema, webhookUrlProblem } from '@parley/contracts';
import { guardedLookup, isPrivateAddress, webhookTargetProblem } from './webhook.address';

describe('webhook address checks', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::127.0.0.1',
    '::a9fe:a9fe',
    '::',
    'fe80::1',
    'fd00::1',
    'fc00::abcd',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    'ff02::1',
  ])('%s is private or local', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888'])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  const noDns = () => Promise.reject(new Error('no DNS in this test'));

  it('refuses literal private addresses and local names unless private targets are allowed', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'https://[::1]/hook', 'http://10.0.0.5/x', 'http://localhost:3000/', 'http://api.localhost/', 'http://[::ffff:192.168.0.1]/']) {
      expect(await webhookTargetProblem(url, false, noDns)).toMatch(/private or local|is local/);
      expect(await webhookTargetProblem(url, true, noDns)).toBeNull();
    }
    expect(await webhookTargetProblem('https://93.184.216.34/hook', false, noDns)).toBeNull();
  });

  it('refuses a name that resolves to a private address, and accepts one that does not resolve now', async () => {
    expect(await webhookTargetProblem('https://internal.example/hook', false, () => Promise.resolve(['203.0.113.9', '10.0.0.7']))).toContain('resolves to');
    expect(await webhookTargetProblem('https://hooks.example/hook', false, () => Promise.resolve(['93.184.216.34']))).toBeNull();
    expect(await webhookTargetProblem('https://nowhere.invalid/hook', false, noDns)).toBeNull();
    expect(await webhookTargetProblem('https://slow.example/hook', false, () => new Promise(() => undefined), 20)).toBeNull();
  });

  it('the guarded lookup refuses what resolves to a private address at connect time', async () => {
    const resolve = (allow: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((done) =>
        guardedLookup(allow)('localhost', { all: false }, (error, address) => done({ error, address })),
      );
    const blocked = await resolve(false);
    expect(blocked.error?.message).toMatch(/localhost resolves to .* private or local/);
    const allowed = await resolve(true);
    expect(allowed.error).toBeNull();
    const expected = await new Promise<string>((done) => lookup('localhost', (_e, address) => done(address)));
    expect(allowed.address).toBe(expected);
  });
});

describe('webhook URL shape', () => {
  it.each([
    ['https://hooks.example.com/parley?x=1', null],
    ['http://hooks.example.com:8080/p', null],
    ['ftp://hooks.example.com/p', 'must use http or https'],
    ['https://user:pw@hooks.example.com/p', 'must not carry credentials (user:password@)'],
    ['https://user@hooks.example.com/p', 'must not carry credentials (user:password@)'],
    ['https://hooks.example.com/p#frag', 'must not have a fragment (#...)'],
    ['hooks.example.com/p', 'must be an absolute URL'],
    ['javascript:alert(1)', 'must use http or https'],
  ])('%s: %s', (url, problem) => {
    expect(webhookUrlProblem(url)).toBe(problem);
  });

  it('bounds the length and names the field', () => {
    const result = CreateWebhookBodySchema.safeParse({ url: `https://h.example/${'a'.repeat(2048)}`, events: ['run.finished'] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(['url']);
  });
});
