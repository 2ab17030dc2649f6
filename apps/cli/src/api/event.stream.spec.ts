import { ParleyError, RateLimitedError } from '@parley/contracts';
import { FakeGateway } from '../testing/fake.gateway';
import { devToken } from '../cli.context';
import { ApiError } from './api.error';
import type { RawEvent } from './event.parse';
import { EventStream, StreamUnavailableError, type EventStreamOptions } from './event.stream';

describe('EventStream', () => {
  let gateway: FakeGateway;
  let stream: EventStream | undefined;

  beforeEach(async () => {
    gateway = new FakeGateway();
    await gateway.start();
  });

  afterEach(async () => {
    stream?.close();
    await gateway.stop();
  });

  function open(overrides: Partial<EventStreamOptions> = {}) {
    const events: RawEvent[] = [];
    const notices: string[] = [];
    const fatal = new Promise<Error>((resolve) => {
      stream = new EventStream({
        baseUrl: gateway.url,
        token: devToken({}),
        since: 0,
        onEvent: (event) => events.push(event),
        onNotice: (message) => notices.push(message),
        onFatal: resolve,
        ...overrides,
      });
    });
    return { events, notices, fatal };
  }

  it('fails with the gateway error body when the socket token is refused', async () => {
    const { fatal } = open({ token: 'nope' });
    const error = await fatal;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthenticated', message: expect.stringContaining('invalid token') });
  });

  it('fails with the error ack of a refused subscription', async () => {
    const { fatal } = open({ runId: 'not a valid id!' });
    expect(await fatal).toMatchObject({ code: 'validation_failed', status: 400 });
  });

  it('gives up after a few attempts when nothing listens', async () => {
    const url = gateway.url;
    await gateway.stop();
    const { fatal, notices } = open({ baseUrl: url });
    expect((await fatal).message).toMatch(/^cannot reach the gateway at http:\/\/127\.0\.0\.1:\d+/);
    expect(notices).toEqual([expect.stringContaining('retrying')]);
    gateway = new FakeGateway();
    await gateway.start();
  });

  it('delivers only the followed run, after `since`, each event once, in order', async () => {
    const now = new Date().toISOString();
    for (const id of ['ra', 'rb']) {
      gateway.runs.set(id, { id, tenant: 'dev', owner: 'cli', agent: 'echo', task: 't', trigger: 'api', status: 'queued', unattended: false, createdAt: now, updatedAt: now });
    }
    gateway.say('ra', 'one');
    gateway.say('rb', 'other');
    const { events } = open({ runId: 'ra', since: 1 });
    const expected = () => gateway.events.filter((event) => event.runId === 'ra' && event.seq > 1).map((event) => event.seq);
    await waitUntil(() => events.length === expected().length);
    gateway.say('ra', 'two');
    const lastBeforeDrop = gateway.events[gateway.events.length - 1].seq;
    await waitUntil(() => events.length === expected().length);
    gateway.replayEverything = true;
    gateway.dropConnections();
    await waitUntil(() => gateway.subscribes.length === 2);
    gateway.say('ra', 'three');
    await waitUntil(() => events.length === expected().length);
    expect(events.map((event) => event.seq)).toEqual(expected());
    expect(events.every((event) => event.runId === 'ra')).toBe(true);
    expect(gateway.subscribes[1]).toEqual({ since: lastBeforeDrop, runId: 'ra' });
  });

  it('connects again after a backoff when the handshake is refused at the socket limit or for a server fault, also on a reconnect', async () => {
    const now = new Date().toISOString();
    gateway.runs.set('ra', { id: 'ra', tenant: 'dev', owner: 'cli', agent: 'echo', task: 't', trigger: 'api', status: 'queued', unattended: false, createdAt: now, updatedAt: now });
    gateway.refuseConnections.push(
      new RateLimitedError('sockets', 0, 'tenant dev is at its limit of 1 sockets'),
      new ParleyError('internal', 'the event store is not ready'),
    );
    let subscribed = 0;
    let fatal: Error | undefined;
    const { events, notices } = open({ runId: 'ra', retryDelay: { firstMs: 20, maxMs: 100 }, onSubscribed: () => (subscribed += 1), onFatal: (error) => (fatal = error) });
    gateway.say('ra', 'one');
    await waitUntil(() => subscribed === 1 && events.length === 3);
    expect(notices).toEqual(['the gateway refused the connection (tenant dev is at its limit of 1 sockets); retrying in 1s…']);

    gateway.refuseConnections.push(new ParleyError('internal', 'the event store is not ready'));
    gateway.dropConnections();
    await waitUntil(() => subscribed === 2);
    gateway.say('ra', 'two');
    await waitUntil(() => events.length === 5);
    expect(notices.slice(1)).toEqual([
      'connection lost (transport close); reconnecting…',
      'the gateway refused the connection (the event store is not ready); retrying in 1s…',
      `reconnected; resuming after event #${events[2].seq}`,
    ]);
    expect(gateway.refuseConnections).toEqual([]);
    expect(fatal).toBeUndefined();
  });

  it('gives up after too many refusals in a row, with the last refusal', async () => {
    for (let n = 0; n < 4; n++) {
      gateway.refuseConnections.push(new RateLimitedError('sockets', 0, 'tenant dev is at its limit of 1 sockets'));
    }
    let fatal: Error | undefined;
    open({ retryDelay: { firstMs: 5, maxMs: 10 }, maxRefusals: 3, onFatal: (error) => (fatal = error) });
    await waitUntil(() => fatal !== undefined);
    expect(fatal).toMatchObject({ code: 'rate_limited', message: 'tenant dev is at its limit of 1 sockets' });
    expect(gateway.refuseConnections).toHaveLength(0);
  });

  it('refuses to answer while disconnected so the caller can use HTTP', async () => {
    const url = gateway.url;
    await gateway.stop();
    open({ baseUrl: url });
    await expect(stream!.answer('i1', { text: 'x' })).rejects.toBeInstanceOf(StreamUnavailableError);
    gateway = new FakeGateway();
    await gateway.start();
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
