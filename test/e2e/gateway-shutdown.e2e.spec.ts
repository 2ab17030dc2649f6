import { once } from 'node:events';
import { connect } from 'node:net';
import { TestStack } from '../support/stack';
import { within } from '../support/wait-for';

describe('shutting a gateway down (SIGTERM → app.close())', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ overrides: { shutdownGraceMs: 500 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('drops its live sockets, and a client that never finishes its request cannot hold the shutdown past the grace period', async () => {
    const client = await stack.connect();
    expect(await client.subscribe({})).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
    const disconnected = new Promise<string>((resolve) => client.socket.once('disconnect', resolve));

    // Half a request: Node's HTTP server would wait for the rest for a minute (headersTimeout).
    const stalled = connect(Number(new URL(stack.url).port), '127.0.0.1');
    await once(stalled, 'connect');
    stalled.write('GET /v1/runs HTTP/1.1\r\nHost: parley\r\n');
    // Cut: a reset (an 'error' before the 'close') is expected.
    stalled.on('error', () => undefined);
    const stopping = Date.now();
    const stalledClosed = new Promise<number>((resolve) => stalled.once('close', () => resolve(Date.now() - stopping)));

    await within('the gateway to close', 15_000, () => stack.stopGateway());
    await within('the live socket to be dropped', 5_000, () => disconnected);
    // Cut only once the grace period (500 ms) was over: a lower bound, which load cannot break.
    expect(await within('the stalled connection to be cut', 5_000, () => stalledClosed)).toBeGreaterThanOrEqual(450);
    client.close();
  });
});
