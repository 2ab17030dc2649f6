import { failoverReconnect } from './failover-reconnect';

describe('failoverReconnect', () => {
  const readonly = new Error("READONLY You can't write against a read only replica.");

  it('reconnects and sends again what a replica refused, for the first seconds of a failover; then fails it, until the failover is over', () => {
    let now = 0;
    const seen: string[] = [];
    const answer = failoverReconnect((error) => seen.push(error.message), () => now);
    expect(answer(readonly)).toBe(2);
    now = 3000;
    expect(answer(new Error('UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)'))).toBe(2);
    now = 3001;
    expect(answer(readonly)).toBe(1);
    now = 12_000;
    expect(answer(readonly)).toBe(1);
    // Ten quiet seconds: the next such reply is another failover's.
    now = 22_001;
    expect(answer(new Error('LOADING Redis is loading the dataset in memory'))).toBe(2);
    expect(seen).toHaveLength(5);
  });

  it('leaves every other error to the caller', () => {
    const answer = failoverReconnect(() => {
      throw new Error('not a failover');
    });
    for (const message of ['ERR unknown command', 'READONLYX', 'NOSCRIPT No matching script', 'MOVED 1 127.0.0.1:7000']) {
      expect(answer(new Error(message))).toBe(false);
    }
  });
});
