import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { LogEntry } from '@parley/contracts';
import { ParleyStore } from '@parley/store';
import { HeldLog, RecentLogs } from './held.log';

/** Against a real Redis, under a key prefix of its own (deleted after each test). */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('HeldLog', () => {
  let redis: Redis;
  let store: ParleyStore;
  let logKey: string;
  const runId = randomUUID();
  const said = (text: string): string => JSON.stringify({ type: 'task', text, at: new Date().toISOString() } satisfies LogEntry);
  const texts = (entries: LogEntry[]) => entries.map((e) => (e.type === 'task' ? e.text : e.type));
  /** Appends as append-log does, and tells the log what the script answers (length, the entry before's SHA-1). */
  const appendOwn = async (log: HeldLog, words: string[]): Promise<void> => {
    const before = await redis.lindex(logKey, -1);
    const lines = words.map(said);
    const length = await redis.rpush(logKey, ...lines);
    log.appended(
      lines.map((line) => JSON.parse(line) as LogEntry),
      length,
      before === null ? null : createHash('sha1').update(before).digest('hex'),
    );
  };

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix: `hl-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 60, leaseMs: 1000 });
    logKey = store.ctx.keys.runLog('acme', runId);
  });

  afterEach(async () => {
    await redis.del(logKey);
    await redis.quit();
  });

  it('reads the whole log once, then only what was appended since', async () => {
    await redis.rpush(logKey, said('a'), said('b'));
    const log = new HeldLog(store, 'acme', runId);
    expect(texts(await log.read())).toEqual(['a', 'b']);
    expect(texts(await log.read())).toEqual(['a', 'b']);
    await redis.rpush(logKey, said('c'));
    await redis.rpush(logKey, said('d'));
    expect(texts(await log.read())).toEqual(['a', 'b', 'c', 'd']);
  });

  it('an empty log reads empty, then grows', async () => {
    const log = new HeldLog(store, 'acme', runId);
    expect(await log.read()).toEqual([]);
    await redis.rpush(logKey, said('a'));
    expect(texts(await log.read())).toEqual(['a']);
  });

  it('reads the log afresh when what it had read is no longer there (writes lost by a Redis restart)', async () => {
    await redis.rpush(logKey, said('a'), said('b'), said('c'));
    const log = new HeldLog(store, 'acme', runId);
    expect(texts(await log.read())).toEqual(['a', 'b', 'c']);
    // The last write was lost, and others were appended after the restart: the log is as long again.
    await redis.rpop(logKey);
    await redis.rpush(logKey, said('x'), said('y'));
    expect(texts(await log.read())).toEqual(['a', 'b', 'x', 'y']);
    // Shorter than what was read.
    await redis.ltrim(logKey, 0, 0);
    expect(texts(await log.read())).toEqual(['a']);
  });

  it('takes what the lease acquire read as a read, once: the read after it makes no round trip', async () => {
    await redis.rpush(logKey, said('a'), said('b'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    await redis.rpush(logKey, said('c'));
    const reads = jest.spyOn(store.runs, 'readLogLines');
    expect(log.readFrom).toBe(1);
    log.absorb(await redis.lrange(logKey, 1, -1), 1);
    expect(texts(await log.read())).toEqual(['a', 'b', 'c']);
    expect(reads).not.toHaveBeenCalled();
    await redis.rpush(logKey, said('d'));
    expect(texts(await log.read())).toEqual(['a', 'b', 'c', 'd']);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('drops what the acquire read when it does not continue the log held, and reads the whole log', async () => {
    await redis.rpush(logKey, said('a'), said('b'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    await redis.rpop(logKey);
    await redis.rpush(logKey, said('x'));
    log.absorb(await redis.lrange(logKey, 1, -1), 1);
    expect(texts(await log.read())).toEqual(['a', 'x']);
  });

  it("drops what the acquire read from where the log held no longer reads: another step's read reset it meanwhile", async () => {
    await redis.rpush(logKey, said('a'), said('b'), said('c'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    await redis.rpush(logKey, said('d'));
    const tail = await redis.lrange(logKey, 2, -1);
    // Another step's read finds the log changed (a write lost, another made) and reads it afresh;
    // the acquire's lines arrive while it does, when nothing is held.
    await redis.lset(logKey, 2, said('c2'));
    const readLines = store.runs.readLogLines.bind(store.runs);
    let stepRead: Promise<LogEntry[]> | undefined;
    jest
      .spyOn(store.runs, 'readLogLines')
      .mockImplementationOnce(readLines)
      .mockImplementationOnce(async (...args) => {
        log.absorb(tail, 2);
        // The acquiring step's first read, before the other step's fresh read is back.
        stepRead = log.read();
        return readLines(...args);
      });
    expect(texts(await log.read())).toEqual(['a', 'b', 'c2', 'd']);
    expect(texts(await stepRead!)).toEqual(['a', 'b', 'c2', 'd']);
  });

  it('a read that finds the log changed reads it afresh even when an acquire had just handed lines over', async () => {
    await redis.rpush(logKey, said('a'), said('b'), said('c'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    const lines = await redis.lrange(logKey, 2, -1);
    await redis.lset(logKey, 2, said('c2'));
    const reading = log.read();
    log.absorb(lines, 2);
    expect(texts(await reading)).toEqual(['a', 'b', 'c2']);
  });

  it('holds its own append when nobody else appended since its read, and reads when someone did', async () => {
    await redis.rpush(logKey, said('a'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    const reads = jest.spyOn(store.runs, 'readLogLines');
    await appendOwn(log, ['b', 'c']);
    expect(texts(await log.read())).toEqual(['a', 'b', 'c']);
    expect(reads).not.toHaveBeenCalled();

    // An answer landed between the last read and this worker's append: the next read fetches both.
    await redis.rpush(logKey, said('answer'));
    await appendOwn(log, ['d']);
    expect(texts(await log.read())).toEqual(['a', 'b', 'c', 'answer', 'd']);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('does not hold its own append when the entry before it is not the one it read (writes lost and others made)', async () => {
    await redis.rpush(logKey, said('a'), said('b'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    // As long as before, but its last entry is another: a Redis restart lost 'b' and 'x' came after.
    await redis.lset(logKey, 1, said('x'));
    await appendOwn(log, ['c']);
    expect(texts(await log.read())).toEqual(['a', 'x', 'c']);
  });

  it('holds its first append onto an empty log it never read', async () => {
    const log = new HeldLog(store, 'acme', runId);
    const reads = jest.spyOn(store.runs, 'readLogLines');
    await appendOwn(log, ['a']);
    expect(texts(await log.read())).toEqual(['a']);
    expect(reads).not.toHaveBeenCalled();
  });

  it('two reads at once (a step whose lease was taken over, and its successor) add each entry once', async () => {
    await redis.rpush(logKey, said('a'));
    const log = new HeldLog(store, 'acme', runId);
    await log.read();
    await redis.rpush(logKey, said('b'), said('c'));
    const [first, second] = await Promise.all([log.read(), log.read()]);
    expect(texts(first)).toEqual(['a', 'b', 'c']);
    expect(texts(second)).toEqual(['a', 'b', 'c']);
  });
});

describe('RecentLogs', () => {
  let redis: Redis;
  let store: ParleyStore;
  const runIds = [randomUUID(), randomUUID(), randomUUID()];
  const said = (text: string): string => JSON.stringify({ type: 'task', text, at: new Date().toISOString() } satisfies LogEntry);

  beforeEach(async () => {
    redis = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix: `hl-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 60, leaseMs: 1000 });
    for (const [i, runId] of runIds.entries()) {
      await redis.rpush(store.ctx.keys.runLog('acme', runId), ...Array.from({ length: i + 1 }, (_, n) => said(`${n}`)));
    }
  });

  afterEach(async () => {
    await redis.del(...runIds.map((runId) => store.ctx.keys.runLog('acme', runId)));
    await redis.quit();
  });

  it("keeps a run's log from one step to its next, and forgets the least recently used past its bounds", async () => {
    const byRuns = new RecentLogs(store, 2, 1000);
    const first = byRuns.of('acme', runIds[0]);
    await first.read();
    expect(byRuns.of('acme', runIds[0])).toBe(first);
    await byRuns.of('acme', runIds[1]).read();
    await byRuns.of('acme', runIds[2]).read();
    expect(byRuns.size).toBe(2);
    expect(byRuns.of('acme', runIds[0])).not.toBe(first);

    // Room for three entries: the log of three entries, the one asked for, stays alone.
    const entryBytes = said('0').length;
    const bySize = new RecentLogs(store, 10, 3 * entryBytes);
    await bySize.of('acme', runIds[0]).read();
    await bySize.of('acme', runIds[1]).read();
    expect(bySize.size).toBe(2);
    await bySize.of('acme', runIds[2]).read();
    bySize.of('acme', runIds[2]);
    expect(bySize.size).toBe(1);
  });

  it('keeps its weight as logs grow, start afresh and are forgotten, and a forgotten log still in use no longer counts', async () => {
    const entryBytes = said('0').length;
    const recent = new RecentLogs(store, 2, 1000);
    const forgotten = recent.of('acme', runIds[0]);
    await forgotten.read();
    const kept = recent.of('acme', runIds[1]);
    await kept.read();
    expect(recent.bytes).toBe(3 * entryBytes);

    await recent.of('acme', runIds[2]).read();
    expect(recent.bytes).toBe(5 * entryBytes);
    // The step that holds the forgotten log goes on with it: what it reads is its own.
    await redis.rpush(store.ctx.keys.runLog('acme', runIds[0]), said('1'));
    await forgotten.read();
    expect(forgotten.bytes).toBe(2 * entryBytes);
    expect(recent.bytes).toBe(5 * entryBytes);

    // A log that lost its last entries is dropped and read whole again.
    const log = store.ctx.keys.runLog('acme', runIds[1]);
    await redis.del(log);
    await redis.rpush(log, said('x'));
    await kept.read();
    expect(kept.bytes).toBe(entryBytes);
    expect(recent.bytes).toBe(4 * entryBytes);
  });

  it("a step's appends and wakes reach the log it works on, even once that log is forgotten here", async () => {
    const run = { tenant: 'acme', runId: randomUUID(), owner: 'alice', agent: 'demo', task: 'Plan', trigger: 'api' as const };
    await store.runs.create(run);
    const lease = { tenant: 'acme', runId: run.runId, owner: 'alice', token: randomUUID() };
    const acquired = await store.runs.acquire('acme', run.runId, 'alice', lease.token, { worker: 'w1', logFrom: 0 });
    expect(acquired.status).toBe('acquired');
    const recent = new RecentLogs(store, 1, 1000);
    const log = recent.forStep(lease);
    log.absorb(acquired.status === 'acquired' ? acquired.logLines : [], 0);
    expect((await log.read()).map((e) => e.type)).toEqual(['task']);
    // Another run's step pushes this one out of the recent logs while the step goes on.
    await recent.of('acme', runIds[0]).read();
    expect(recent.readFrom('acme', run.runId)).toBe(0);

    const reads = jest.spyOn(store.runs, 'readLogLines');
    try {
      const note: LogEntry = { type: 'user_message', messageId: 'm1', text: 'hi', by: { kind: 'system' }, at: new Date().toISOString() };
      expect(await recent.append(lease, note)).toMatchObject({ status: 'ok', length: 2 });
      expect((await log.read()).map((e) => e.type)).toEqual(['task', 'user_message']);
      expect(reads).not.toHaveBeenCalled();

      await redis.rpush(store.ctx.keys.runLog('acme', run.runId), said('an answer'));
      expect(await recent.append(lease, { ...note, messageId: 'm2' })).toMatchObject({ status: 'ok', length: 4 });
      // Someone else wrote before that append: the step's log is not current, and reads.
      expect((await log.read()).map((e) => (e.type === 'task' ? e.text : e.type))).toEqual(['Plan', 'user_message', 'an answer', 'user_message']);
      expect(reads).toHaveBeenCalledTimes(1);

      expect(await recent.append(lease, { ...note, messageId: 'm3' })).toMatchObject({ status: 'ok', length: 5 });
      recent.woken(lease);
      await log.read();
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
      recent.stepDone(lease);
      for await (const keys of redis.scanStream({ match: `${store.ctx.options.prefix}:*`, count: 1000 })) {
        if ((keys as string[]).length > 0) {
          await redis.del(...(keys as string[]));
        }
      }
    }
  });
});
