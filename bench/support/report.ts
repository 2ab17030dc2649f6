import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { Latency } from './stats';

export interface CommandFigures {
  /** Commands this process sent, per cycle (pipelined commands count one each). */
  local: number;
  /** Server-side INFO delta per cycle (includes commands inside Lua scripts), background-corrected. */
  server: number;
}

export interface Results {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  redisVersion: string;
  seconds: number;
  latency?: {
    runs: number;
    questionsPerRun: number;
    parleyResume: Latency;
    parleyCycle: Latency;
    absorbed: number;
    bull: Latency;
    miniResume: Latency;
  };
  throughput?: {
    runs: number;
    questionsPerRun: number;
    concurrency: number;
    parley: { cycles: number; ms: number; perSec: number; resume: Latency; absorbed: number };
    mini: { cycles: number; ms: number; perSec: number; resume: Latency };
  };
  commands?: {
    parleyMarginal: number;
    parleySequential: CommandFigures;
    parleyConcurrent: CommandFigures;
    bull: CommandFigures;
    miniSequential: CommandFigures;
    miniConcurrent: CommandFigures;
    parleyBreakdown: Array<[string, number]>;
    parleyIdlePerSec: number;
    bullmqShare: number;
    parleyShare: number;
  };
  memory?: {
    runs: number;
    perRun: Array<[string, number]>;
    runOwnedExclLog: number;
    tenantShared: number;
    bullmq: Array<[string, number]>;
    bullmqTotal: number;
    retainedCompleted: Array<[string, number]>;
    log: number;
    usedMemoryPerRun: number;
    sampleRun: Array<[string, number]>;
    mini: { perRun: number; bullmq: number; usedMemoryPerRun: number };
  };
  approvals?: {
    runs: number;
    callsPerRun: number;
    concurrency: number;
    cycles: number;
    ms: number;
    perSec: number;
    resume: Latency;
    absorbed: number;
    /** Per approve → resume cycle, gross (run start and finish amortised), like `commands.parleyConcurrent`. */
    commands: CommandFigures;
  };
  grants?: {
    /** One run at a time, each approved once with allow_run and then `callsPerRun` covered calls. */
    sequential: { runs: number; callsPerRun: number; step: Latency };
    runs: number;
    coveredPerRun: number;
    concurrency: number;
    covered: number;
    /** From releasing the held allow_run answers to the last `run.finished`, with `coveredPerRun` covered calls per run. */
    ms: number;
    /** The same with no covered call (approve, then finish). */
    bareMs: number;
    perSec: number;
    marginalPerSec: number;
    step: Latency;
    /** Per covered call, gross: each run's resume and finish amortised over its covered calls. */
    commands: CommandFigures;
    /** Per covered call: (window with covered calls − window without) / covered calls. */
    marginalCommands: CommandFigures;
    smismemberPerCall: number;
    breakdown: Array<[string, number]>;
  };
  commandLine?: {
    lines: number;
    rounds: number;
    callsPerRound: number;
    opsPerSec: number;
    usPerCall: number;
    minUs: number;
    maxUs: number;
    perLine: Array<{ line: string; verdict: string; us: number }>;
  };
}

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : 'n/a');
const x = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(1)}×` : 'n/a');
const n1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const b0 = (v: number) => `${Math.round(v).toLocaleString('en-US')} B`;
const r2 = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : 'n/a');
const pct = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${((a / b) * 100).toFixed(2)}%` : 'n/a');
const us = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} µs` : 'n/a');
const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
/** A shell line inside a table cell: code span, pipes escaped, newlines shown as ⏎. */
const cell = (line: string) => `\`${line.replace(/\|/g, '\\|').replace(/\n/g, '⏎')}\``;

export function machine(): { node: string; cpus: number; cpuModel: string } {
  const list = cpus();
  return { node: process.version, cpus: list.length, cpuModel: list[0]?.model ?? 'unknown' };
}

export function renderMarkdown(r: Results): string {
  const out: string[] = [];
  out.push('# Benchmarks');
  out.push('');
  out.push('What Parley costs on top of the parts it is built from (BullMQ on Redis), measured side by side with a');
  out.push('baseline in the same run; the ratio is the result, the absolute figures are only this machine\'s.');
  out.push('');
  out.push(`- Date: ${r.date}`);
  out.push(`- Machine: Node.js ${r.node}, ${r.cpus} CPU(s) (${r.cpuModel}), Redis ${r.redisVersion} on 127.0.0.1 (shared with other work)`);
  out.push('- Everything runs in one Node.js process: gateway, loop-worker and interaction-service (the e2e');
  out.push('  `TestStack`), the socket.io answerer and the baselines, so the client shares the event loop with the');
  out.push('  services; worker concurrency 50, lease 15 s (the production default). Scripted agents: no model latency, one tool call');
  out.push('  per turn (`ask_user_text`, or `write_file` in the approval benchmarks), each question or approval with the');
  out.push('  default 3600 s timeout (so each also schedules a deadline job and each answer cancels it).');
  out.push('- Noise: on this shared 2-core machine, repeated runs moved absolute figures by up to 2× (the');
  out.push('  concurrent baseline most: 2,600 to 5,300 cycles/s over two runs); compare ratios within one run.');
  out.push('');
  out.push('## How to run');
  out.push('');
  out.push('```sh');
  out.push('npm run bench');
  out.push("# = jest --testMatch '<rootDir>/bench/**/*.bench.ts' --runInBand --testTimeout 300000");
  out.push('```');
  out.push('');
  out.push(`It needs a Redis at \`REDIS_URL\` (default \`redis://127.0.0.1:6379\`), took ${r.seconds.toFixed(0)} s here, uses its`);
  out.push('own key prefixes, deletes its keys afterwards (never FLUSHDB), prints the figures and rewrites this');
  out.push('file. Its only assertions are sanity checks (every run finished, every question was answered, calls');
  out.push('covered by a grant ran without asking), never timing thresholds.');
  out.push('Set `BENCH_QUICK=1` for a smaller smoke run that prints but does not rewrite this file.');
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push('| measure | Parley | baseline | ratio (Parley / baseline) |');
  out.push('|---|---|---|---|');
  if (r.latency) {
    const l = r.latency;
    out.push(`| answer → resume, sequential, p50 | ${ms(l.parleyResume.p50)} | ${ms(l.bull.p50)} (bare BullMQ add → completed) | ${x(l.parleyResume.p50, l.bull.p50)} |`);
    out.push(`| answer → resume, sequential, p99 | ${ms(l.parleyResume.p99)} | ${ms(l.bull.p99)} (bare BullMQ add → completed) | ${x(l.parleyResume.p99, l.bull.p99)} |`);
    out.push(`| answer → resume, sequential, p50 | ${ms(l.parleyResume.p50)} | ${ms(l.miniResume.p50)} (minimal park/resume) | ${x(l.parleyResume.p50, l.miniResume.p50)} |`);
    out.push(`| answer → resume, sequential, p99 | ${ms(l.parleyResume.p99)} | ${ms(l.miniResume.p99)} (minimal park/resume) | ${x(l.parleyResume.p99, l.miniResume.p99)} |`);
  }
  if (r.throughput) {
    const t = r.throughput;
    out.push(
      `| park/resume cycles per second, ${t.runs} concurrent runs | ${n1(t.parley.perSec)} /s | ${n1(t.mini.perSec)} /s (minimal park/resume) | ${(t.parley.perSec / t.mini.perSec).toFixed(2)}× (the baseline does ${x(t.mini.perSec, t.parley.perSec)} as many) |`,
    );
  }
  if (r.commands) {
    const c = r.commands;
    out.push(`| Redis commands sent per cycle (marginal, sequential) | ${n1(c.parleyMarginal)} | ${n1(c.miniSequential.local)} (minimal park/resume) | ${x(c.parleyMarginal, c.miniSequential.local)} |`);
    out.push(`| Redis commands sent per cycle (${r.throughput?.runs ?? '?'} concurrent runs, gross) | ${n1(c.parleyConcurrent.local)} | ${n1(c.miniConcurrent.local)} (minimal park/resume) | ${x(c.parleyConcurrent.local, c.miniConcurrent.local)} |`);
    out.push(`| Redis commands executed per cycle incl. inside Lua (server INFO, noisy) | ${n1(c.parleyConcurrent.server)} | ${n1(c.miniConcurrent.server)} (minimal park/resume) | ${x(c.parleyConcurrent.server, c.miniConcurrent.server)} |`);
  }
  if (r.memory) {
    const m = r.memory;
    out.push(`| Redis memory per parked run: the run's own keys excl. the log | ${b0(m.runOwnedExclLog)} | ${b0(m.mini.perRun)} (minimal: run hash + stream entry) | ${x(m.runOwnedExclLog, m.mini.perRun)} |`);
    out.push(`| … plus its share of the tenant's stream and indexes | ${b0(m.runOwnedExclLog + m.tenantShared)} | ${b0(m.mini.perRun)} | ${x(m.runOwnedExclLog + m.tenantShared, m.mini.perRun)} |`);
    out.push(`| … plus BullMQ keys (${m.runs} parked runs) | ${b0(m.runOwnedExclLog + m.tenantShared + m.bullmqTotal)} | ${b0(m.mini.perRun + m.mini.bullmq)} | ${x(m.runOwnedExclLog + m.tenantShared + m.bullmqTotal, m.mini.perRun + m.mini.bullmq)} |`);
  }
  if (r.approvals) {
    const a = r.approvals;
    const q = r.throughput?.parley.perSec ?? Number.NaN;
    out.push(`| approve → resume cycles per second, ${a.runs} concurrent runs (\`write_file\`, allow once) | ${n1(a.perSec)} /s | ${n1(q)} /s (Parley question cycle, §2) | ${r2(a.perSec, q)} |`);
    const qc = r.commands?.parleyConcurrent.local ?? Number.NaN;
    out.push(`| Redis commands sent per approve → resume cycle (concurrent, gross) | ${n1(a.commands.local)} | ${n1(qc)} (Parley question cycle, §3) | ${x(a.commands.local, qc)} |`);
  }
  if (r.grants) {
    const g = r.grants;
    const a = r.approvals?.perSec ?? Number.NaN;
    out.push(`| tool calls per second on a run grant, no person (${g.runs} concurrent runs, gross) | ${n1(g.perSec)} /s | ${n1(a)} /s (approve → resume cycles, §5) | ${x(g.perSec, a)} |`);
    const ac = r.approvals?.commands.local ?? Number.NaN;
    out.push(`| Redis commands sent per grant-covered call (marginal) | ${n1(g.marginalCommands.local)} | ${n1(ac)} (per approve → resume cycle, gross, §5) | ${x(g.marginalCommands.local, ac)} |`);
  }
  if (r.commandLine) {
    const c = r.commandLine;
    const p50 = r.latency?.parleyResume.p50 ?? Number.NaN;
    out.push(`| \`analyseCommandLine\`, per call (mix of ${c.lines} shell lines) | ${us(c.usPerCall)} | ${ms(p50)} (answer → resume p50, §1) | ${pct(c.usPerCall / 1000, p50)} |`);
  }
  out.push('');

  if (r.latency) {
    const l = r.latency;
    out.push('## 1. Answer → resume latency (sequential)');
    out.push('');
    out.push(`${l.runs} runs of an agent that asks ${l.questionsPerRun} questions in a row, one run after another (one`);
    out.push('question open at a time). A socket.io client subscribed to the tenant answers each question as soon');
    out.push('as `interaction.opened` arrives, and times from sending the answer to receiving the run\'s');
    out.push('`run.status` event with status `running` (the worker has taken the run again). After a warm-up run.');
    out.push('');
    out.push('| | samples | p50 | p99 | mean |');
    out.push('|---|---|---|---|---|');
    out.push(`| Parley: answer → \`run.status running\` | ${l.parleyResume.count} | ${ms(l.parleyResume.p50)} | ${ms(l.parleyResume.p99)} | ${ms(l.parleyResume.mean)} |`);
    out.push(`| Parley: answer → next \`interaction.opened\` (whole cycle) | ${l.parleyCycle.count} | ${ms(l.parleyCycle.p50)} | ${ms(l.parleyCycle.p99)} | ${ms(l.parleyCycle.mean)} |`);
    out.push(`| Baseline: bare BullMQ \`queue.add\` → worker \`completed\` | ${l.bull.count} | ${ms(l.bull.p50)} | ${ms(l.bull.p99)} | ${ms(l.bull.mean)} |`);
    out.push(`| Baseline: minimal park/resume, answer → job running again | ${l.miniResume.count} | ${ms(l.miniResume.p50)} | ${ms(l.miniResume.p99)} | ${ms(l.miniResume.mean)} |`);
    out.push('');
    out.push(`Answers that reached the run before its worker had parked it (absorbed without a resume event, so not timed): ${l.absorbed}.`);
    out.push('The Parley figure includes the client → gateway hop (validation, interaction read, the atomic');
    out.push('resolve script, the enqueue, the deadline cancel), the worker\'s pick-up and lease script, and the');
    out.push('event\'s way back (pub/sub → gateway → socket.io). The bare BullMQ baseline has none of that; the');
    out.push('minimal park/resume baseline stops its clock when the job starts running (no event back).');
    out.push('');
  }

  if (r.throughput) {
    const t = r.throughput;
    out.push(`## 2. Park/resume cycles per second (${t.runs} concurrent runs)`);
    out.push('');
    out.push(`${t.runs} runs started at once (over HTTP, 20 requests in flight), each asking ${t.questionsPerRun} questions;`);
    out.push(`one loop-worker with concurrency ${t.concurrency}; one socket.io client answers every question as soon as it`);
    out.push('opens. The clock runs from the first run\'s start to the last run\'s `run.finished`, so run creation');
    out.push('and finishing are included. The baseline is the minimal park/resume (raw BullMQ, one Lua script that');
    out.push('sets a hash field and XADDs the question, an answerer that XREADs the stream, flips the hash and');
    out.push(`re-adds the job), with the same worker concurrency and the same ${t.runs} × ${t.questionsPerRun} shape.`);
    out.push('');
    out.push('| | cycles | wall time | cycles/s | answer → resume p50 | p99 |');
    out.push('|---|---|---|---|---|---|');
    out.push(`| Parley | ${t.parley.cycles} | ${(t.parley.ms / 1000).toFixed(2)} s | ${n1(t.parley.perSec)} | ${ms(t.parley.resume.p50)} | ${ms(t.parley.resume.p99)} |`);
    out.push(`| Minimal park/resume | ${t.mini.cycles} | ${(t.mini.ms / 1000).toFixed(2)} s | ${n1(t.mini.perSec)} | ${ms(t.mini.resume.p50)} | ${ms(t.mini.resume.p99)} |`);
    out.push('');
    if (t.parley.absorbed > 0) {
      out.push(`(${t.parley.absorbed} Parley answers arrived before their run had parked and were absorbed without a resume.)`);
      out.push('');
    }
  }

  if (r.commands) {
    const c = r.commands;
    out.push('## 3. Redis commands per cycle');
    out.push('');
    out.push('Two counts. **Sent**: every command this process wrote to a Redis socket, counted inside ioredis');
    out.push('(`Command#toWritable`), for all clients, Parley\'s and BullMQ\'s: exact, and blind to other users of the');
    out.push('shared server; a pipelined command counts one, an EVALSHA counts one however much its script does.');
    out.push('**Executed**: the server\'s `INFO stats` `total_commands_processed` delta, which also counts every');
    out.push('`redis.call` inside Lua scripts (Parley\'s and BullMQ\'s); the shared server serves other clients too, so');
    out.push('the background rate sampled for 1 s just before is subtracted, and the figure stays noisy.');
    out.push('Both include BullMQ\'s own traffic (job moves, stalled checks, blocking waits for work).');
    out.push('');
    out.push('| per cycle | sent | executed (server, noisy) |');
    out.push('|---|---|---|');
    out.push(`| Parley, marginal (${r.latency?.questionsPerRun ?? '?'}-question run minus 5-question run, per extra question) | ${n1(c.parleyMarginal)} | |`);
    out.push(`| Parley, sequential (incl. each run's start and finish, amortised over ${r.latency?.questionsPerRun ?? '?'} questions) | ${n1(c.parleySequential.local)} | ${n1(c.parleySequential.server)} |`);
    out.push(`| Parley, ${r.throughput?.runs ?? '?'} concurrent runs (incl. start and finish, amortised over ${r.throughput?.questionsPerRun ?? '?'} questions) | ${n1(c.parleyConcurrent.local)} | ${n1(c.parleyConcurrent.server)} |`);
    out.push(`| Baseline: bare BullMQ add → completed (per round trip) | ${n1(c.bull.local)} | ${n1(c.bull.server)} |`);
    out.push(`| Baseline: minimal park/resume, sequential | ${n1(c.miniSequential.local)} | ${n1(c.miniSequential.server)} |`);
    out.push(`| Baseline: minimal park/resume, concurrent | ${n1(c.miniConcurrent.local)} | ${n1(c.miniConcurrent.server)} |`);
    out.push('');
    out.push(`Parley's idle traffic (services up, nothing to do) was ${n1(c.parleyIdlePerSec)} commands/s; it is included above in`);
    out.push('proportion to each window\'s length.');
    out.push('');
    out.push('Where the commands go (sequential window, sent, per cycle; `evalsha:<name>` is one script call).');
    out.push(`BullMQ's share (its versioned scripts and its blocking \`bzpopmin\`) is ${n1(c.bullmqShare)} per cycle; the rest,`);
    out.push(`${n1(c.parleyShare)} per cycle, is Parley's own scripts and reads.`);
    out.push('');
    out.push('| command | per cycle |');
    out.push('|---|---|');
    c.parleyBreakdown.forEach(([name, perCycle]) => out.push(`| \`${name}\` | ${perCycle.toFixed(2)} |`));
    out.push('');
  }

  if (r.memory) {
    const m = r.memory;
    out.push('## 4. Redis memory per parked run');
    out.push('');
    out.push(`${m.runs} runs of a one-question agent, all parked on their open question at once. \`MEMORY USAGE <key>`);
    out.push('SAMPLES 0` summed over the keys under the stack\'s prefix, after minus before, divided by the run count.');
    out.push('');
    out.push('| keys | bytes per parked run |');
    out.push('|---|---|');
    m.perRun.forEach(([name, bytes]) => out.push(`| ${name} | ${b0(bytes)} |`));
    out.push(`| **the run's own keys, excluding the log** | **${b0(m.runOwnedExclLog)}** |`);
    out.push(`| **Parley keys, excluding the log, with the tenant shares** | **${b0(m.runOwnedExclLog + m.tenantShared)}** |`);
    m.bullmq.forEach(([name, bytes]) => out.push(`| BullMQ \`${name}\` queue keys | ${b0(bytes)} |`));
    out.push(`| **BullMQ total** | **${b0(m.bullmqTotal)}** |`);
    out.push(`| (the run's log, excluded above) | ${b0(m.log)} |`);
    out.push(`| (server \`used_memory\` delta per run, noisy: shared server, allocator) | ${b0(m.usedMemoryPerRun)} |`);
    out.push('');
    out.push('One sample run\'s own keys (key suffix → bytes):');
    out.push('');
    out.push('| key | bytes |');
    out.push('|---|---|');
    m.sampleRun.forEach(([name, bytes]) => out.push(`| \`${name}\` | ${b0(bytes)} |`));
    out.push('');
    out.push('BullMQ keeps completed jobs up to `removeOnComplete: { count: 1000, age: 3600 }` per queue, so the');
    out.push('`runs` and `interaction-requests` shares are bounded (jobs held at measurement: ' +
      m.retainedCompleted.map(([q, k]) => `${q} ${k}`).join(', ') + ') and shrink per run as');
    out.push('more runs park; the `deadlines` share (one delayed job per open question with a timeout) grows with them.');
    out.push('The run\'s event stream dominates: a Redis stream costs a few KB even with a handful of entries.');
    out.push('');
    out.push(`Baseline (minimal park/resume, ${m.runs} parked): run hash + question stream entry ${b0(m.mini.perRun)} per run,`);
    out.push(`BullMQ ${b0(m.mini.bullmq)} per run (jobs removed on completion), \`used_memory\` delta ${b0(m.mini.usedMemoryPerRun)} per run.`);
    out.push('');
  }
  renderApprovals(r, out);
  renderGrants(r, out);
  renderCommandLine(r, out);
  return out.join('\n');
}

function renderApprovals(r: Results, out: string[]): void {
  if (!r.approvals) {
    return;
  }
  const a = r.approvals;
  const t = r.throughput;
  const qc = r.commands?.parleyConcurrent;
  out.push(`## 5. Approve → resume cycles per second (${a.runs} concurrent runs)`);
  out.push('');
  out.push(`The shape of §2 with a tool approval instead of a question: ${a.runs} runs started at once (over HTTP, 20`);
  out.push(`requests in flight) of an agent whose ${a.callsPerRun} turns each call \`write_file\` on a different path (permission`);
  out.push('`ask`, the default; no grant), so every call parks the run on a `tool_approval` interaction. The same');
  out.push(`socket.io client answers each as it opens with \`{ decision: 'allow_once' }\`; one loop-worker, concurrency ${a.concurrency}.`);
  out.push('On top of a question cycle, an approval cycle looks the call\'s grant keys up before asking (one');
  out.push('`SMISMEMBER`, which finds nothing), builds the approval prompt, checks the decision against it, and runs');
  out.push('the approved call (a workspace write). Measured right after §2, in the same bench run.');
  out.push('');
  out.push('| | cycles | wall time | cycles/s | answer → resume p50 | p99 | commands sent per cycle | executed (server, noisy) |');
  out.push('|---|---|---|---|---|---|---|---|');
  out.push(`| Parley: approve → resume (\`write_file\`, allow once) | ${a.cycles} | ${(a.ms / 1000).toFixed(2)} s | ${n1(a.perSec)} | ${ms(a.resume.p50)} | ${ms(a.resume.p99)} | ${n1(a.commands.local)} | ${n1(a.commands.server)} |`);
  if (t) {
    out.push(`| Parley: question → answer (§2, \`ask_user_text\`) | ${t.parley.cycles} | ${(t.parley.ms / 1000).toFixed(2)} s | ${n1(t.parley.perSec)} | ${ms(t.parley.resume.p50)} | ${ms(t.parley.resume.p99)} | ${n1(qc?.local ?? Number.NaN)} | ${n1(qc?.server ?? Number.NaN)} |`);
  }
  out.push('');
  if (t) {
    out.push(`An approval cycle ran at ${r2(a.perSec, t.parley.perSec)} the rate of a question cycle and sent ${x(a.commands.local, qc?.local ?? Number.NaN)} the commands.`);
  }
  if (a.absorbed > 0) {
    out.push(`(${a.absorbed} approvals arrived before their run had parked and were absorbed without a resume.)`);
  }
  out.push('');
}

function renderGrants(r: Results, out: string[]): void {
  if (!r.grants) {
    return;
  }
  const g = r.grants;
  const a = r.approvals;
  out.push('## 6. Tool calls covered by a run grant');
  out.push('');
  out.push('The same kind of agent, but its first `write_file` is approved with `{ decision: \'allow_run\', directory: \'\' }`');
  out.push('(the whole workspace: the grant `write_file:dir:` covers every later path), and the calls after it, each');
  out.push('to another path, run on that grant: no interaction, no park, no person. Per covered call the worker');
  out.push('reads the log, takes one scripted model turn and appends it, looks the call\'s grant keys up with one');
  out.push('`SMISMEMBER` on the run\'s grant set, writes the file and appends the result (with its `approval` basis).');
  out.push('');
  out.push(`Concurrent: ${g.runs} runs of an agent with ${g.coveredPerRun} covered calls after the approved one, held on their`);
  out.push('approval until all had parked; then every `allow_run` answer was sent at once and the clock ran to the');
  out.push(`last \`run.finished\` (worker concurrency ${g.concurrency}). That window also holds each run's resume and finish; the`);
  out.push('same round with an agent that finishes right after its approved call (no covered call) is subtracted for');
  out.push('the marginal figures.');
  out.push('');
  out.push('| | tool calls | wall time | tool calls/s |');
  out.push('|---|---|---|---|');
  out.push(`| Parley: covered calls, gross (${g.runs} runs × ${g.coveredPerRun}, incl. each run's resume and finish) | ${g.covered} | ${(g.ms / 1000).toFixed(2)} s | ${n1(g.perSec)} |`);
  out.push(`| Parley: covered calls, marginal (minus the ${(g.bareMs / 1000).toFixed(2)} s round without them) | ${g.covered} | ${((g.ms - g.bareMs) / 1000).toFixed(2)} s | ${n1(g.marginalPerSec)} |`);
  if (a) {
    out.push(`| For comparison: calls approved one by one, allow once (§5, approve → resume cycles) | ${a.cycles} | ${(a.ms / 1000).toFixed(2)} s | ${n1(a.perSec)} |`);
  }
  out.push('');
  out.push('One covered step, timed between consecutive `tool.result` events of a run (model turn + covered call):');
  out.push('');
  out.push('| | samples | p50 | p99 | mean |');
  out.push('|---|---|---|---|---|');
  out.push(`| sequential: one run at a time, ${g.sequential.callsPerRun} covered calls each | ${g.sequential.step.count} | ${ms(g.sequential.step.p50)} | ${ms(g.sequential.step.p99)} | ${ms(g.sequential.step.mean)} |`);
  out.push(`| ${g.runs} concurrent runs | ${g.step.count} | ${ms(g.step.p50)} | ${ms(g.step.p99)} | ${ms(g.step.mean)} |`);
  out.push('');
  out.push('Redis commands per covered call (counted as in §3):');
  out.push('');
  out.push('| per covered call | sent | executed (server, noisy) |');
  out.push('|---|---|---|');
  out.push(`| gross (the window over covered calls; resume and finish amortised over ${g.coveredPerRun}) | ${n1(g.commands.local)} | ${n1(g.commands.server)} |`);
  out.push(`| marginal (minus the round without covered calls) | ${n1(g.marginalCommands.local)} | ${n1(g.marginalCommands.server)} |`);
  out.push(`| of which \`SMISMEMBER\` on the grant set (exact; the bench asserts one per covered call) | ${g.smismemberPerCall.toFixed(2)} | |`);
  if (a) {
    out.push(`| for comparison: per approve → resume cycle, gross (§5) | ${n1(a.commands.local)} | ${n1(a.commands.server)} |`);
  }
  out.push('');
  out.push('Where the marginal commands go (sent, per covered call; `evalsha:<name>` is one script call; entries');
  out.push('under 0.05 per call, such as BullMQ\'s idle polling over the longer window, left out):');
  out.push('');
  out.push('| command | per covered call |');
  out.push('|---|---|');
  g.breakdown.forEach(([name, perCall]) => out.push(`| \`${name}\` | ${perCall.toFixed(2)} |`));
  out.push('');
}

function renderCommandLine(r: Results, out: string[]): void {
  if (!r.commandLine) {
    return;
  }
  const c = r.commandLine;
  out.push('## 7. Command-line analysis');
  out.push('');
  out.push('`analyseCommandLine` (`libs/tools/src/shell/command-line.ts`) reads every `shell` call that needs approval,');
  out.push('before the grant lookup, to find the simple commands it runs and their grant keys. It is pure CPU, timed');
  out.push(`here in the bench process (after a warm-up) on ${c.lines} typical lines: all together in ${c.rounds} rounds of ${n0(c.callsPerRound)}`);
  out.push('calls (the median round, with the fastest and slowest), and each line alone (median of as many rounds).');
  out.push('');
  out.push('| | calls/s | µs per call | fastest round | slowest round |');
  out.push('|---|---|---|---|---|');
  out.push(`| mix of ${c.lines} lines | ${n0(c.opsPerSec)} | ${us(c.usPerCall)} | ${us(c.minUs)} | ${us(c.maxUs)} |`);
  out.push('');
  out.push('| line | what the scanner makes of it | µs per call |');
  out.push('|---|---|---|');
  c.perLine.forEach(({ line, verdict, us: perCall }) => out.push(`| ${cell(line)} | ${verdict.replace(/\|/g, '\\|')} | ${us(perCall)} |`));
  out.push('');
  if (r.latency) {
    out.push(`At ${us(c.usPerCall)} a call, the analysis is ${pct(c.usPerCall / 1000, r.latency.parleyResume.p50)} of one answer → resume at p50 (§1, ${ms(r.latency.parleyResume.p50)}).`);
    out.push('');
  }
}

export function writeReport(path: string, results: Results): void {
  writeFileSync(path, renderMarkdown(results));
}
