import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ParleyEvent } from '@parley/contracts';
import type { AppendFsync } from '../../scripts/redis-process';
import { Harness } from '../harness/harness';
import type { EventClient } from '../harness/event.client';
import { startRedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';
import { CHAOS_AGENT, chaosAgent } from './chaos.agent';
import { ChaosAnswerer } from './chaos.answerer';
import { checkPass, type CheckResult, type RedisLoss } from './chaos.checker';
import { FaultInjector, type FaultLog } from './chaos.faults';

export interface PassOptions {
  name: string;
  appendfsync: AppendFsync;
  runs: number;
  /** Runs started but not ended at any time. */
  window: number;
  /** Starts are paced so that the pass lasts at least this long: enough time for many faults. */
  minSeconds: number;
  lateFraction: number;
  /** everysec: simulate an OS crash that loses this much of the AOF (0: kill -9 only). */
  loseLastMs: number;
  /** How long the runs get to end once the faults stopped and every answer is in. */
  settleMs: number;
  random: () => number;
}

export interface PassReport {
  options: PassOptions;
  check: CheckResult;
  faults: FaultLog;
  loss?: RedisLoss;
  seconds: number;
  settleSeconds: number;
  /** Each run a killed loop-worker was advancing: when it was killed, and ms until another worker held the run. */
  takeovers: Takeover[];
  /** Runs that ended more than 10 s after the faults stopped: what their events say. */
  slow: string[];
  startFailures: number;
  unexpectedExits: string[];
  logDir: string;
}

const ENDED = new Set(['run.finished', 'run.failed', 'run.cancelled']);

/**
 * One pass: its own redis-server with AOF, 2 gateways, 3 loop-workers and 2 interaction-services;
 * `runs` runs of the chaos agent started across the gateways and answered by socket.io clients,
 * while a random service is killed with SIGKILL every few seconds and Redis once, half-way.
 */
export async function runPass(options: PassOptions): Promise<PassReport> {
  const started = Date.now();
  const redis = await startRedisServer({ appendonly: true, appendfsync: options.appendfsync });
  let h: Harness | undefined;
  try {
    h = await Harness.start({
      name: `chaos-${options.name}`,
      gateways: 2,
      workers: 3,
      interactionServices: 2,
      agents: [chaosAgent()],
      redisUrl: redis.url,
      logLevel: 'warn',
      env: { PARLEY_LIMIT_RUNS_PER_MINUTE: '0', PARLEY_LIMIT_RUNS_PER_MINUTE_PER_USER: '0', PARLEY_LIMIT_OPEN_INTERACTIONS: '0', PARLEY_LIMIT_CONCURRENT_RUNS_PER_USER: '0' },
    });
    const harness = h;
    const ids: string[] = [];
    const runKeyPrefix = `chaos-${randomUUID()}`;
    const clients = [await h.client(1, { since: 0, name: 'watcher@gateway-1' }), await h.client(2, { since: 0, name: 'watcher@gateway-2' })];
    const answerer = new ChaosAnswerer({
      clients,
      random: options.random,
      lateFraction: options.lateFraction,
      httpAnswer: (id, body) => harness.http(runningGateway(harness, options.random), 'POST', `/v1/interactions/${id}/answer`, body, harness.token({ role: 'admin', sub: 'watcher' })),
    });
    answerer.start();
    const takeovers: Takeover[] = [];
    const timing: Array<Promise<void>> = [];
    const faults = new FaultInjector(
      h,
      options.random,
      started,
      (worker, at) => timing.push(timeTakeovers(harness, ids, worker, at, takeovers)),
      async (worker) => (await runsHeldBy(harness, ids.slice(-80), worker)).length > 0,
    );
    faults.start();

    const endedCount = endedCounter(clients);
    let startFailures = 0;
    let loss: RedisLoss | undefined;
    while (ids.length < options.runs) {
      const due = started + (ids.length * options.minSeconds * 1000) / options.runs;
      if (due > Date.now()) {
        // Pacing, not waiting for a condition: the runs are spread over the pass.
        await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      await waitFor(() => ids.length - endedCount() < options.window, { timeoutMs: 120_000, intervalMs: 20, message: 'a free slot in the window of runs' });
      try {
        // The key makes a retry of a start whose response was lost find its run instead of making a second one.
        const n = ids.length + 1;
        ids.push(await h.startRun(runningGateway(h, options.random), CHAOS_AGENT, `chaos run ${n}`, h.token(), `${runKeyPrefix}-${n}`));
      } catch {
        // A gateway died under the request, or Redis is down: another gateway, a moment later.
        startFailures += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (!loss && ids.length >= options.runs / 2) {
        loss = await crashRedis(h, faults, redis, clients, options.loseLastMs);
      }
    }
    await faults.stop();
    await Promise.all(timing);
    const settleFrom = Date.now();
    // Every answer is in (late ones included) and no fault is injected any more: now every run must end.
    await waitFor(async () => (await answerer.drain(), (await unended(harness)) === 0), { timeoutMs: options.settleMs, intervalMs: 1000, message: 'every run to end' }).catch(() => undefined);
    // Which runs took longest to end after the faults stopped, and how they had been stuck (for the report).
    const settleSeconds = (Date.now() - settleFrom) / 1000;
    const slow = await slowRuns(harness, settleFrom);
    await answerer.stop();
    const check = await checkPass({ h, clients, sent: answerer.sent, started: ids, loss, lossAllowed: options.appendfsync !== 'always' });
    const unexpectedExits = h.unexpectedExits().map((e) => `${e.name} pid ${e.pid} ${e.signal ?? `code ${e.code}`}`);
    if (unexpectedExits.length > 0) {
      check.violations.push(`services exited unexpectedly: ${unexpectedExits.join(', ')}`);
    }
    if (check.violations.length > 0 || unexpectedExits.length > 0) {
      process.env.PARLEY_HARNESS_KEEP_LOGS = '1';
    }
    return { options, check, faults: faults.log, ...(loss ? { loss } : {}), seconds: (Date.now() - started) / 1000, settleSeconds, slow, takeovers, startFailures, unexpectedExits, logDir: h.dir };
  } finally {
    await h?.close();
    await redis.destroy();
  }
}

async function crashRedis(h: Harness, faults: FaultInjector, redis: Awaited<ReturnType<typeof startRedisServer>>, clients: EventClient[], loseLastMs: number): Promise<RedisLoss> {
  const [seqBefore, seqAfter] = await faults.crashRedis(
    redis,
    1500,
    // While Redis is down nothing new is issued: what the clients have seen by then is what existed.
    () => Math.max(...clients.map((c) => c.lastSeq)),
    // A connection of its own, first in line after the restart, before the services reconnect and write.
    async () => {
      const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      try {
        return Number((await probe.get(h.keys.seq(h.tenant))) ?? 0);
      } finally {
        probe.disconnect();
      }
    },
    loseLastMs,
  );
  return { seqBefore, seqAfter };
}

function runningGateway(h: Harness, random: () => number): number {
  const up = h.gateways.map((g, i) => (g.running ? i + 1 : 0)).filter((n) => n > 0);
  return up.length > 0 ? up[Math.floor(random() * up.length)] : 1;
}

/** Runs the clients saw end, read incrementally from their recorded events. */
function endedCounter(clients: EventClient[]): () => number {
  const ended = new Set<string>();
  const read = new Map<EventClient, number>();
  return () => {
    for (const client of clients) {
      for (let i = read.get(client) ?? 0; i < client.events.length; i++) {
        if (ENDED.has(client.events[i].type)) {
          ended.add(client.events[i].runId);
        }
      }
      read.set(client, client.events.length);
    }
    return ended.size;
  };
}

async function unended(h: Harness): Promise<number> {
  const ids = await h.redis.zrange(h.keys.runIndex(h.tenant), '0', '-1');
  const pipeline = h.redis.pipeline();
  ids.forEach((id) => pipeline.hget(h.keys.run(h.tenant, id), 'status'));
  const statuses = ((await pipeline.exec()) ?? []).map(([, status]) => status as string | null);
  return statuses.filter((s) => s !== 'finished' && s !== 'failed' && s !== 'cancelled').length;
}

/** Runs that ended over 10 s after `since`, with their last events before that: how they had been held up. */
async function slowRuns(h: Harness, since: number): Promise<string[]> {
  const events = await h.tenantEvents();
  const ended = events.filter((e) => ENDED.has(e.type) && Date.parse(e.at) > since + 10_000);
  return ended.slice(0, 10).map((end) => {
    const mine = events.filter((e) => e.runId === end.runId && e.seq < end.seq).slice(-4);
    const what = (e: ParleyEvent) => `${e.type}${e.type === 'run.status' || ENDED.has(e.type) ? JSON.stringify(e.data) : ''}@${e.at.slice(11, 23)}`;
    return `${end.runId} ended ${((Date.parse(end.at) - since) / 1000).toFixed(1)} s after the faults (${what(end)}); before: ${mine.map(what).join(', ')}`;
  });
}

/** The runs of `runIds` that the loop-worker named `worker` is advancing. */
async function runsHeldBy(h: Harness, runIds: string[], worker: string): Promise<string[]> {
  const pipeline = h.redis.pipeline();
  runIds.forEach((id) => pipeline.hmget(h.keys.run(h.tenant, id), 'status', 'worker'));
  const rows = ((await pipeline.exec()) ?? []).map(([, row]) => (row ?? []) as Array<string | null>);
  return runIds.filter((_, i) => rows[i][0] === 'running' && rows[i][1] === worker);
}

/** Times how long each run the killed worker was advancing takes to be held by another worker. */
export interface Takeover {
  killedAt: number;
  ms: number;
}

async function timeTakeovers(h: Harness, ids: string[], worker: string, killedAt: number, into: Takeover[]): Promise<void> {
  let waiting = await runsHeldBy(h, ids.slice(-80), worker).catch((): string[] => []);
  while (waiting.length > 0 && Date.now() - killedAt < 30_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const still = await runsHeldBy(h, waiting, worker).catch(() => waiting);
    waiting.filter((id) => !still.includes(id)).forEach(() => into.push({ killedAt, ms: Date.now() - killedAt }));
    waiting = still;
  }
}
