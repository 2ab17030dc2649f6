import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { SEQ_ROUNDS, type CycleResults, type ThroughputFigures } from '../items/cycles';
import type { FanoutResults } from '../items/fanout';
import type { LangGraphResults } from '../items/langgraph';
import { BULK_STEPS, COMPONENT_LABELS, type DeadlineResults, type MemoryResults } from '../items/parked';
import { AutoAnswerer } from './parley';
import type { PerCycleCosts } from './procs';
import { b0, ms, ms0, n0, n1, n2, ratio, yes } from './format';
import { renderHotPaths, type ApprovalResults, type CommandLineResults, type GrantResults } from './report.hotpaths';

export interface Results {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  redisVersion: string;
  seconds: number;
  /** 1-minute load average at the start of each item and at the end. */
  loads: number[];
  cycles?: CycleResults;
  langgraph?: LangGraphResults;
  memory?: MemoryResults;
  deadlines?: DeadlineResults;
  fanout?: FanoutResults;
  approvals?: ApprovalResults;
  grants?: GrantResults;
  commandLine?: CommandLineResults;
}

export function machine(): { node: string; cpus: number; cpuModel: string } {
  const list = cpus();
  return { node: process.version, cpus: list.length, cpuModel: list[0]?.model ?? 'unknown' };
}

function costRows(out: string[], rows: Array<[string, PerCycleCosts]>): void {
  out.push('| per cycle | CPU, all processes | CPU by process | Redis commands executed | of which script calls (EVALSHA) |');
  out.push('|---|---|---|---|---|');
  for (const [label, c] of rows) {
    const byProcess = c.cpu
      .filter(([, v]) => Number.isFinite(v))
      .map(([role, v]) => `${role} ${v.toFixed(2)}`)
      .join(', ');
    out.push(`| ${label} | ${ms(c.cpuTotal)} | ${byProcess} | ${n1(c.commands)} | ${n2(c.scriptCalls)} |`);
  }
}

/** The commands Redis spent most time in; a script's time (`evalsha`) includes the commands it ran, which are listed too. */
function usecList(c: PerCycleCosts): string {
  return c.redisUsec
    .slice(0, 8)
    .map(([name, v]) => `\`${name}\` ${v.toFixed(1)} µs`)
    .join(', ');
}

/** Where park files deadlines, as the structure check of item 4 found it. */
function deadlineIndex(r: Results): string {
  return r.memory && r.memory.deadlineIndex !== 'none' ? `the tenant's \`${r.memory.deadlineIndex}\` index` : 'a tenant index';
}

function throughputRow(label: string, t: ThroughputFigures): string {
  return `| ${label} | ${t.cycles} | ${(t.ms / 1000).toFixed(2)} s | ${n0(t.perSec)} | ${ms(t.resume.p50)} | ${ms(t.resume.p99)} |`;
}

export function renderMarkdown(r: Results, analysis: string[]): string {
  const out: string[] = [];
  const c = r.cycles;
  const lg = r.langgraph;
  const m = r.memory;
  const d = r.deadlines;
  const f = r.fanout;
  out.push('# Benchmarks');
  out.push('');
  out.push('Issue 6\'s seven speed figures, each measured next to its baseline **in the same run** (the machine is');
  out.push('shared and noisy: the ratio is the result, the absolute figures are only this machine\'s).');
  out.push('');
  out.push(`- Date: ${r.date}; the whole run took ${Math.round(r.seconds)} s.`);
  out.push(`- Machine: Node.js ${r.node}, ${r.cpus} CPU(s) (${r.cpuModel}), Redis ${r.redisVersion}, PostgreSQL 15 (LangGraph only), all on one host.`);
  out.push(`- Load: the host is shared with other work; its 1-minute load average at the start of each item and at the end was ${r.loads.map((v) => v.toFixed(1)).join(', ')} (on ${r.cpus} CPUs).`);
  out.push('- Redis: a `redis-server` of the bench\'s own (no persistence) on 127.0.0.1, so other work on the shared Redis stays');
  out.push('  out of the latencies, out of `INFO commandstats` and out of `used_memory`; every baseline runs on that same server.');
  out.push('  `BENCH_REDIS_URL` points the bench at another Redis instead.');
  out.push('- Parley runs as **separate OS processes** (the multi-process harness of `test/harness/`: 1 gateway, 1 or 2');
  out.push('  loop-workers with concurrency 50, 1 or 2 interaction-services, started from the TypeScript sources, logs at `warn`,');
  out.push('  tenant limits off); the answering socket.io client is the bench process, subscribed to the event types it reads');
  out.push(`  (${AutoAnswerer.TYPES.map((t) => '`' + t + '`').join(', ')}): every event is still written, published and read by the gateway,`);
  out.push('  which sends that client only those. Scripted agents: no model latency,');
  out.push('  one tool call per turn (`ask_user_text`), each question with the default 3600 s timeout, so `park` also');
  out.push(`  files its deadline in ${deadlineIndex(r)} and the answer drops it (a timer job is scheduled only`);
  out.push('  when a deadline is the tenant\'s earliest).');
  out.push('- Targets are shown as information; the bench asserts only sanity (every run finished, every question');
  out.push('  answered, every deadline resolved, bulk-created runs shaped like real ones), never timing.');
  out.push('- The resume signal: there is no `run.resumed` event type; the bench times the answer to the run\'s');
  out.push('  `run.status` event with status `running` (the worker has taken the run again), which is what a');
  out.push('  `run.resumed` would mark.');
  out.push('');
  out.push('## How to run');
  out.push('');
  out.push('```sh');
  out.push('npm run bench                 # full run, rewrites this file');
  out.push('BENCH_QUICK=1 npm run bench   # smoke run (small sizes, about 1 min here), prints only');
  out.push('```');
  out.push('');
  out.push('It needs `redis-server` on the PATH (or `BENCH_REDIS_URL`) and, for the PostgresSaver figure, a PostgreSQL');
  out.push('at 127.0.0.1:5432 that user `postgres` can reach without a password (`BENCH_PG_HOST`, `BENCH_PG_USER`); it');
  out.push('creates and drops a database `parley_bench_<random>`. Without PostgreSQL that row says so and the rest runs.');
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push('| # | measure | Parley | baseline | ratio | target | met? |');
  out.push('|---|---|---|---|---|---|---|');
  if (c) {
    const l = c.latency;
    out.push(`| 1 | answer → resume (\`run.status running\` at the client), sequential, p50 | ${ms(l.parleyResume.p50)} | ${ms(l.bull.p50)} bare BullMQ add → completed | ${ratio(l.parleyResume.p50, l.bull.p50)} | | |`);
    out.push(`| 1 | … p99 | ${ms(l.parleyResume.p99)} | ${ms(l.bull.p99)} | ${ratio(l.parleyResume.p99, l.bull.p99)} | ≤ 2× | ${yes(l.parleyResume.p99 <= 2 * l.bull.p99)} |`);
    const t = c.throughput;
    for (const [label, fig] of [
      ['1 worker process', t.oneWorker],
      ['2 worker processes', t.twoWorkers],
    ] as Array<[string, ThroughputFigures]>) {
      const ok = fig.perSec >= 1000 && fig.perSec >= 0.65 * t.mini.perSec;
      out.push(`| 2 | park/resume cycles/s, ${t.runs} concurrent runs, ${label} | ${n0(fig.perSec)} /s | ${n0(t.mini.perSec)} /s raw BullMQ + Lua + stream | ${ratio(fig.perSec, t.mini.perSec)} | ≥ 1,000 /s and ≥ 0.65× | ${yes(ok)} |`);
    }
    const best = Math.max(t.oneWorker.perSec, t.twoWorkers.perSec);
    out.push(`| 2 | … best of the two, against the same floor in Parley's layout, answered over socket.io | ${n0(best)} /s | ${n0(t.miniSocket.perSec)} /s | ${ratio(best, t.miniSocket.perSec)} | (information) | |`);
    if (lg) {
      out.push(`| 3 | the same cycle vs LangGraph JS, MemorySaver (best Parley figure of §2) | ${n0(best)} /s | ${n0(lg.memory.perSec)} /s | ${ratio(best, lg.memory.perSec)} | ≥ 3× | ${yes(best >= 3 * lg.memory.perSec)} |`);
      if ('perSec' in lg.postgres) {
        out.push(`| 3 | … vs LangGraph JS, PostgresSaver | ${n0(best)} /s | ${n0(lg.postgres.perSec)} /s | ${ratio(best, lg.postgres.perSec)} | (none) | |`);
      } else {
        out.push(`| 3 | … vs LangGraph JS, PostgresSaver | | not run: ${lg.postgres.error} | | | |`);
      }
    }
  }
  if (m) {
    out.push(`| 4 | Redis bytes per parked run at ${n0(m.runs)}, excl. the conversation (\`used_memory\` delta) | ${b0(m.usedMemoryExclLog)} | ${b0(m.naive.usedMemory)} naive hash + index + delayed job | ${ratio(m.usedMemoryExclLog, m.naive.usedMemory)} | ≤ 1,536 B | ${yes(m.usedMemoryExclLog <= 1536)} |`);
    out.push(`| 4 | … summed \`MEMORY USAGE\` by component | ${b0(m.totalExclLog)} | ${b0(m.naive.sampled)} | ${ratio(m.totalExclLog, m.naive.sampled)} | | |`);
  }
  if (d) {
    out.push(`| 5 | deadline lateness, ${n0(d.interactions)} open interactions due within ${d.windowMs / 1000} s, p99 | ${ms0(d.lateness.p99)} | (none) | | ≤ 1,000 ms | ${yes(d.lateness.p99 <= 1000)} |`);
  }
  if (f) {
    out.push(`| 6 | fan-out of one event to ${n0(f.clients)} socket.io clients on one gateway, p99 | ${ms(f.parley.delivery.p99)} | ${ms(f.bare.delivery.p99)} bare socket.io server | ${ratio(f.parley.delivery.p99, f.bare.delivery.p99)} | ≤ 250 ms | ${yes(f.parley.delivery.p99 <= 250)} |`);
  }
  if (c) {
    const one = c.throughput.oneWorker.costs;
    const mini = c.throughput.mini.costs;
    out.push(`| 7 | CPU per cycle, all processes incl. Redis (1 worker, §2) | ${ms(one.cpuTotal)} | ${ms(mini.cpuTotal)} raw BullMQ + Lua + stream | ${ratio(one.cpuTotal, mini.cpuTotal)} | (a count to watch) | |`);
    out.push(`| 7 | Redis commands executed per cycle, incl. inside Lua (1 worker, §2) | ${n1(one.commands)} | ${n1(mini.commands)} | ${ratio(one.commands, mini.commands)} | (a count to watch) | |`);
  }
  out.push('');
  out.push(...analysis);

  if (c) {
    const l = c.latency;
    out.push('## 1. Answer → resume latency (sequential)');
    out.push('');
    out.push(`${l.runs} runs of an agent that asks ${l.questionsPerRun} questions in a row, one run after another (one question open at a`);
    out.push('time), on 1 gateway, 1 loop-worker and 1 interaction-service process. The bench\'s socket.io client answers each');
    out.push('question as soon as `interaction.opened` arrives and times the answer to the run\'s `run.status running` event.');
    out.push('After a warm-up run. Baselines on the same Redis: a bare BullMQ `queue.add` → worker `completed` round trip,');
    out.push('one at a time, and the minimal park/resume of §2 (answer → job running again, no event back). The samples are taken');
    out.push(`in ${SEQ_ROUNDS} rounds, each of Parley's (${l.runs / SEQ_ROUNDS} runs), then each baseline's (as many cycles), so that the host's load,`);
    out.push('which drifts over seconds, weighs on all three alike; the Parley processes stay up, idle, while the baselines run.');
    out.push('');
    out.push('| | samples | p50 | p99 | mean |');
    out.push('|---|---|---|---|---|');
    out.push(`| Parley: answer → \`run.status running\` | ${l.parleyResume.count} | ${ms(l.parleyResume.p50)} | ${ms(l.parleyResume.p99)} | ${ms(l.parleyResume.mean)} |`);
    out.push(`| Parley: answer → next \`interaction.opened\` (whole cycle) | ${l.parleyCycle.count} | ${ms(l.parleyCycle.p50)} | ${ms(l.parleyCycle.p99)} | ${ms(l.parleyCycle.mean)} |`);
    out.push(`| Baseline: bare BullMQ \`queue.add\` → worker \`completed\` | ${l.bull.count} | ${ms(l.bull.p50)} | ${ms(l.bull.p99)} | ${ms(l.bull.mean)} |`);
    out.push(`| Baseline: minimal park/resume, answer → job running again | ${l.miniResume.count} | ${ms(l.miniResume.p50)} | ${ms(l.miniResume.p99)} | ${ms(l.miniResume.mean)} |`);
    out.push('');
    out.push(`Answers absorbed by a run still being advanced (no resume event, not timed): ${l.absorbed}. The Parley figure holds`);
    out.push('three process hops: client → gateway (validation, the resolve script, which also drops the');
    out.push('deadline, and the `runs` job sent right behind it without waiting for its reply), gateway → worker (BullMQ pick-up,');
    out.push('lease script), worker → gateway → client (pub/sub, socket.io). The bare BullMQ round trip has one hop and no event back.');
    out.push('');

    const t = c.throughput;
    out.push(`## 2. Park/resume cycles per second (${t.runs} concurrent runs)`);
    out.push('');
    out.push(`${t.runs} runs started at once (HTTP, 20 requests in flight), each asking ${t.questionsPerRun} questions; worker concurrency ${t.concurrency}`);
    out.push('per process; the bench\'s one socket.io client answers every question as it opens. The clock runs from the first');
    out.push(`start to the last \`run.finished\`, so starting and finishing the runs is included, spread over ${t.questionsPerRun} cycles each`);
    out.push(`(the short-run row: over ${t.shortRuns.questionsPerRun}, the shape of the figures before 2026-11-30). Baseline: the minimal`);
    out.push('park/resume (`bench/support/baseline.ts`: raw BullMQ, one Lua script that flips a hash and XADDs the question to');
    out.push('a stream, an answerer that XREADs the stream, flips the hash back and re-adds the job), same concurrency and');
    out.push(`shape, in the bench process. Every layout is timed warm: the 1-worker processes after §1 and a warm-up round,`);
    out.push('the 2-worker processes (started afresh) after one untimed round of the same size (cold, V8 has not yet optimised');
    out.push('the hot paths, and a round costs about a third more CPU). The floor is also timed with its worker in a process of');
    out.push('its own and its answerer in the bench process, as Parley\'s worker and answering client are: shown for what the');
    out.push('split alone costs on this machine; the target is judged against the floor in one process. And once more in Parley\'s');
    out.push('layout and hops (`bench/support/mini-gateway.child.ts`): its worker and a socket.io server that reads the stream');
    out.push('in processes of their own, the server sending each question to the bench\'s socket.io client and taking its answer');
    out.push('(flip the hash back, re-add the job, ack), as Parley\'s gateway does; shown as information.');
    out.push('');
    out.push('| | cycles | wall time | cycles/s | answer → resume p50 | p99 |');
    out.push('|---|---|---|---|---|---|');
    out.push(throughputRow('Parley, 1 loop-worker process', t.oneWorker));
    out.push(throughputRow('Parley, 2 loop-worker processes', t.twoWorkers));
    out.push(throughputRow(`Parley, 1 loop-worker process, short runs (${t.shortRuns.questionsPerRun} questions each)`, t.shortRuns));
    out.push(throughputRow('Baseline: minimal park/resume', t.mini));
    out.push(throughputRow('Baseline: minimal park/resume, its worker in a process of its own', t.miniSplit));
    out.push(throughputRow("Baseline: minimal park/resume in Parley's layout (worker, socket.io server, answering client)", t.miniSocket));
    out.push('');
  }

  if (lg && c) {
    out.push('## 3. The same cycle in LangGraph JS');
    out.push('');
    out.push(`\`@langchain/langgraph\` 1.7.3: a one-node graph whose node calls \`interrupt()\` (the thread parks in the checkpointer) and`);
    out.push(`loops until it has asked ${lg.questionsPerThread} questions; each cycle is one \`invoke(new Command({ resume: 'ok' }), { thread_id })\`.`);
    out.push(`${lg.threads} threads at once (the shape of §2), after 20 warm-up threads, in the bench process. MemorySaver keeps`);
    out.push('checkpoints in that process\'s memory: a crash loses every parked thread, and a second process cannot resume them.');
    out.push('PostgresSaver (`@langchain/langgraph-checkpoint-postgres` 1.0.5) writes them to a database of its own on the local');
    out.push('PostgreSQL. No model, no events to a client, no deadlines, no socket: the graph machinery and the checkpointer only.');
    out.push('');
    out.push('| | cycles | wall time | cycles/s | Parley (best of §2) / this |');
    out.push('|---|---|---|---|---|');
    const best = Math.max(c.throughput.oneWorker.perSec, c.throughput.twoWorkers.perSec);
    out.push(`| LangGraph, MemorySaver | ${lg.memory.cycles} | ${(lg.memory.ms / 1000).toFixed(2)} s | ${n0(lg.memory.perSec)} | ${ratio(best, lg.memory.perSec)} |`);
    if ('perSec' in lg.postgres) {
      out.push(`| LangGraph, PostgresSaver | ${lg.postgres.cycles} | ${(lg.postgres.ms / 1000).toFixed(2)} s | ${n0(lg.postgres.perSec)} | ${ratio(best, lg.postgres.perSec)} |`);
    } else {
      out.push(`| LangGraph, PostgresSaver | not run: ${lg.postgres.error} | | | |`);
    }
    out.push('');
  }

  if (m) {
    out.push(`## 4. Redis bytes per parked run (${n0(m.runs)} parked runs)`);
    out.push('');
    out.push(`${m.reference} runs of a one-question agent are parked by the real services (gateway → loop-worker). The other`);
    out.push(`${n0(m.runs)} are written in bulk by the bench (${n0(m.creation.perSec)} runs/s, ${(m.creation.ms / 1000).toFixed(0)} s) through the same store repositories and`);
    out.push(`Lua scripts the services call for a first step that asks: ${BULK_STEPS} in ${deadlineIndex(r)}; when \`park\` answers with a due time (the`);
    out.push(`deadline is the tenant's earliest) the bench schedules the tenant's timer job, as the worker does (here for ${n0(d?.timersScheduled ?? Number.NaN)} of`);
    out.push('the bulk parks). The log entries are copied from a reference run. The bench asserts that a bulk run\'s keys, their types,');
    out.push('hash fields, log entries, its replay (`read-run-events`: event types in order), its entries in the tenant indexes and');
    out.push('the tenant timer that covers it equal a reference run\'s:');
    out.push('');
    out.push('```');
    out.push(...m.structure);
    out.push('```');
    out.push('');
    out.push(`Two measures. **used_memory**: \`INFO memory\` before and after the bulk creation (the bench's own Redis, so nothing`);
    out.push('else moves it; includes the key-space dictionary and allocator overhead), per run, minus the sampled log size.');
    out.push(`**MEMORY USAGE** (\`SAMPLES 0\`): per-run keys summed over ${n0(m.sample)} sampled bulk runs and averaged; shared keys (tenant`);
    out.push('stream and indexes, the deadline timer and its BullMQ job and queue keys) taken whole and divided by every parked run.');
    out.push('');
    out.push('| component | bytes per parked run |');
    out.push('|---|---|');
    for (const comp of m.components.filter((x) => x.name !== 'run:log' && x.bytes >= 0.5)) {
      out.push(`| ${COMPONENT_LABELS[comp.name] ?? `\`${comp.name}\`${comp.perRunKey ? '' : ' (shared)'}`} | ${b0(comp.bytes)} |`);
    }
    out.push(`| **sum, MEMORY USAGE, excl. the log** | **${b0(m.totalExclLog)}** |`);
    out.push(`| **used_memory delta, excl. the log** | **${b0(m.usedMemoryExclLog)}** |`);
    out.push(`| (the conversation log \`run:<id>:log\`, excluded) | ${b0(m.log)} |`);
    out.push(`| (completed \`runs\` jobs BullMQ keeps, at most 1,000, ${b0(m.retainedCompletedPerJob)} each: per run at ${n0(m.runs)}) | ${b0(m.retainedCompleted)} |`);
    out.push('');
    out.push(`Open interactions when measured: ${n0(m.openAtMeasure)} of ${n0(m.runs + m.reference)}. The tenant stream then held ${n0(m.streamLength)} events (trimmed to`);
    out.push(`about \`PARLEY_EVENTS_MAXLEN\` = ${n0(m.eventsMaxLen)}), so its share per run depends on the population, not on the events per run.`);
    out.push(`A run's replay (\`read-run-events\`) reads its events from that stream through its seqs and skips the trimmed ones: of the`);
    out.push(`${n0(m.replay.runs)} parked runs (${m.replay.expected} events each), ${n0(m.replay.gone)} replayed none and ${n0(m.replay.partial)} only some when measured.`);
    out.push('');
    out.push(`Baseline (the issue's naive design, ${n0(m.runs)} of them): one hash with the run and its question (8 fields), one`);
    out.push(`entry in a waiting-index zset, one delayed BullMQ job: ${b0(m.naive.usedMemory)} per run by \`used_memory\`, ${b0(m.naive.sampled)} by MEMORY USAGE:`);
    out.push('');
    out.push('| naive component | bytes per run |');
    out.push('|---|---|');
    m.naive.parts.forEach(([name, bytes]) => out.push(`| ${name} | ${b0(bytes)} |`));
    out.push('');
  }

  if (d) {
    out.push(`## 5. Deadline lateness (${n0(d.interactions)} open interactions)`);
    out.push('');
    out.push(`The ${n0(d.interactions)} bulk-parked runs of §4 have their deadlines spread evenly over a ${d.windowMs / 1000} s window that starts after the`);
    out.push(`creation and the memory measurement (${n0(d.interactions / (d.windowMs / 1000))} deadlines due per second). They are filed in ${deadlineIndex(r)};`);
    out.push('the tenant has one timer job at a time in the `deadlines` queue, due at its earliest deadline. When it fires, an');
    out.push('interaction-service resolves the due interactions as `expired`, in batches, enqueues their runs\' resume jobs, then re-arms');
    out.push(`the timer at the earliest deadline left and schedules that job. ${d.interactionServices} interaction-service processes take the timer jobs (one at a time for the`);
    out.push('one tenant); the gateway and the loop-worker are stopped, so the resume jobs the expiries enqueue wait. Lateness =');
    out.push('the interaction\'s `resolvedAt` (written by the resolve script) minus its `deadline`.');
    out.push('');
    out.push('| | p50 | p99 | max | mean | resolved/s | all expired? |');
    out.push('|---|---|---|---|---|---|---|');
    out.push(`| lateness | ${ms0(d.lateness.p50)} | ${ms0(d.lateness.p99)} | ${ms0(d.lateness.max)} | ${ms0(d.lateness.mean)} | ${n0(d.resolvedPerSec)} | ${d.allExpired ? 'yes' : 'no'} |`);
    out.push('');
    out.push(`Interactions opened after their deadline (the bulk creation ran into the window): ${n0(d.openedLate)}.`);
    out.push('Cost per deadline resolution over the window (the timer jobs, their sweeps and re-arms included):');
    out.push('');
    costRows(out, [['deadline → expired (+ resume job enqueued)', d.costs]]);
    out.push('');
    out.push(`Commands executed per deadline, largest first: ${d.costs.breakdown.slice(0, 10).map(([name, v]) => `\`${name}\` ${n2(v)}`).join(', ')}.`);
    out.push(`Redis time per deadline (\`INFO commandstats\` usec), largest first: ${usecList(d.costs)}.`);
    out.push('');
  }

  if (f) {
    out.push(`## 6. Fan-out to ${n0(f.clients)} clients`);
    out.push('');
    out.push(`${n0(f.clients)} socket.io clients (websocket transport) in ${f.processes} child processes of their own, on one gateway process, each`);
    out.push(`subscribed to the tenant as an admin (connected and subscribed in ${(f.parley.connectMs / 1000).toFixed(1)} s). After one warm-up round, ${f.rounds} times, the bench starts a run over`);
    out.push('HTTP; its `run.created` event (written by `create-run`, published on the deployment channel, filtered and sent by the');
    out.push('gateway) reaches every client. Delivery = arrival at the client minus the moment the bench sent the HTTP request');
    out.push('(same host clock). Baseline: a bare socket.io 4.8 server process emitting one event to the same number of clients');
    out.push('(`nsp.emit`), timed from the moment the bench tells it to.');
    out.push('');
    out.push('| | deliveries | p50 | p99 | mean | slowest client, per round |');
    out.push('|---|---|---|---|---|---|');
    out.push(`| Parley gateway | ${f.parley.delivery.count} | ${ms(f.parley.delivery.p50)} | ${ms(f.parley.delivery.p99)} | ${ms(f.parley.delivery.mean)} | ${f.parley.lastPerRound.map((v) => v.toFixed(0)).join(', ')} ms |`);
    out.push(`| bare socket.io | ${f.bare.delivery.count} | ${ms(f.bare.delivery.p50)} | ${ms(f.bare.delivery.p99)} | ${ms(f.bare.delivery.mean)} | ${f.bare.lastPerRound.map((v) => v.toFixed(0)).join(', ')} ms |`);
    out.push('');
  }

  if (c) {
    out.push('## 7. CPU and Redis commands per cycle');
    out.push('');
    out.push('Over the timed windows of §1/§2: CPU = user + system time of each process (`/proc/<pid>/stat` for the service');
    out.push('processes and Redis, `process.cpuUsage()` for the bench, which holds the answering client, or the whole baseline),');
    out.push('divided by the cycles. Commands = `INFO commandstats` deltas of the bench\'s own Redis: every command executed,');
    out.push('including each `redis.call` inside a Lua script (Parley\'s and BullMQ\'s), so a script counts once as `evalsha` and');
    out.push('again for each command it runs. Starting and finishing the runs is included, amortised over their questions.');
    out.push('');
    costRows(out, [
      ['Parley, 1 loop-worker process', c.throughput.oneWorker.costs],
      ['Parley, 2 loop-worker processes', c.throughput.twoWorkers.costs],
      ['Baseline: minimal park/resume (all in the bench process)', c.throughput.mini.costs],
      ['Baseline: minimal park/resume, its worker in a process of its own', c.throughput.miniSplit.costs],
      ["Baseline: minimal park/resume in Parley's layout, answered over socket.io", c.throughput.miniSocket.costs],
      ['Baseline: bare BullMQ round trip (§1)', c.bullCosts],
    ]);
    out.push('');
    const flow = c.throughput.oneWorker.flow;
    if (flow) {
      out.push(`What a cycle moves (Parley, 1 loop-worker, measured over the same window): ${n2(flow.events)} events (the tenant stream's`);
      out.push('`entries-added` delta; each is a `SET` of the tenant\'s seq, one `XADD` to the tenant stream and an `XLEN` and an append to the run\'s seqs, inside');
      out.push(`the script that makes the change, which publishes all its events in one \`PUBLISH\`), ${n2(flow.runJobs)} \`runs\` jobs (one per answer, plus the start), ${n2(flow.timerJobs)} deadline timer jobs.`);
      out.push('');
    }
    out.push(`Redis time per cycle (Parley, 1 loop-worker; \`INFO commandstats\` usec), largest first: ${usecList(c.throughput.oneWorker.costs)}.`);
    out.push('');
    out.push('Where the commands go (Parley, 1 loop-worker, executed per cycle; `evalsha` is the script calls themselves):');
    out.push('');
    out.push('| command | per cycle | | command | per cycle |');
    out.push('|---|---|---|---|---|');
    const rows = c.throughput.oneWorker.costs.breakdown;
    const half = Math.ceil(rows.length / 2);
    for (let i = 0; i < half; i++) {
      const a = rows[i];
      const b = rows[i + half];
      out.push(`| \`${a[0]}\` | ${n2(a[1])} | | ${b ? `\`${b[0]}\`` : ''} | ${b ? n2(b[1]) : ''} |`);
    }
    out.push('');
  }

  out.push(...renderHotPaths(r));
  return out.join('\n');
}

export function writeReport(path: string, results: Results, analysis: string[]): void {
  writeFileSync(path, `${renderMarkdown(results, analysis)}\n`);
}
