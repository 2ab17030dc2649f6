import type { ParleyEvent, StoredWebhook } from '@parley/contracts';
import { endpointsFor, payloadOf } from './webhook.router';

const endpoint = (over: Partial<StoredWebhook>): StoredWebhook => ({
  id: 'w1',
  tenant: 'acme',
  url: 'https://hooks.example/p',
  events: ['run.finished'],
  enabled: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  secret: 'whsec_0123456789abcdef',
  createdSeq: 10,
  ...over,
});

const event = (type: string, seq: number): ParleyEvent =>
  ({ seq, tenant: 'acme', runId: 'r1', owner: 'alice', at: '2026-01-01T00:00:01.000Z', type, data: { reason: 'finish' } }) as ParleyEvent;

describe('which endpoints an event goes to', () => {
  it('only enabled endpoints subscribed to the type and created before the event', () => {
    const endpoints = [
      endpoint({ id: 'a' }),
      endpoint({ id: 'b', enabled: false }),
      endpoint({ id: 'c', events: ['run.failed'] }),
      endpoint({ id: 'd', createdSeq: 11 }),
      endpoint({ id: 'e', createdSeq: 10, events: ['run.failed', 'run.finished'] }),
    ];
    expect(endpointsFor(event('run.finished', 11), endpoints).map((e) => e.id)).toEqual(['a', 'e']);
    expect(endpointsFor(event('run.finished', 10), endpoints)).toEqual([]);
    expect(endpointsFor(event('run.status', 12), endpoints)).toEqual([]);
  });

  it('builds the body with a stable event id', () => {
    expect(payloadOf(event('run.finished', 42))).toEqual({
      id: 'evt.acme.42',
      type: 'run.finished',
      tenant: 'acme',
      seq: 42,
      runId: 'r1',
      owner: 'alice',
      at: '2026-01-01T00:00:01.000Z',
      data: { reason: 'finish' },
    });
  });
});
