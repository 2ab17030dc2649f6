/**
 * What a parked run leaves in Redis, read without assuming the store's key layout: the structure
 * check of item 4 compares these descriptions between a reference run and a bulk run, and the
 * memory notes describe each component from a sample key.
 */
import type { Redis } from 'ioredis';
import { jobIds, type LogEntry, type ParleyEvent } from '@parley/contracts';
import type { ParleyStore } from '@parley/store';
import { pool, scanKeys } from './stats';

/** Where a run lives: its store, the key prefix, the tenant and the tenant's zsets (their names, found once). */
export interface RunScope {
  store: ParleyStore;
  redis: Redis;
  prefix: string;
  tenant: string;
  tenantZsets: string[];
}

export const tenantTag = (prefix: string, tenant: string) => `${prefix}:{t:${tenant}}`;

/** Keys of one run or one interaction; everything else (tenant keys, BullMQ keys, the timer jobs) is shared. */
export const PER_RUN = /:(run|ix):[0-9a-f-]{36}(:[a-z]+)?$/;

/** The tenant's own zsets (indexes), neither a run's nor an interaction's. */
export async function tenantZsets(redis: Redis, prefix: string, tenant: string): Promise<string[]> {
  const tag = tenantTag(prefix, tenant);
  const keys = (await scanKeys(redis, tag)).filter((key) => !PER_RUN.test(key) && !key.slice(tag.length).includes(':run:'));
  const zsets: string[] = [];
  for (const key of keys.sort()) {
    if ((await redis.type(key)) === 'zset') {
      zsets.push(key);
    }
  }
  return zsets;
}

/** One key's shape: its type, and hash fields, log entry types or zset size. */
async function describeKey(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'hash') {
    return `${type} ${(await redis.hkeys(key)).sort().join(',')}`;
  }
  if (type === 'zset') {
    return `${type} ${await redis.zcard(key)} members`;
  }
  if (type === 'list' && key.endsWith(':log')) {
    return `${type} ${(await redis.lrange(key, 0, -1)).map((line) => (JSON.parse(line) as LogEntry).type).join(',')}`;
  }
  return type;
}

/** The run's replay, as the gateway serves it (`read-run-events`): event types in order; another run's event is flagged. */
export async function replayOf(scope: RunScope, runId: string): Promise<string[]> {
  const events: ParleyEvent[] = await scope.store.events.readRun(scope.tenant, runId, 0, 1000);
  return events.map((e) => (e.runId === runId ? e.type : `foreign:${e.type}`));
}

/** Which tenant indexes hold the open interaction (by id or by key), and whether it is scored by its deadline. */
async function indexEntries(scope: RunScope, ix: string, deadline: number): Promise<string[]> {
  const tag = tenantTag(scope.prefix, scope.tenant);
  const out: string[] = [];
  for (const zset of scope.tenantZsets) {
    for (const [member, label] of [
      [ix, '<ix>'],
      [`${tag}:ix:${ix}`, '<ix key>'],
    ]) {
      const score = await scope.redis.zscore(zset, member);
      if (score !== null) {
        out.push(`${zset.replace(tag, '<tenant>')} zset member ${label} ${Number(score) === deadline ? 'scored by its deadline' : 'not scored by its deadline'}`);
      }
    }
  }
  return out;
}

/** The tenant's deadline timer covers this deadline, and its timer job is there. */
async function timerEntries(scope: RunScope, deadline: number): Promise<string[]> {
  const tag = tenantTag(scope.prefix, scope.tenant);
  const value = await scope.redis.get(`${tag}:deadline-timer`);
  const timer = Number(value);
  const jobId = jobIds.deadlineTimer(scope.tenant, timer);
  const jobKey = `${scope.prefix}:bull:deadlines:${jobId}`;
  const delayed = (await scope.redis.zscore(`${scope.prefix}:bull:deadlines:delayed`, jobId)) !== null;
  const due = value === null ? 'missing' : timer <= deadline ? 'at or before its deadline' : 'after its deadline';
  return [
    `<tenant>:deadline-timer string ${due}`,
    `<prefix>:bull:deadlines:dl.<tenant>.<timer> ${await scope.redis.type(jobKey)} ${(await scope.redis.hkeys(jobKey)).sort().join(',')}${delayed ? ' (delayed)' : ''}`,
  ];
}

/** Key layout of one parked run, ids replaced: its keys, its replay, where its deadline is filed and the timer that covers it. */
export async function shapeOf(scope: RunScope, runId: string): Promise<string[]> {
  const tag = tenantTag(scope.prefix, scope.tenant);
  const ix = (await scope.redis.hget(`${tag}:run:${runId}`, 'pendingInteractionId')) ?? '<none>';
  const interaction = await scope.store.interactions.get(scope.tenant, ix);
  const deadline = interaction?.deadline ? Date.parse(interaction.deadline) : Number.NaN;
  const keys = [...(await scanKeys(scope.redis, `${tag}:run:${runId}`)), `${tag}:run:${runId}`, `${tag}:ix:${ix}`];
  const out: string[] = [];
  for (const key of keys.sort()) {
    out.push(`${key.replace(runId, '<run>').replace(ix, '<ix>').replace(tag, '<tenant>')} ${await describeKey(scope.redis, key)}`);
  }
  out.push(`replay of <run> (read-run-events): ${(await replayOf(scope, runId)).join(',')}`);
  out.push(...(await indexEntries(scope, ix, deadline)), ...(await timerEntries(scope, deadline)));
  return out;
}

/** The tenant index that files deadlines, from a shape: the one whose score for the run's interaction is its deadline. */
export function deadlineIndexIn(shape: string[]): string {
  const line = shape.find((l) => / zset member .* scored by its deadline$/.test(l) && !l.includes('not scored'));
  return line ? line.split(' ')[0].replace('<tenant>:', '') : 'none';
}

/** Runs whose replay has lost some or all of `expected` events (the tenant stream trimmed them). */
export async function replayCoverage(scope: RunScope, runIds: string[], expected: number): Promise<{ runs: number; partial: number; gone: number }> {
  let partial = 0;
  let gone = 0;
  await pool(runIds, 200, async (runId) => {
    const n = (await scope.store.events.readRun(scope.tenant, runId, 0, expected)).length;
    gone += n === 0 ? 1 : 0;
    partial += n > 0 && n < expected ? 1 : 0;
  });
  return { runs: runIds.length, partial, gone };
}

/** What a component's keys look like, from one of them. */
export interface ComponentSample {
  type: string;
  encoding: string;
  fields?: string[];
  /** A zset's members: bytes of one, and whether it is a key name (has a ':') or a bare id. */
  memberBytes?: number;
  memberIsKey?: boolean;
  /** Bytes of a string, entries of a list or stream. */
  size?: number;
}

export async function sampleKey(redis: Redis, key: string): Promise<ComponentSample> {
  const type = await redis.type(key);
  const encoding = String(await redis.object('ENCODING', key));
  switch (type) {
    case 'hash':
      return { type, encoding, fields: (await redis.hkeys(key)).sort() };
    case 'zset': {
      const [member] = await redis.zrange(key, '0', '0');
      return { type, encoding, memberBytes: Buffer.byteLength(member ?? ''), memberIsKey: (member ?? '').includes(':') };
    }
    case 'string':
      return { type, encoding, size: await redis.strlen(key) };
    case 'list':
      return { type, encoding, size: await redis.llen(key) };
    case 'stream':
      return { type, encoding, size: await redis.xlen(key) };
    default:
      return { type, encoding };
  }
}

/** MEMORY USAGE of a one-member zset whose member has `bytes` bytes (listpack keeps members of at most 64). */
export async function oneMemberZset(redis: Redis, key: string, bytes: number): Promise<number> {
  try {
    await redis.zadd(key, 1, 'x'.repeat(bytes));
    return Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  } finally {
    await redis.del(key);
  }
}
