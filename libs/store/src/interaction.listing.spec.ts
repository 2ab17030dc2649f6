import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Interaction } from '@parley/contracts';
import { interactionFields } from './interaction.hash';
import type { InteractionPage } from './interaction.listing';
import { LISTING_SCAN_LIMIT } from './index.position';
import { NO_DEADLINE_SCORE } from './interaction.repository';
import { ParleyStore } from './store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = 'acme';

describe('listing interactions in pages', () => {
  let redis: Redis;
  let store: ParleyStore;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix: `il-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 600, leaseMs: 1000 });
  });

  afterEach(async () => {
    for await (const keys of redis.scanStream({ match: `${store.ctx.keys.openInteractions(TENANT).split('{')[0]}*`, count: 1000 })) {
      if ((keys as string[]).length > 0) {
        await redis.del(...(keys as string[]));
      }
    }
    await redis.quit();
  });

  function interaction(id: string, owner: string, runId = 'r1'): Interaction {
    return { id, tenant: TENANT, runId, owner, agent: 'a', waitReason: 'question', prompt: { kind: 'free_text', prompt: `q ${id}` }, status: 'open', createdAt: new Date(0).toISOString(), deadline: null };
  }

  /** Open interactions in both indexes, scored as given (equal scores are allowed); `closed` ones have left the indexes' truth. */
  async function open(entries: Array<{ id: string; score: number; owner?: string; closed?: boolean }>): Promise<void> {
    const k = store.ctx.keys;
    const pipeline = redis.pipeline();
    for (const { id, score, owner, closed } of entries) {
      pipeline.hset(k.interaction(TENANT, id), ...interactionFields({ ...interaction(id, owner ?? 'ann'), status: closed ? 'answered' : 'open' }));
      pipeline.zadd(k.openInteractions(TENANT), score, id);
      pipeline.zadd(k.openApprovals(TENANT), score, k.interaction(TENANT, id));
    }
    await pipeline.exec();
  }

  async function close(id: string): Promise<void> {
    const k = store.ctx.keys;
    await redis.multi().zrem(k.openInteractions(TENANT), id).zrem(k.openApprovals(TENANT), k.interaction(TENANT, id)).hset(k.interaction(TENANT, id), 'status', 'answered').exec();
  }

  type Lister = (after: string | undefined) => Promise<InteractionPage>;
  const openListing =
    (limit: number, keep: (i: Interaction) => boolean = () => true): Lister =>
    (after) =>
      store.interactions.listOpen(TENANT, { keep, limit, after });
  const approvalListing =
    (limit: number): Lister =>
    (after) =>
      store.interactions.listOpenApprovals(TENANT, { keep: () => true, limit, after });

  /** Every page until `next` is null; `between` runs after each page. */
  async function pages(list: Lister, between: (page: number) => Promise<void> = () => Promise.resolve()): Promise<string[][]> {
    const found: string[][] = [];
    let after: string | undefined;
    for (let n = 0; n < 1000; n++) {
      const page = await list(after);
      found.push(page.interactions.map((i) => i.id));
      if (page.next === null) {
        return found;
      }
      after = page.next;
      await between(n);
    }
    throw new Error('the listing never ended');
  }

  it('goes through an index in its order, each open interaction once, equal scores in member order', async () => {
    // Five share one score (the same deadline ms): a page boundary falls among them.
    const ids = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'b4', 'b5', 'c1', 'c2'];
    await open(ids.map((id, i) => ({ id, score: id.startsWith('b') ? 2000 : 1000 + i * 100 })));
    for (const list of [openListing(2), approvalListing(2)]) {
      const found = await pages(list);
      expect(found.flat()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'b4', 'b5', 'c1', 'c2'].sort((x, y) => scoreOf(x) - scoreOf(y) || (x < y ? -1 : 1)));
      expect(found.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    }
    function scoreOf(id: string): number {
      return id.startsWith('b') ? 2000 : 1000 + ids.indexOf(id) * 100;
    }
  });

  it('lists each interaction still open once while others close between pages', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `i${String(i).padStart(2, '0')}`);
    await open(ids.map((id, i) => ({ id, score: NO_DEADLINE_SCORE + 1000 + Math.floor(i / 3) })));
    const closed = new Set<string>();
    const found = await pages(openListing(4), async (page) => {
      // The last one given, one given earlier, and one not yet given close meanwhile.
      for (const id of [ids[page * 4 + 3], ids[0], ids[29 - page]]) {
        if (id !== undefined && !closed.has(id)) {
          closed.add(id);
          await close(id);
        }
      }
    });
    const listed = found.flat();
    expect(new Set(listed).size).toBe(listed.length);
    // Everything that stayed open was listed, in index order.
    expect(ids.filter((id) => !closed.has(id)).every((id) => listed.includes(id))).toBe(true);
    expect(listed).toEqual([...listed].sort());
  });

  it('a filter looks through pages to fill its own, and a short page at the scan limit says where to go on', async () => {
    const entries = Array.from({ length: LISTING_SCAN_LIMIT + 5 }, (_, i) => ({ id: `x${String(i).padStart(6, '0')}`, score: 1000 + i, owner: i === 3 || i >= LISTING_SCAN_LIMIT + 2 ? 'bob' : 'ann' }));
    await open(entries);
    const bobs = (i: Interaction): boolean => i.owner === 'bob';
    const first = await openListing(2, bobs)(undefined);
    // Past the scan limit of one call: what it found, and where it stopped, naming a score but no
    // interaction (the last one looked at is not the caller's to see).
    expect(first.interactions.map((i) => i.id)).toEqual(['x000003']);
    expect(first.next).toBe(`${1000 + LISTING_SCAN_LIMIT - 1}`);
    const second = await openListing(2, bobs)(first.next ?? undefined);
    expect(second.interactions.map((i) => i.id)).toEqual([`x0${LISTING_SCAN_LIMIT + 2}`, `x0${LISTING_SCAN_LIMIT + 3}`]);
    const third = await openListing(2, bobs)(second.next ?? undefined);
    expect(third).toEqual({ interactions: [expect.objectContaining({ id: `x0${LISTING_SCAN_LIMIT + 4}` })], next: null });
  });

  it('at the scan limit, finishes the score it stopped in, so that `next` names a score and skips nothing of it', async () => {
    // Twenty share the score the scan limit falls in; Bob's are one of them past the limit and one after.
    const entries = Array.from({ length: LISTING_SCAN_LIMIT + 30 }, (_, i) => {
      const tied = i >= LISTING_SCAN_LIMIT - 10 && i < LISTING_SCAN_LIMIT + 10;
      return { id: `y${String(i).padStart(6, '0')}`, score: tied ? 50_000 : i < LISTING_SCAN_LIMIT ? i : 100_000 + i, owner: i === LISTING_SCAN_LIMIT + 5 || i === LISTING_SCAN_LIMIT + 20 ? 'bob' : 'ann' };
    });
    await open(entries);
    const bobs = (i: Interaction): boolean => i.owner === 'bob';
    const first = await openListing(5, bobs)(undefined);
    expect(first.interactions.map((i) => i.id)).toEqual([`y0${LISTING_SCAN_LIMIT + 5}`]);
    expect(first.next).toBe('50000');
    const second = await openListing(5, bobs)(first.next ?? undefined);
    expect(second).toEqual({ interactions: [expect.objectContaining({ id: `y0${LISTING_SCAN_LIMIT + 20}` })], next: null });
  });

  it('pages through more entries of one score than a scan looks at (approvals opened before their scores differed)', async () => {
    const count = LISTING_SCAN_LIMIT + 50;
    await open(Array.from({ length: count }, (_, i) => ({ id: `z${String(i).padStart(6, '0')}`, score: NO_DEADLINE_SCORE })));
    const found = await pages(approvalListing(500));
    expect(found.flat()).toHaveLength(count);
    expect(new Set(found.flat()).size).toBe(count);
  });

  it('leaves out an entry whose interaction has closed but is still indexed, and ends with next null', async () => {
    await open([
      { id: 'o1', score: 1 },
      { id: 'c1', score: 2, closed: true },
      { id: 'o2', score: 3 },
    ]);
    expect(await pages(openListing(5))).toEqual([['o1', 'o2']]);
  });

  describe("a run's interactions", () => {
    /** A run log naming `count` questions, each opened (and `answered` ones resolved), with other entries between. */
    async function logOf(runId: string, count: number, answered: (n: number) => boolean): Promise<string[]> {
      const k = store.ctx.keys;
      const ids: string[] = [];
      const pipeline = redis.pipeline();
      for (let n = 0; n < count; n++) {
        const id = `${runId}-q${String(n).padStart(3, '0')}`;
        ids.push(id);
        pipeline.rpush(k.runLog(TENANT, runId), JSON.stringify({ type: 'assistant', content: [] }), JSON.stringify({ type: 'question', interactionId: id }));
        pipeline.hset(k.interaction(TENANT, id), ...interactionFields({ ...interaction(id, 'ann', runId), status: answered(n) ? 'answered' : 'open' }));
      }
      await pipeline.exec();
      return ids;
    }

    const runListing =
      (runId: string, limit: number, keep: (i: Interaction) => boolean = () => true): Lister =>
      (after) =>
        store.interactions.listForRun(TENANT, runId, { keep, limit, after });

    it('pages go back in time, each in the order asked, every interaction once', async () => {
      const ids = await logOf('r1', 7, () => false);
      expect(await pages(runListing('r1', 3))).toEqual([ids.slice(4, 7), ids.slice(1, 4), ids.slice(0, 1)]);
    });

    it('a full page that ends the listing says so (next null); a cursor past the log is refused, naming `after`', async () => {
      const ids = await logOf('r3', 6, () => false);
      expect(await pages(runListing('r3', 3))).toEqual([ids.slice(3, 6), ids.slice(0, 3)]);
      expect(await pages(runListing('r3', 6))).toEqual([ids]);
      await expect(runListing('r3', 3)('12')).rejects.toMatchObject({ code: 'validation_failed', details: { issues: [{ field: 'after', reason: expect.any(String) }] } });
      expect((await runListing('r3', 3)('11')).interactions.map((i) => i.id)).toEqual(ids.slice(3, 6));
    });

    it('a filter fills its page from older log pages; entries appended meanwhile shift nothing', async () => {
      const ids = await logOf('r2', 20, (n) => n % 4 !== 0);
      const open = (i: Interaction): boolean => i.status === 'open';
      const found = await pages(runListing('r2', 2, open), async () => {
        await logOf('r2-more', 1, () => false);
        await redis.rpush(store.ctx.keys.runLog(TENANT, 'r2'), JSON.stringify({ type: 'question', interactionId: 'r2-more-q000' }));
      });
      expect(found).toEqual([
        [ids[12], ids[16]],
        [ids[4], ids[8]],
        [ids[0]],
      ]);
    });
  });
});
