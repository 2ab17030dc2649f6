import { eventFromEntry } from './stream-entry';

describe('eventFromEntry', () => {
  const fields = ['r', 'run-1', 'o', 'alice', 'a', '1764450000123', 't', 'run.status', 'd', '{"status":"waiting","waitReason":"question"}'];

  it('rebuilds the event: seq from the entry id, tenant from the stream, time from epoch ms', () => {
    expect(eventFromEntry('acme', ['0-42', fields])).toEqual({
      seq: 42,
      tenant: 'acme',
      runId: 'run-1',
      owner: 'alice',
      at: '2025-11-29T21:00:00.123Z',
      type: 'run.status',
      data: { status: 'waiting', waitReason: 'question' },
    });
  });

  it.each([
    ['a deleted entry (no fields)', ['0-1', null]],
    ['an entry of the old layout (one JSON field)', ['0-1', ['e', '{"seq":1}']]],
    ['data that is not JSON', ['0-1', fields.map((v, i) => (i === 9 ? '{' : v))]],
    ['a time that is not a number', ['0-1', fields.map((v, i) => (i === 5 ? 'soon' : v))]],
  ] as const)('is undefined for %s', (_, entry) => {
    expect(eventFromEntry('acme', [entry[0], entry[1] === null ? null : [...entry[1]]])).toBeUndefined();
  });
});
