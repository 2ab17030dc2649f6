import { cpSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Harness } from '../harness/harness';
import type { ServiceProcess } from '../harness/service.process';
import type { RedisServer } from '../support/redis-server';

/** How long a loop-worker chosen to die is watched for a moment when it holds a run. */
const CATCH_MS = 3000;

export interface FaultLog {
  kills: Record<string, number>;
  restarts: number;
  redisRestarts: number;
  /** When Redis was down (epoch ms, from its kill to its restart): a takeover then waits for it too. */
  redisDown: Array<{ from: number; to: number }>;
  /** Restarts that failed (the process did not come back ready): retried, and reported. */
  restartFailures: string[];
  lines: string[];
}

/**
 * kill -9 of a random gateway, loop-worker or interaction-service every few seconds, each restarted
 * after a short random pause; one at a time, so each kind always has a survivor to take over. A
 * loop-worker is killed while it advances a run when it can be caught at it (`holdsRun`), so that
 * most of its kills leave a run for another worker to take over, as a crash mid-step does.
 */
export class FaultInjector {
  readonly log: FaultLog = { kills: { gateway: 0, 'loop-worker': 0, 'interaction-service': 0 }, restarts: 0, redisRestarts: 0, redisDown: [], restartFailures: [], lines: [] };
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly h: Harness,
    private readonly random: () => number,
    private readonly started: number,
    /** Called right after a loop-worker was killed, e.g. to time the takeover of its runs. */
    private readonly onWorkerKilled: (worker: string, at: number) => void = () => undefined,
    /** Whether the loop-worker of that name holds a run right now. */
    private readonly holdsRun: (worker: string) => Promise<boolean> = () => Promise.resolve(true),
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Stops injecting and makes sure every service runs again. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    for (const service of this.h.services()) {
      if (!service.running) {
        await this.restart(service);
      }
    }
  }

  /** kill -9 of Redis and a restart on the same port and dir, from its AOF, while the services run on. */
  async crashRedis<T>(redis: RedisServer, downMs: number, whileDown: () => T, restarted: () => Promise<T>, loseLastMs = 0): Promise<[T, T]> {
    // kill -9 alone loses nothing with everysec: Redis write()s the AOF before it replies, and the
    // kernel keeps what was written. What everysec risks is an OS crash or power cut before the
    // next fsync; that is simulated by putting back a copy of the AOF taken `loseLastMs` earlier.
    const copy = join(redis.dir, 'aof-copy');
    if (loseLastMs > 0) {
      cpSync(join(redis.dir, 'appendonlydir'), copy, { recursive: true });
      await new Promise((resolve) => setTimeout(resolve, loseLastMs));
    }
    this.note(`kill -9 redis-server (pid ${redis.pid})${loseLastMs > 0 ? `, its AOF put back to ${loseLastMs} ms earlier (power cut before the fsync)` : ''}`);
    const downFrom = Date.now();
    await redis.kill9();
    if (loseLastMs > 0) {
      rmSync(join(redis.dir, 'appendonlydir'), { recursive: true, force: true });
      renameSync(copy, join(redis.dir, 'appendonlydir'));
    }
    await new Promise((resolve) => setTimeout(resolve, downMs));
    const before = whileDown();
    await redis.restart();
    this.log.redisDown.push({ from: downFrom, to: Date.now() });
    const after = await restarted();
    this.log.redisRestarts += 1;
    this.note(`redis-server restarted from its AOF (pid ${redis.pid})`);
    return [before, after];
  }

  private async run(): Promise<void> {
    while (this.running) {
      await this.pause(1000 + this.random() * 2500);
      if (!this.running) {
        return;
      }
      const victims = this.h.services().filter((s) => s.running);
      const victim = victims[Math.floor(this.random() * victims.length)];
      if (!victim) {
        continue;
      }
      if (victim.kind === 'loop-worker') {
        await this.catchAtWork(victim.name);
      }
      await victim.kill9();
      this.log.kills[victim.kind] += 1;
      if (victim.kind === 'loop-worker') {
        this.onWorkerKilled(victim.name, Date.now());
      }
      this.note(`kill -9 ${victim.name}`);
      await this.pause(300 + this.random() * 2200, false);
      await this.restart(victim);
    }
  }

  /** Waits (at most CATCH_MS) until the worker holds a run; polling, since nothing announces it. */
  private async catchAtWork(worker: string): Promise<void> {
    const until = Date.now() + CATCH_MS;
    while (this.running && Date.now() < until && !(await this.holdsRun(worker).catch(() => false))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private async restart(service: ServiceProcess): Promise<void> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await service.start();
        this.log.restarts += 1;
        this.note(`restarted ${service.name}`);
        return;
      } catch (error) {
        this.log.restartFailures.push(`${service.name}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }

  private note(line: string): void {
    this.log.lines.push(`${((Date.now() - this.started) / 1000).toFixed(1)}s ${line}`);
  }

  private pause(ms: number, interruptible = true): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      if (interruptible) {
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }
    });
  }
}
