/**
 * Items 1, 2 and 7: answer → resume latency, park/resume cycles per second with 1 and 2
 * loop-worker processes, and CPU and Redis commands per cycle, each next to its baseline.
 */
import type { Redis } from 'ioredis';
import type { Harness } from '../../test/harness/harness';
import { BullRoundTrip, MiniParkResume } from '../support/baseline';
import { QUICK, connectClient, say, startHarness } from '../support/env';
import { AutoAnswerer, questionerAgent } from '../support/parley';
import { CostWindow, gcPausesBetween, gcPausesOf, perCycleCosts, schedTimesOf, type GcPauses, type PerCycleCosts, type SchedTimes } from '../support/procs';
import { pool, summarize, type Latency } from '../support/stats';

/** 1,000 sequential samples: a p99 of a few hundred is the third-slowest of them, and as noisy. */
export const SEQ_RUNS = QUICK ? 2 : 20;
export const SEQ_QUESTIONS = QUICK ? 10 : 50;
export const CONC_RUNS = QUICK ? 40 : 200;
/** Enough questions per run that the cycles, not starting and finishing runs, are what is timed. */
export const CONC_QUESTIONS = 20;
/** Short runs: a start and a finish every few cycles (the shape of the figures before 2026-11-30). */
export const SHORT_QUESTIONS = 5;
export const CONCURRENCY = 50;
/**
 * §1's samples are taken in rounds, Parley's and each baseline's in turn, so that the host's load,
 * which drifts over seconds, weighs on all three alike.
 */
export const SEQ_ROUNDS = QUICK ? 1 : 5;

export interface ThroughputFigures {
  cycles: number;
  ms: number;
  perSec: number;
  resume: Latency;
  absorbed: number;
  costs: PerCycleCosts;
  /** Parley only, per cycle: events written (the tenant's seq), `runs` jobs enqueued, deadline timer jobs scheduled. */
  flow?: { events: number; runJobs: number; timerJobs: number };
}

export interface CycleResults {
  latency: {
    runs: number;
    questionsPerRun: number;
    parleyResume: Latency;
    parleyCycle: Latency;
    absorbed: number;
    bull: Latency;
    miniResume: Latency;
    /** The GC pauses of the processes on the answer's path (gateway, worker) over §1's rounds, and the wall time of its Parley rounds. */
    gc: { pauses: Array<[string, GcPauses]>; parleyMs: number };
    /** CPU used and run-queue waits of every process of the bench over §1's Parley rounds. */
    sched: Array<[string, SchedTimes]>;
  };
  throughput: {
    runs: number;
    questionsPerRun: number;
    concurrency: number;
    oneWorker: ThroughputFigures;
    twoWorkers: ThroughputFigures;
    /** The floor: the minimal park/resume, all in the bench process. */
    mini: ThroughputFigures;
    /** The same with its worker in a process of its own (the answerer stays in the bench process). */
    miniSplit: ThroughputFigures;
    /** Parley's layout and hops: the worker and a socket.io server in processes of their own, the answering socket.io client in the bench's. */
    miniSocket: ThroughputFigures;
    shortRuns: ThroughputFigures & { questionsPerRun: number };
  };
  bullCosts: PerCycleCosts;
}

function pidsOf(h: Harness, redisPid: number | undefined): Record<string, number | undefined> {
  const pids: Record<string, number | undefined> = { redis: redisPid };
  h.gateways.forEach((g) => (pids[g.name] = g.pid));
  h.workers.forEach((w) => (pids[w.name] = w.pid));
  h.interactionServices.forEach((s) => (pids[s.name] = s.pid));
  return pids;
}

interface SequentialFigures {
  parley: { resume: Latency; cycle: Latency; absorbed: number; gc: { pauses: Array<[string, GcPauses]>; parleyMs: number }; sched: Array<[string, SchedTimes]> };
  bull: Latency;
  mini: Latency;
}

/**
 * 1. One run at a time, one question open at a time: answer → `run.status running`; next to a bare
 * BullMQ round trip and the minimal park/resume, one at a time, in interleaved rounds.
 */
async function sequential(h: Harness, redisUrl: string, redisPid: number | undefined): Promise<SequentialFigures> {
  const client = await connectClient(h.gateway(1).url, h.token(), AutoAnswerer.TYPES);
  const answerer = new AutoAnswerer(client);
  const bull = new BullRoundTrip(redisUrl);
  const mini = new MiniParkResume(redisUrl, CONCURRENCY);
  try {
    await Promise.all([bull.ready(), mini.ready()]);
    const warm = await h.startRun(1, 'qfew');
    await answerer.waitFinished([warm]);
    await bull.run(50);
    await mini.runAll(1, 20);
    answerer.reset();
    mini.reset();
    const ids: string[] = [];
    const bullSamples: number[] = [];
    const onPath = [h.gateway(1), h.workers[0]];
    const gcBefore = await Promise.all(onPath.map((service) => gcPausesOf(service.opsUrl)));
    let parleyMs = 0;
    const pids = Object.entries({ ...pidsOf(h, redisPid), bench: process.pid });
    const sched = new Map(pids.map(([name]) => [name, { cpuMs: 0, waitMs: 0 }]));
    for (let round = 0; round < SEQ_ROUNDS; round++) {
      const t0 = performance.now();
      const before = pids.map(([, pid]) => schedTimesOf(pid));
      for (let i = 0; i < SEQ_RUNS / SEQ_ROUNDS; i++) {
        const id = await h.startRun(1, 'qmany');
        ids.push(id);
        await answerer.waitFinished([id]);
      }
      pids.forEach(([name, pid], i) => {
        const [now, total] = [schedTimesOf(pid), sched.get(name)!];
        total.cpuMs += now.cpuMs - before[i].cpuMs;
        total.waitMs += now.waitMs - before[i].waitMs;
      });
      parleyMs += performance.now() - t0;
      bullSamples.push(...(await bull.run((SEQ_RUNS / SEQ_ROUNDS) * SEQ_QUESTIONS)));
      for (let i = 0; i < SEQ_RUNS / SEQ_ROUNDS; i++) {
        await mini.runAll(1, SEQ_QUESTIONS);
      }
    }
    const gcAfter = await Promise.all(onPath.map((service) => gcPausesOf(service.opsUrl)));
    const pauses = onPath.map((service, i) => [service.name, gcPausesBetween(gcBefore[i], gcAfter[i])] as [string, GcPauses]);
    const cycles = SEQ_RUNS * SEQ_QUESTIONS;
    expect(answerer.ackErrors).toEqual([]);
    expect(answerer.answered).toBe(cycles);
    expect(answerer.resumeMs.length + answerer.absorbed).toBe(cycles);
    expect(ids.every((id) => answerer.finished.get(id) === 'finished')).toBe(true);
    expect(bullSamples).toHaveLength(cycles);
    expect(mini.answered).toBe(cycles);
    return {
      parley: { resume: summarize(answerer.resumeMs), cycle: summarize(answerer.cycleMs), absorbed: answerer.absorbed, gc: { pauses, parleyMs }, sched: [...sched] },
      bull: summarize(bullSamples),
      mini: summarize(mini.resumeMs),
    };
  } finally {
    client.close();
    await Promise.all([bull.close(), mini.close()]);
  }
}

/** 2. CONC_RUNS runs of `agent` at once, each asking `questions` questions; one client answers all. */
async function concurrent(h: Harness, admin: Redis, redisPid: number | undefined, agent = 'qconc', questions = CONC_QUESTIONS): Promise<ThroughputFigures> {
  const client = await connectClient(h.gateway(1).url, h.token(), AutoAnswerer.TYPES);
  const answerer = new AutoAnswerer(client);
  try {
    const warm: string[] = [];
    await pool(Array.from({ length: 20 }), 20, async () => void warm.push(await h.startRun(1, agent)));
    await answerer.waitFinished(warm);
    answerer.reset();

    const delayedKey = `${h.keys.bullPrefix()}:deadlines:delayed`;
    // Seqs are not consecutive: the stream counts what was added to it.
    const eventsAdded = async (): Promise<number> => {
      const info = (await admin.xinfo('STREAM', h.keys.tenantEvents(h.tenant))) as unknown[];
      return Number(info[info.indexOf('entries-added') + 1]);
    };
    const events0 = await eventsAdded();
    const timers0 = await admin.zcard(delayedKey);
    const window = await CostWindow.open(admin, pidsOf(h, redisPid));
    const t0 = performance.now();
    const ids: string[] = [];
    await pool(Array.from({ length: CONC_RUNS }), 20, async () => void ids.push(await h.startRun(1, agent)));
    await answerer.waitFinished(ids);
    const ms = performance.now() - t0;
    const costs = await window.close();
    // The timer jobs are due in an hour: none fires in the window, so the delayed set counts them.
    const events = (await eventsAdded()) - events0;
    const timerJobs = (await admin.zcard(delayedKey)) - timers0;

    const cycles = CONC_RUNS * questions;
    expect(answerer.ackErrors).toEqual([]);
    expect(answerer.answered).toBe(cycles);
    expect(ids.every((id) => answerer.finished.get(id) === 'finished')).toBe(true);
    // A start enqueues one job, and so does every answer: park opens the question and parks the run in one step.
    const runJobs = CONC_RUNS + answerer.answered;
    return {
      cycles,
      ms,
      perSec: (cycles * 1000) / ms,
      resume: summarize(answerer.resumeMs),
      absorbed: answerer.absorbed,
      costs: perCycleCosts(costs, cycles),
      flow: { events: events / cycles, runJobs: runJobs / cycles, timerJobs: timerJobs / cycles },
    };
  } finally {
    client.close();
  }
}

/** 2's floor: CONC_RUNS minimal park/resume runs at once, after a warm-up, alone on the machine. */
async function floor(redisUrl: string, admin: Redis, redisPid: number | undefined, layout: { workerProcess?: boolean; overSocket?: boolean }): Promise<ThroughputFigures> {
  const mini = new MiniParkResume(redisUrl, CONCURRENCY, layout);
  try {
    await mini.ready();
    await mini.runAll(20, CONC_QUESTIONS);
    mini.reset();
    const cycles = CONC_RUNS * CONC_QUESTIONS;
    const window = await CostWindow.open(admin, { redis: redisPid, ...mini.pids });
    const t0 = performance.now();
    await mini.runAll(CONC_RUNS, CONC_QUESTIONS);
    const ms = performance.now() - t0;
    const costs = await window.close();
    expect(mini.answered).toBe(cycles);
    return { cycles, ms, perSec: (cycles * 1000) / ms, resume: summarize(mini.resumeMs), absorbed: 0, costs: perCycleCosts(costs, cycles) };
  } finally {
    await mini.close();
  }
}

const AGENTS = [
  questionerAgent('qmany', SEQ_QUESTIONS),
  questionerAgent('qfew', 5),
  questionerAgent('qconc', CONC_QUESTIONS),
  questionerAgent('qshort', SHORT_QUESTIONS),
];

export async function runCycles(redisUrl: string, redisPid: number | undefined, admin: Redis): Promise<CycleResults> {
  // One gateway, one interaction-service, and 1 (then 2) loop-worker processes; the answering client is this process.
  let h = await startHarness(redisUrl, { name: 'bench-1w', workers: 1, agents: AGENTS });
  let seq: SequentialFigures;
  let oneWorker: ThroughputFigures;
  let shortRuns: ThroughputFigures;
  try {
    seq = await h.diagnose(() => sequential(h, redisUrl, redisPid));
    say(`1. parley answer → resume p50 ${seq.parley.resume.p50.toFixed(2)} ms p99 ${seq.parley.resume.p99.toFixed(2)} ms (${seq.parley.resume.count} samples)`);
    say(`1. bare bullmq round trip p50 ${seq.bull.p50.toFixed(2)} ms p99 ${seq.bull.p99.toFixed(2)} ms`);
    oneWorker = await h.diagnose(() => concurrent(h, admin, redisPid));
    say(`2. parley, 1 worker process: ${oneWorker.perSec.toFixed(0)} cycles/s`);
    shortRuns = await h.diagnose(() => concurrent(h, admin, redisPid, 'qshort', SHORT_QUESTIONS));
    say(`2. parley, 1 worker process, ${SHORT_QUESTIONS} questions per run: ${shortRuns.perSec.toFixed(0)} cycles/s`);
  } finally {
    await h.close();
  }
  h = await startHarness(redisUrl, { name: 'bench-2w', workers: 2, agents: AGENTS });
  let twoWorkers: ThroughputFigures;
  try {
    // Warmed as the 1-worker layout was by §1 and the rounds before it (V8 optimises the hot paths
    // only after thousands of calls): one untimed round first.
    const warmUp = await h.diagnose(() => concurrent(h, admin, redisPid));
    say(`2. parley, 2 worker processes, warm-up round: ${warmUp.perSec.toFixed(0)} cycles/s`);
    twoWorkers = await h.diagnose(() => concurrent(h, admin, redisPid));
    say(`2. parley, 2 worker processes: ${twoWorkers.perSec.toFixed(0)} cycles/s`);
  } finally {
    await h.close();
  }

  // The bare round trip's costs (§7), alone on the machine: its latency was sampled in §1's rounds.
  const cycles = SEQ_RUNS * SEQ_QUESTIONS;
  const bull = new BullRoundTrip(redisUrl);
  let bullCosts: PerCycleCosts;
  try {
    await bull.ready();
    await bull.run(50);
    const window = await CostWindow.open(admin, { redis: redisPid });
    expect(await bull.run(cycles)).toHaveLength(cycles);
    bullCosts = perCycleCosts(await window.close(), cycles);
  } finally {
    await bull.close();
  }

  const miniConc = await floor(redisUrl, admin, redisPid, {});
  say(`2. minimal park/resume ${miniConc.perSec.toFixed(0)} cycles/s`);
  const miniSplit = await floor(redisUrl, admin, redisPid, { workerProcess: true });
  say(`2. minimal park/resume, its worker in a process of its own: ${miniSplit.perSec.toFixed(0)} cycles/s`);
  const miniSocket = await floor(redisUrl, admin, redisPid, { overSocket: true });
  say(`2. minimal park/resume in Parley's layout, answered over socket.io: ${miniSocket.perSec.toFixed(0)} cycles/s`);

  return {
    latency: {
      runs: SEQ_RUNS,
      questionsPerRun: SEQ_QUESTIONS,
      parleyResume: seq.parley.resume,
      parleyCycle: seq.parley.cycle,
      absorbed: seq.parley.absorbed,
      bull: seq.bull,
      miniResume: seq.mini,
      gc: seq.parley.gc,
      sched: seq.parley.sched,
    },
    throughput: {
      runs: CONC_RUNS,
      questionsPerRun: CONC_QUESTIONS,
      concurrency: CONCURRENCY,
      oneWorker,
      twoWorkers,
      mini: miniConc,
      miniSplit,
      miniSocket,
      shortRuns: { ...shortRuns, questionsPerRun: SHORT_QUESTIONS },
    },
    bullCosts,
  };
}
