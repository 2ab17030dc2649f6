import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import type { Redis } from 'ioredis';

let clockTicks = 0;

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; NaN when it is gone. */
export function cpuMsOf(pid: number | undefined): number {
  if (!pid) {
    return Number.NaN;
  }
  if (!clockTicks) {
    clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  }
  try {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/** This process's CPU time (user + system, ms). */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** `INFO commandstats`: calls and µs spent per command, counting commands run inside Lua scripts too. */
export async function commandStats(redis: Redis): Promise<{ calls: Map<string, number>; usec: Map<string, number> }> {
  const info = await redis.info('commandstats');
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls.set(match[1], Number(match[2]));
    usec.set(match[1], Number(match[3]));
  }
  return { calls, usec };
}

/** `after - before` for every name that grew. */
function deltas(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  after.forEach((n, name) => {
    const d = n - (before.get(name) ?? 0);
    if (d > 0) {
      out.set(name, d);
    }
  });
  return out;
}

/** CPU of a set of processes and commands executed by Redis, between `open()` and `close()`. */
export class CostWindow {
  private constructor(
    private readonly redis: Redis,
    private readonly pids: Map<string, number | undefined>,
    private readonly cpu0: Map<string, number>,
    private readonly stats0: Awaited<ReturnType<typeof commandStats>>,
    private readonly t0: number,
  ) {}

  /** `pids` by role (e.g. "loop-worker"); "bench" (this process) is added. */
  static async open(redis: Redis, pids: Record<string, number | undefined>): Promise<CostWindow> {
    const map = new Map(Object.entries(pids));
    const cpu0 = new Map([...map].map(([role, pid]) => [role, cpuMsOf(pid)] as [string, number]));
    cpu0.set('bench', ownCpuMs());
    return new CostWindow(redis, map, cpu0, await commandStats(redis), performance.now());
  }

  async close(): Promise<CostFigures> {
    const stats1 = await commandStats(this.redis);
    const cpu = new Map<string, number>();
    this.pids.forEach((pid, role) => cpu.set(role, cpuMsOf(pid) - (this.cpu0.get(role) ?? 0)));
    cpu.set('bench', ownCpuMs() - (this.cpu0.get('bench') ?? 0));
    const commands = deltas(this.stats0.calls, stats1.calls);
    // The INFO call that closes the window is counted once; drop it.
    commands.set('info', (commands.get('info') ?? 1) - 1);
    return { ms: performance.now() - this.t0, cpu, commands, usec: deltas(this.stats0.usec, stats1.usec) };
  }
}

export interface CostFigures {
  ms: number;
  /** CPU ms by role over the window. */
  cpu: Map<string, number>;
  /** Commands executed by the server, by name, over the window. */
  commands: Map<string, number>;
  /** µs the server spent in each command (a script's own figure includes the commands it ran). */
  usec: Map<string, number>;
}

export function sumOf(map: Map<string, number>, keep: (name: string) => boolean = () => true): number {
  let sum = 0;
  map.forEach((n, name) => (sum += keep(name) ? n : 0));
  return sum;
}

/** Per-cycle figures of a window: CPU ms by role, commands executed, script calls. */
export function perCycleCosts(costs: CostFigures, cycles: number): PerCycleCosts {
  const cpu: Array<[string, number]> = [...costs.cpu].map(([role, ms]) => [role, ms / cycles]);
  const breakdown: Array<[string, number]> = [...costs.commands]
    .map(([name, n]) => [name, n / cycles] as [string, number])
    .filter(([, v]) => v >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  return {
    cycles,
    cpu,
    cpuTotal: sumOf(costs.cpu, (role) => Number.isFinite(costs.cpu.get(role) ?? Number.NaN)) / cycles,
    commands: sumOf(costs.commands) / cycles,
    scriptCalls: sumOf(costs.commands, (name) => name === 'evalsha' || name === 'eval') / cycles,
    breakdown,
    redisUsec: [...costs.usec]
      .map(([name, us]) => [name, us / cycles] as [string, number])
      .filter(([, v]) => v >= 0.5)
      .sort((a, b) => b[1] - a[1]),
  };
}

export interface PerCycleCosts {
  cycles: number;
  cpu: Array<[string, number]>;
  cpuTotal: number;
  commands: number;
  scriptCalls: number;
  breakdown: Array<[string, number]>;
  /** µs of Redis time per cycle by command, largest first (`evalsha` includes the commands its scripts ran). */
  redisUsec: Array<[string, number]>;
}

/** CPU time a process has used so far, and time it spent runnable but waiting for a CPU (ms, all its threads). */
export interface SchedTimes {
  cpuMs: number;
  waitMs: number;
}

/** From /proc/<pid>/task/<tid>/schedstat (ns on a CPU, ns waiting on a run queue); zeros when the process is gone. */
export function schedTimesOf(pid: number | undefined): SchedTimes {
  const times = { cpuMs: 0, waitMs: 0 };
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  for (const tid of threads) {
    try {
      const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      times.cpuMs += onCpu / 1e6;
      times.waitMs += waiting / 1e6;
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return times;
}

/** Garbage collection pauses of one process so far, by kind (prom-client's `nodejs_gc_duration_seconds`). */
export type GcPauses = Record<'minor' | 'major' | 'incremental', { count: number; ms: number }>;

/** The GC pauses a Parley service reports on its operations server's /metrics. */
export async function gcPausesOf(opsUrl: string): Promise<GcPauses> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const of = (kind: string, what: 'count' | 'sum') => Number(new RegExp(`^parley_process_nodejs_gc_duration_seconds_${what}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const pauses = (kind: string) => ({ count: of(kind, 'count'), ms: of(kind, 'sum') * 1000 });
  return { minor: pauses('minor'), major: pauses('major'), incremental: pauses('incremental') };
}

/** `after` − `before`, kind by kind. */
export function gcPausesBetween(before: GcPauses, after: GcPauses): GcPauses {
  const delta = (kind: keyof GcPauses) => ({ count: after[kind].count - before[kind].count, ms: after[kind].ms - before[kind].ms });
  return { minor: delta('minor'), major: delta('major'), incremental: delta('incremental') };
}
