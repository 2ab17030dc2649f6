import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ParleyStore } from './store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('listing runs in pages', () => {
  let redis: Redis;
  let store: ParleyStore;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix: `rl-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 600, leaseMs: 1000 });
  });

  afterEach(async () => {
    for await (const keys of redis.scanStream({ match: `${store.ctx.keys.runIndex('acme').split('{')[0]}*`, count: 1000 })) {
      if ((keys as string[]).length > 0) {
        await redis.del(...(keys as string[]));
      }
    }
    await redis.quit();
  });

  /** Index entries by creation ms; `gone` ones have no run hash (their retention is over). */
  async function index(entries: Array<{ id: string; ms: number; gone?: boolean; owner?: string }>): Promise<void> {
    const pipeline = redis.pipeline();
    for (const { id, ms, gone, owner } of entries) {
      pipeline.zadd(store.ctx.keys.runIndex('acme'), ms, id);
      if (!gone) {
        pipeline.hset(store.ctx.keys.run('acme', id), 'status', 'finished', 'owner', owner ?? 'ann', 'agent', 'a', 'task', 't', 'trigger', 'api', 'createdAt', ms, 'updatedAt', ms);
      }
    }
    await pipeline.exec();
  }

  async function all(limit: number, owner?: string): Promise<{ ids: string[]; cursors: string[] }> {
    const ids: string[] = [];
    const cursors: string[] = [];
    let after: string | undefined;
    for (let call = 0; call < 50; call++) {
      const page = await store.runs.list('acme', { limit, ...(owner ? { owner } : {}), ...(after ? { after } : {}) });
      ids.push(...page.runs.map((run) => run.id));
      if (page.next === null) {
        return { ids, cursors };
      }
      cursors.push(page.next);
      after = page.next;
    }
    throw new Error('the listing never ended');
  }

  async function idsAfter(after: string): Promise<{ ids: string[]; next: string | null }> {
    const page = await store.runs.list('acme', { limit: 10, after });
    return { ids: page.runs.map((run) => run.id), next: page.next };
  }

  it('gives each run once, newest first, through runs of the same millisecond and gone entries, whatever the page size', async () => {
    // Same ms: listed in reverse order of their ids.
    const entries = [
      { id: 'a', ms: 100 },
      { id: 'b', ms: 100, gone: true },
      { id: 'c', ms: 100 },
      { id: 'd', ms: 100 },
      { id: 'e', ms: 90, gone: true },
      { id: 'f', ms: 80 },
      { id: 'g', ms: 80 },
      { id: 'h', ms: 70, gone: true },
    ];
    const live = ['d', 'c', 'a', 'g', 'f'];
    for (const limit of [1, 2, 3, 5, 10]) {
      await redis.del(store.ctx.keys.runIndex('acme'));
      await index(entries);
      expect({ limit, ids: (await all(limit)).ids }).toEqual({ limit, ids: live });
    }
    // Gone entries were dropped from the index as they were met.
    expect(await redis.zrange(store.ctx.keys.runIndex('acme'), '0', '-1')).toEqual(['f', 'g', 'a', 'c', 'd']);
  });

  it('lists a run once when another is started in the millisecond of the page boundary between pages', async () => {
    await index([
      { id: 'b', ms: 100 },
      { id: 'd', ms: 100 },
      { id: 'f', ms: 100 },
      { id: 'a', ms: 90 },
    ]);
    const first = await store.runs.list('acme', { limit: 2 });
    expect(first.runs.map((run) => run.id)).toEqual(['f', 'd']);
    // In that ms 'e' comes between 'f' and 'd': a count of the runs passed would now stop before 'd'.
    await index([{ id: 'e', ms: 100 }]);
    expect(await idsAfter(first.next!)).toEqual({ ids: ['b', 'a'], next: null });
  });

  it('skips no run when a run of the page boundary millisecond expires and leaves the index between pages', async () => {
    await index([
      { id: 'b', ms: 100 },
      { id: 'd', ms: 100 },
      { id: 'f', ms: 100 },
      { id: 'h', ms: 100 },
      { id: 'a', ms: 90 },
    ]);
    const first = await store.runs.list('acme', { limit: 2 });
    expect(first.runs.map((run) => run.id)).toEqual(['h', 'f']);
    // 'f', the page's last run, expires; another caller's listing meets its entry and drops it.
    await redis.del(store.ctx.keys.run('acme', 'f'));
    expect((await store.runs.list('acme', { limit: 10 })).runs.map((run) => run.id)).toEqual(['h', 'd', 'b', 'a']);
    expect(await redis.zscore(store.ctx.keys.runIndex('acme'), 'f')).toBeNull();
    expect(await idsAfter(first.next!)).toEqual({ ids: ['d', 'b', 'a'], next: null });
  });

  it("a filtered listing's cursor is a position, and runs started after the first page are not in the later ones", async () => {
    await index([
      { id: 'mine-1', ms: 10, owner: 'carol' },
      { id: 'x', ms: 20 },
      { id: 'y', ms: 30 },
      { id: 'mine-2', ms: 40, owner: 'carol' },
    ]);
    const first = await store.runs.list('acme', { limit: 1, owner: 'carol' });
    expect(first.runs.map((run) => run.id)).toEqual(['mine-2']);
    expect(first.next).toBe('40.mine-2');
    await index([{ id: 'mine-3', ms: 50, owner: 'carol' }]);
    const rest = await store.runs.list('acme', { limit: 5, owner: 'carol', after: first.next! });
    expect(rest).toMatchObject({ runs: [{ id: 'mine-1' }], next: null });
    // The last run of the index given: nothing follows, no cursor.
    expect((await all(1, 'carol')).cursors).toEqual(['50.mine-3', '40.mine-2']);
  });

  it('a full page says next only when something follows its last run', async () => {
    await index([
      { id: 'a', ms: 10 },
      { id: 'b', ms: 20 },
      { id: 'c', ms: 30 },
    ]);
    expect(await store.runs.list('acme', { limit: 3 })).toMatchObject({ next: null });
    // The page ends inside its batch (of 50): the rest of the batch follows.
    expect(await store.runs.list('acme', { limit: 2 })).toMatchObject({ next: '20.b' });
    // The page ends exactly at a full batch: Redis is asked whether anything follows.
    const many = Array.from({ length: 100 }, (_, i) => ({ id: `r${String(i).padStart(3, '0')}`, ms: 1000 + i }));
    await index(many);
    expect(await store.runs.list('acme', { limit: 50 })).toMatchObject({ next: '1050.r050' });
    expect(await store.runs.list('acme', { limit: 50, after: '1050.r050' })).toMatchObject({ next: '1000.r000' });
    const toTheEnd = await store.runs.list('acme', { limit: 53, after: '1050.r050' });
    expect({ given: toTheEnd.runs.length, last: toTheEnd.runs.at(-1)?.id, next: toTheEnd.next }).toEqual({ given: 53, last: 'a', next: null });
  });
});
