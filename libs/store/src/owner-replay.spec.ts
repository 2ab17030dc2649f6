import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ParleyEvent } from '@parley/contracts';
import type { Lease, NewRun } from './run.types';
import { userDigest } from './keys';
import { ParleyStore } from './store';
import { deleteKeys } from '../../../test/support/delete-keys';

/**
 * A member's tenant-wide replay reads the member's own events through the owner's seqs, not the
 * whole tenant stream: it costs what the member's events cost, however busy the tenant. Against a
 * real Redis, keys of its own per test.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = 'acme';

let admin: Redis;
const stores: ParleyStore[] = [];

function makeStore(eventsMaxLen = 1000): ParleyStore {
  const store = new ParleyStore(new Redis(REDIS_URL), { prefix: `or-${randomUUID()}`, eventsMaxLen, retentionSecs: 3600, leaseMs: 2000 });
  stores.push(store);
  return store;
}

beforeAll(() => {
  admin = new Redis(REDIS_URL);
});

afterEach(async () => {
  for (const store of stores.splice(0)) {
    await deleteKeys(admin, `${store.ctx.options.prefix}:*`);
    await store.ctx.redis.quit();
  }
});

afterAll(async () => {
  await admin.quit();
});

/** A run of `owner`, held: its events are written through the store as a worker's are. */
async function heldRun(store: ParleyStore, owner: string): Promise<Lease> {
  const run: NewRun = { tenant: TENANT, runId: randomUUID(), owner, agent: 'demo', task: 'work', trigger: 'api' };
  expect(await store.runs.create(run)).toMatchObject({ created: true });
  expect(await store.runs.acquire(TENANT, run.runId, owner, 'token')).toMatchObject({ status: 'acquired' });
  return { tenant: TENANT, runId: run.runId, owner, token: 'token' };
}

async function say(store: ParleyStore, lease: Lease, text: string): Promise<void> {
  expect(await store.runs.append(lease, null, [{ type: 'message', data: { text } }])).toMatchObject({ status: 'ok' });
}

const ofOwner = (events: ParleyEvent[], owner: string): ParleyEvent[] => events.filter((event) => event.owner === owner);

describe("an owner's replay", () => {
  it("gives exactly the owner's events of every run, in order, paged by seq", async () => {
    const store = makeStore();
    const alice = [await heldRun(store, 'alice'), await heldRun(store, 'alice')];
    const bob = await heldRun(store, 'bob');
    for (let i = 0; i < 3; i++) {
      for (const lease of [...alice, bob]) {
        await say(store, lease, `${lease.owner} ${i}`);
      }
    }
    const all = await store.events.readTenant(TENANT, 0, 1000);
    const own = ofOwner(all, 'alice');
    expect(own.length).toBe(2 * (3 + 3));

    expect(await store.events.replayOwner(TENANT, 'alice', 0, 1000)).toEqual({ events: own, truncated: false });
    for (const [i, event] of own.entries()) {
      expect(await store.events.replayOwner(TENANT, 'alice', event.seq, 2)).toEqual({ events: own.slice(i + 1, i + 3), truncated: false });
    }
    expect((await store.events.replayOwner(TENANT, 'bob', 0, 1000)).events).toEqual(ofOwner(all, 'bob'));
    expect(await store.events.replayOwner(TENANT, 'carol', 0, 1000)).toEqual({ events: [], truncated: false });
  });

  it('reads the tenant stream for what came before the first event filed by owner (an older release wrote it)', async () => {
    const store = makeStore();
    const k = store.ctx.keys;
    const alice = await heldRun(store, 'alice');
    const bob = await heldRun(store, 'bob');
    await say(store, alice, 'old');
    await say(store, bob, 'old');
    // As an older release leaves a tenant: its events are in the stream only.
    await admin.del(k.ownerEventSeqs(TENANT, 'alice'), k.ownerEventSeqs(TENANT, 'bob'), k.ownerSeqsFrom(TENANT));
    const old = await store.events.readTenant(TENANT, 0, 1000);
    await say(store, bob, 'new');
    await say(store, alice, 'new');
    const all = await store.events.readTenant(TENANT, 0, 1000);
    const firstFiled = all[old.length].seq;
    expect(Number(await admin.get(k.ownerSeqsFrom(TENANT)))).toBe(firstFiled);

    // From before it: a page of the tenant's events, every owner's (the caller filters them).
    expect(await store.events.replayOwner(TENANT, 'alice', 0, 1000)).toEqual({ events: all, truncated: false });
    expect(await store.events.replayOwner(TENANT, 'alice', old[1].seq, 1000)).toEqual({ events: all.slice(2), truncated: false });
    // Once the stream no longer holds events older than it (trimmed as emit.lua trims it), from
    // anywhere: the owner's own, and whether events after `since` were trimmed.
    await admin.xtrim(k.tenantEvents(TENANT), 'MINID', `0-${firstFiled}`);
    await admin.set(k.trimmedEvents(TENANT), String(old.at(-1)!.seq));
    expect(await store.events.replayOwner(TENANT, 'alice', old[1].seq, 1000)).toEqual({ events: [all.at(-1)], truncated: true });
    expect(await store.events.replayOwner(TENANT, 'alice', old.at(-1)!.seq, 1000)).toEqual({ events: [all.at(-1)], truncated: false });
    // From it on (seqs are not consecutive: from the seq before it): the owner's own.
    expect(await store.events.replayOwner(TENANT, 'alice', firstFiled - 1, 1000)).toEqual({ events: [all.at(-1)], truncated: false });
    expect(await store.events.replayOwner(TENANT, 'alice', firstFiled, 1000)).toEqual({ events: [all.at(-1)], truncated: false });
  });

  it("keeps an owner's newest seqs, as many as the stream keeps, and says when a replay starts before the cut", async () => {
    const store = makeStore(100);
    const alice = await heldRun(store, 'alice');
    for (let i = 0; i < 300; i++) {
      await say(store, alice, `m${i}`);
    }
    const kept = (await admin.strlen(store.ctx.keys.ownerEventSeqs(TENANT, 'alice'))) / 6;
    expect(kept).toBeGreaterThanOrEqual(100);
    expect(kept).toBeLessThanOrEqual(200);
    const stream = await store.events.readTenant(TENANT, 0, 1000);
    const cut = Number(await admin.hget(store.ctx.keys.ownerSeqCuts(TENANT), userDigest('alice')));
    expect(cut).toBeGreaterThan(0);
    const after = stream.filter((event) => event.seq > cut);
    expect(await store.events.replayOwner(TENANT, 'alice', 0, 1000)).toEqual({ events: after, truncated: true });
    expect(await store.events.replayOwner(TENANT, 'alice', cut, 1000)).toEqual({ events: after, truncated: false });
    expect(after.at(-1)).toMatchObject({ type: 'message', data: { text: 'm299' } });
  });

  it("deletes the seqs of an owner whose events the stream has all trimmed (a user who left), keeping the newest as the cut", async () => {
    const store = makeStore(100);
    const k = store.ctx.keys;
    const [carol, bob] = [await heldRun(store, 'carol'), await heldRun(store, 'bob')];
    const trimmed = async () => Number(await admin.get(k.trimmedEvents(TENANT)));
    const bobUntilTrimmed = async (seq: number) => {
      for (let i = 0; (await trimmed()) < seq; i++) {
        expect(i).toBeLessThan(1000);
        await say(store, bob, `b${i}`);
      }
    };
    await say(store, carol, 'first');
    const [first] = ofOwner(await store.events.readTenant(TENANT, 0, 1000), 'carol');
    await bobUntilTrimmed(first.seq);
    // Written right after a trim: the next one trims what came before it, not it.
    await say(store, carol, 'last');
    const stream = await store.events.readTenant(TENANT, 0, 1000);
    const last = stream.at(-1)!;
    expect(last).toMatchObject({ owner: 'carol', data: { text: 'last' } });
    // Some of carol's events are trimmed, her newest is not: her seqs stay.
    await bobUntilTrimmed(stream.at(-2)!.seq);
    expect(await trimmed()).toBeLessThan(last.seq);
    expect(await admin.exists(k.ownerEventSeqs(TENANT, 'carol'))).toBe(1);
    expect(await store.events.replayOwner(TENANT, 'carol', 0, 1000)).toEqual({ events: [last], truncated: true });

    await bobUntilTrimmed(last.seq);
    // Every seq of hers is of a trimmed event: gone, with only her cut left.
    expect(await admin.exists(k.ownerEventSeqs(TENANT, 'carol'))).toBe(0);
    expect(await admin.zscore(k.ownerLast(TENANT), userDigest('carol'))).toBeNull();
    expect(Number(await admin.hget(k.ownerSeqCuts(TENANT), userDigest('carol')))).toBe(last.seq);
    expect(await store.events.replayOwner(TENANT, 'carol', 0, 1000)).toEqual({ events: [], truncated: true });
    expect(await store.events.replayOwner(TENANT, 'carol', last.seq, 1000)).toEqual({ events: [], truncated: false });
    // Bob, still writing, keeps his.
    expect(await admin.exists(k.ownerEventSeqs(TENANT, 'bob'))).toBe(1);
    expect(await admin.zscore(k.ownerLast(TENANT), userDigest('bob'))).not.toBeNull();

    // Carol comes back: her seqs start again, after the cut.
    await say(store, carol, 'back');
    const back = ofOwner(await store.events.readTenant(TENANT, 0, 1000), 'carol').at(-1)!;
    expect(await store.events.replayOwner(TENANT, 'carol', 0, 1000)).toEqual({ events: [back], truncated: true });
    expect(await store.events.replayOwner(TENANT, 'carol', last.seq, 1000)).toEqual({ events: [back], truncated: false });
  });

  it('notes the owners whose seqs an older release started at their next drop of trimmed seqs', async () => {
    const store = makeStore(1000);
    const k = store.ctx.keys;
    const alice = await heldRun(store, 'alice');
    await say(store, alice, 'old');
    await admin.del(k.ownerLast(TENANT));
    const count = async () => (await admin.strlen(k.ownerEventSeqs(TENANT, 'alice'))) / 6;
    while ((await count()) < 100) {
      expect(await admin.zscore(k.ownerLast(TENANT), userDigest('alice'))).toBeNull();
      await say(store, alice, 'new');
    }
    expect(await admin.zscore(k.ownerLast(TENANT), userDigest('alice'))).not.toBeNull();
  });

  it("drops an owner's seqs of events the stream trimmed, so owners' seqs together stay the stream's size", async () => {
    const store = makeStore(100);
    const k = store.ctx.keys;
    const [alice, bob] = [await heldRun(store, 'alice'), await heldRun(store, 'bob')];
    for (let i = 0; i < 150; i++) {
      await say(store, alice, `a${i}`);
      for (let j = 0; j < 5; j++) {
        await say(store, bob, `b${i}.${j}`);
      }
    }
    // Alice's next events, up to the next drop (her seqs shrink): all she keeps then is in the stream.
    const length = () => admin.strlen(k.ownerEventSeqs(TENANT, 'alice'));
    for (let before = await length(), i = 0; (await length()) >= before; i++) {
      expect(i).toBeLessThan(200);
      before = await length();
      await say(store, alice, `more ${i}`);
    }
    const packed = (await admin.getBuffer(k.ownerEventSeqs(TENANT, 'alice')))!;
    const seqs = Array.from({ length: packed.length / 6 }, (_, i) => packed.readUIntBE(i * 6, 6));
    const trimmed = Number(await admin.get(k.trimmedEvents(TENANT)));
    expect(trimmed).toBeGreaterThan(0);
    expect(seqs.every((seq) => seq > trimmed)).toBe(true);

    const stream = await store.events.readTenant(TENANT, 0, 1000);
    const own = ofOwner(stream, 'alice');
    expect(seqs).toEqual(own.map((event) => event.seq));
    expect(await store.events.replayOwner(TENANT, 'alice', 0, 1000)).toEqual({ events: own, truncated: true });
    expect(await store.events.replayOwner(TENANT, 'alice', own[0].seq, 1000)).toEqual({ events: own.slice(1), truncated: false });
  });
});
