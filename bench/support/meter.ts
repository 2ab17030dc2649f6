import { createHash } from 'node:crypto';
import { Command, Redis } from 'ioredis';

/**
 * Counts every Redis command this process writes to a socket, by name, for all ioredis clients
 * (Parley's own and BullMQ's). A pipelined command counts once; a command inside a Lua script does
 * not count (Redis runs it). Scripts are named by the command they were defined as
 * (`parley_park`, BullMQ's `moveToFinished`, ...), so EVALSHA traffic is broken down per script.
 *
 * Unlike INFO deltas on a shared server, this sees only this process's traffic.
 */
class CommandMeter {
  private readonly counts = new Map<string, number>();
  private readonly scriptBySha = new Map<string, string>();
  private installed = false;

  install(): void {
    if (this.installed) {
      return;
    }
    this.installed = true;
    const count = (command: Command) => this.count(command);
    const scripts = this.scriptBySha;
    const proto = Command.prototype as unknown as { toWritable: (this: Command, socket: object) => string | Buffer };
    const toWritable = proto.toWritable;
    proto.toWritable = function (this: Command, socket: object) {
      const out = toWritable.call(this, socket);
      count(this);
      return out;
    };
    const redisProto = Redis.prototype as unknown as { defineCommand: (this: Redis, name: string, def: { lua: string }) => void };
    const defineCommand = redisProto.defineCommand;
    redisProto.defineCommand = function (this: Redis, name: string, def: { lua: string }) {
      scripts.set(createHash('sha1').update(def.lua).digest('hex'), name);
      return defineCommand.call(this, name, def);
    };
  }

  private count(command: Command): void {
    let name = command.name.toLowerCase();
    if (name === 'evalsha' || name === 'eval') {
      const first = command.args[0];
      const text = typeof first === 'string' ? first : Buffer.isBuffer(first) ? first.toString() : '';
      const sha = name === 'evalsha' ? text : createHash('sha1').update(text).digest('hex');
      name = `${name}:${this.scriptBySha.get(sha) ?? sha.slice(0, 8)}`;
    }
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}

export const commandMeter = new CommandMeter();

/** Commands by name issued between two snapshots. */
export function diffCounts(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, n] of after) {
    const d = n - (before.get(name) ?? 0);
    if (d > 0) {
      out.set(name, d);
    }
  }
  return out;
}

export function total(counts: Map<string, number>): number {
  let sum = 0;
  counts.forEach((n) => (sum += n));
  return sum;
}

/** Server-wide INFO counters: include commands run inside Lua scripts and every other client's traffic. */
export async function serverCommandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  const match = /total_commands_processed:(\d+)/.exec(info);
  return match ? Number(match[1]) : 0;
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  const match = /used_memory:(\d+)/.exec(info);
  return match ? Number(match[1]) : 0;
}

/**
 * A window over which both this process's commands and the server's total are counted. The server
 * figure is corrected by the background rate sampled just before (other clients on a shared Redis).
 */
export class CommandWindow {
  private constructor(
    private readonly redis: Redis,
    private readonly local0: Map<string, number>,
    private readonly server0: number,
    private readonly t0: number,
    private readonly backgroundPerMs: number,
    /** This process's own commands per second while idle (BullMQ's blocking waits and stalled checks). */
    readonly localIdlePerSec: number,
  ) {}

  static async open(redis: Redis, backgroundSampleMs = 1000): Promise<CommandWindow> {
    const a = await serverCommandsProcessed(redis);
    const ta = Date.now();
    const localA = total(commandMeter.snapshot());
    await new Promise((resolve) => setTimeout(resolve, backgroundSampleMs));
    const b = await serverCommandsProcessed(redis);
    const tb = Date.now();
    const localB = total(commandMeter.snapshot());
    // Our own idle traffic is counted by the local meter; the background is what others sent.
    const backgroundPerMs = Math.max(0, b - a - (localB - localA)) / Math.max(1, tb - ta);
    const localIdlePerSec = ((localB - localA - 1) * 1000) / Math.max(1, tb - ta);
    return new CommandWindow(redis, commandMeter.snapshot(), b, Date.now(), backgroundPerMs, Math.max(0, localIdlePerSec));
  }

  async close(): Promise<{ local: Map<string, number>; localTotal: number; serverTotal: number; serverAdjusted: number; ms: number }> {
    const local = diffCounts(this.local0, commandMeter.snapshot());
    const server = await serverCommandsProcessed(this.redis);
    const ms = Date.now() - this.t0;
    const serverTotal = server - this.server0;
    return {
      local,
      localTotal: total(local),
      serverTotal,
      serverAdjusted: Math.max(0, Math.round(serverTotal - this.backgroundPerMs * ms)),
      ms,
    };
  }
}
