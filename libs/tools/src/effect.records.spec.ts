import { atMostOnce, type EffectRecords } from './effect.records';
import { okResult, type ToolResult } from './tool-result';

/** The records' contract (one result per id, a repeat returns the first), in memory: pure logic under test. */
function records(): EffectRecords & { kept: Map<string, string> } {
  const kept = new Map<string, string>();
  return {
    kept,
    recorded: (effectId) => Promise.resolve(kept.get(effectId) ?? null),
    commit: (effectId, _changes, result) => {
      const first = kept.get(effectId);
      if (first !== undefined) {
        return Promise.resolve({ status: 'replayed', result: first });
      }
      kept.set(effectId, result);
      return Promise.resolve({ status: 'applied', result });
    },
  };
}

describe('atMostOnce', () => {
  const answer: ToolResult = okResult({ status: 201, body: 'made' });

  it('sends once and records the result; a retried step replays it without sending', async () => {
    const store = records();
    const send = jest.fn(() => Promise.resolve(answer));
    expect(await atMostOnce(store, 'fx_1', 'POST', send)).toEqual(answer);
    expect(await atMostOnce(store, 'fx_1', 'POST', send)).toEqual(answer);
    expect(send).toHaveBeenCalledTimes(1);
    expect([...store.kept.keys()]).toEqual(['fx_1:sent', 'fx_1']);
  });

  it('does not send a POST again whose sender stopped mid-send: the result says it may have been received', async () => {
    const store = records();
    store.kept.set('fx_2:sent', 'sent');
    const send = jest.fn(() => Promise.resolve(answer));
    const result = await atMostOnce(store, 'fx_2', 'POST', send);
    expect(send).not.toHaveBeenCalled();
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.content)).toEqual({
      ok: false,
      error: 'the worker sending this POST stopped before its response was recorded: the server may or may not have received it, and it is not sent again (Idempotency-Key fx_2)',
    });
    // Recorded too: every later retry says the same.
    expect(await atMostOnce(store, 'fx_2', 'POST', send)).toEqual(result);
  });

  it('sends a GET again whose sender stopped mid-send (nothing marks a safe request)', async () => {
    const store = records();
    const send = jest.fn(() => Promise.resolve(answer));
    expect(await atMostOnce(store, 'fx_3', null, send)).toEqual(answer);
    expect([...store.kept.keys()]).toEqual(['fx_3']);
  });
});
