import { once } from 'node:events';
import { connect } from 'node:net';
import { within } from '../../../../test/support/wait-for';
import { startOpsServer } from './ops.server';

describe('the operations server', () => {
  it('answers health and metrics, and closes at once even while a client holds half a request', async () => {
    const server = await startOpsServer({ host: '127.0.0.1', port: 0, ready: () => Promise.resolve({ ready: true, checks: { redis: 'ok' } }) });
    const base = `http://127.0.0.1:${server.port}`;
    expect(await (await fetch(`${base}/health/live`)).json()).toEqual({ live: true });
    expect(await (await fetch(`${base}/health/ready`)).json()).toEqual({ ready: true, checks: { redis: 'ok' } });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);

    // Node would wait for the rest of this request before the server counts as closed.
    const stalled = connect(server.port, '127.0.0.1');
    await once(stalled, 'connect');
    stalled.write('GET /metrics HTTP/1.1\r\nHost: ops\r\n');
    // Cut: a reset (an 'error' before the 'close') is expected.
    stalled.on('error', () => undefined);
    const cut = new Promise((resolve) => stalled.once('close', resolve));
    await within('the ops server to close and cut the stalled client', 10_000, () => Promise.all([server.close(), cut]));
  });

  it('with a metrics token, serves /metrics only to a request bearing it; health stays open', async () => {
    const token = 'scrape-token-of-some-length';
    const server = await startOpsServer({ host: '127.0.0.1', port: 0, ready: () => Promise.resolve({ ready: true, checks: {} }), metricsToken: token });
    const base = `http://127.0.0.1:${server.port}`;
    try {
      const refused = await fetch(`${base}/metrics`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(await refused.json()).toEqual({ error: { code: 'unauthenticated', message: expect.stringContaining('PARLEY_METRICS_TOKEN') } });
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: { authorization: token } })).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `bearer  ${token}` } })).status).toBe(200);
      const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('# TYPE');
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
