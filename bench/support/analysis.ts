import { COMPONENT_LABELS, type DeadlineResults, type MemoryResults } from '../items/parked';
import type { CycleResults } from '../items/cycles';
import type { SchedTimes } from './procs';
import { b0, n0 } from './format';
import type { Results } from './report';

const pct = (part: number, whole: number) => `${Math.round((100 * part) / whole)}%`;
const TARGET_BYTES = 1536;

/** The notes under the summary table: what is not met, where the time and the bytes go, what to try first. */
export function analysis(r: Results): string[] {
  const out: string[] = ['## What the figures say', ''];
  const c = r.cycles;
  const m = r.memory;
  const d = r.deadlines;
  const f = r.fanout;
  if (c) {
    out.push(...cycleNotes(r, c));
  }
  if (m) {
    const parts = m.components.filter((x) => x.name !== 'run:log').slice(0, 5);
    out.push(
      `- **Memory (4).** ${b0(m.usedMemoryExclLog)} per parked run by \`used_memory\` (${b0(m.totalExclLog)} by MEMORY USAGE), ` +
        `${(m.usedMemoryExclLog / m.naive.usedMemory).toFixed(1)}× the naive design and ${(m.usedMemoryExclLog / TARGET_BYTES).toFixed(1)}× the 1.5 KB target. ` +
        `The largest parts: ${parts.map((p) => `${COMPONENT_LABELS[p.name] ?? p.name} ${b0(p.bytes)}`).join('; ')}.`,
    );
  }
  if (d) {
    out.push(deadlineNote(d));
  }
  if (f) {
    out.push(
      `- **Fan-out (6).** One event reaches ${n0(f.clients)} clients at p99 ${f.parley.delivery.p99.toFixed(0)} ms (slowest ${f.parley.max.toFixed(0)} ms), ` +
        `${(f.parley.delivery.p99 / f.bare.delivery.p99).toFixed(2)}× a bare socket.io server's \`nsp.emit\`. The gateway checks each event against each ` +
        'socket\'s subscription (sequence, run, owner) and sends one broadcast to the sockets it admits (their own rooms), so the ' +
        'packet is encoded once, as by `nsp.emit`.',
    );
  }
  out.push('');
  out.push('## Where to cut, ranked by expected gain');
  out.push('');
  out.push('Measured, not tried: these are suggestions for whoever owns the store and the services (the bench changes no product code).');
  out.push('Each list is ranked by the measured size of what it would cut.');
  out.push('');
  if (m) {
    out.push(...memoryCuts(m));
  }
  if (c) {
    out.push(...cpuCuts(r, c));
  }
  if (d) {
    out.push(...deadlineCuts(d));
  }
  return out;
}

/** Commands a bare BullMQ job round trip executes, times the jobs a cycle moves: BullMQ's share of a cycle, roughly. */
function bullShare(c: CycleResults): number {
  const flow = c.throughput.oneWorker.flow;
  return flow ? (flow.runJobs + flow.timerJobs) * c.bullCosts.commands : Number.NaN;
}

/**
 * Each event is a SET of the tenant's seq, an XADD and an XLEN (the stream's cap) and an append to the run's seqs
 * and one to its owner's inside the script that makes the change (and, once per script, a TIME, a GET of the seq and
 * one PUBLISH of all its events).
 */
const COMMANDS_PER_EVENT = 5;

/** Executions of one Redis command per cycle (1 worker). */
const cmd = (c: CycleResults, name: string) => c.throughput.oneWorker.costs.breakdown.find(([n]) => n === name)?.[1] ?? 0;

/**
 * Where the time over the p50 can go in §1: pauses for GC in the processes on the path, and waits
 * for a CPU (a process that was woken, runnable, but not running: /proc/<pid>/schedstat), both per
 * cycle. A sample of p50 length overlaps a pause that starts during it or while it is running, so
 * each pause covers its own length plus a p50 of the rounds' time: the share given is a ceiling.
 */
function tailNote(l: CycleResults['latency'], cpus: number): string {
  const kinds = ['minor', 'major', 'incremental'] as const;
  const per = l.gc.pauses.map(([name, p]) => ({
    name,
    count: kinds.reduce((n, kind) => n + p[kind].count, 0),
    ms: kinds.reduce((n, kind) => n + p[kind].ms, 0),
  }));
  const cycles = l.parleyResume.count;
  const gcMs = per.reduce((n, p) => n + p.ms, 0);
  const count = per.reduce((n, p) => n + p.count, 0);
  const share = Math.min(100, (100 * (gcMs + count * l.parleyResume.p50)) / l.gc.parleyMs);
  const busy = l.sched.filter(([, t]) => t.cpuMs > 0);
  const cpuMs = busy.reduce((n, [, t]) => n + t.cpuMs, 0);
  const waitMs = busy.reduce((n, [, t]) => n + t.waitMs, 0);
  const each = (ms: (t: SchedTimes) => number) => busy.map(([name, t]) => `${name} ${(ms(t) / cycles).toFixed(2)}`).join(', ');
  return (
    `Over its Parley rounds (${(l.gc.parleyMs / 1000).toFixed(1)} s, ${n0(cycles)} cycles) the processes used ${(cpuMs / cycles).toFixed(2)} ms of CPU per cycle ` +
    `(${each((t) => t.cpuMs)}), ${pct(cpuMs, l.gc.parleyMs * cpus)} of the ${cpus} cores, and spent ${(waitMs / cycles).toFixed(2)} ms per cycle runnable but waiting for a CPU ` +
    `(${each((t) => t.waitMs)}). The gateway and the worker paused for GC ${count} times (${per.map((p) => `${p.name} ${p.count}, ${p.ms.toFixed(0)} ms`).join('; ')}), ` +
    `${(gcMs / cycles).toFixed(2)} ms per cycle; at most ${share.toFixed(1)}% of the samples can overlap a pause. ` +
    (waitMs > gcMs
      ? 'Waiting for a CPU costs more than GC: each hop of a cycle is a wake-up of another process, and with every process of the deployment on these cores, a woken one often waits for a core.'
      : 'GC costs more than waiting for a CPU here.')
  );
}

function cycleNotes(r: Results, c: CycleResults): string[] {
  const one = c.throughput.oneWorker;
  const two = c.throughput.twoWorkers;
  const best = Math.max(one.perSec, two.perSec);
  const cpu = one.costs.cpuTotal;
  const budget = r.cpus;
  const l = c.latency;
  const flow = one.flow;
  const out: string[] = [];
  out.push(
    `- **Latency (1).** Sequential answer → resume is ${l.parleyResume.p50.toFixed(1)} ms p50 / ${l.parleyResume.p99.toFixed(1)} ms p99, ` +
      `${(l.parleyResume.p99 / l.bull.p99).toFixed(1)}× the bare BullMQ round trip at p99 (target ≤ 2×). It crosses three processes ` +
      '(client → gateway → worker → gateway → client) where the baseline crosses one; each hop is a BullMQ job or a pub/sub message. ' +
      tailNote(l, r.cpus),
  );
  out.push(
    `- **Throughput (2, 3) is CPU-bound.** One cycle costs ${cpu.toFixed(2)} ms of CPU summed over all processes ` +
      `(${one.costs.cpu.map(([role, v]) => `${role} ${v.toFixed(2)}`).join(', ')}), against ${c.throughput.mini.costs.cpuTotal.toFixed(2)} ms for the raw floor. ` +
      `With ${r.cpus} cores that caps this machine at about ${n0((r.cpus * 1000) / cpu)} cycles/s whatever the process layout, which is why a second ` +
      `worker process adds ${two.perSec >= one.perSec * 1.1 ? 'little' : 'nothing'} (${n0(one.perSec)} → ${n0(two.perSec)} /s). ` +
      `1,000 cycles/s here needs ≤ ${budget.toFixed(1)} ms of CPU per cycle: ${cpu > budget ? `about ${(cpu / budget).toFixed(1)}× less than now` : 'it is within that now'}. ` +
      `The floor itself runs at ${n0(c.throughput.miniSplit.perSec)} /s with its worker in a process of its own (${c.throughput.miniSplit.costs.cpuTotal.toFixed(2)} ms of CPU per cycle), ` +
      `${(c.throughput.miniSplit.perSec / c.throughput.mini.perSec).toFixed(2)}× its figure in one process; Parley's 1-worker figure is ${(one.perSec / c.throughput.miniSplit.perSec).toFixed(2)}× that split floor. ` +
      `In Parley's layout, its answers over socket.io through a server of its own, the floor runs at ${n0(c.throughput.miniSocket.perSec)} /s ` +
      `(${c.throughput.miniSocket.costs.cpuTotal.toFixed(2)} ms of CPU per cycle); the best Parley figure is ${(best / c.throughput.miniSocket.perSec).toFixed(2)}× that.` +
      (r.langgraph
        ? ` Against LangGraph the best Parley figure is ${(best / r.langgraph.memory.perSec).toFixed(2)}× MemorySaver (target 3×)${'perSec' in r.langgraph.postgres ? ` and ${(best / r.langgraph.postgres.perSec).toFixed(2)}× PostgresSaver, the durable LangGraph setup` : ''}.`
        : ''),
  );
  const total = one.costs.commands;
  out.push(
    `- **Commands (7).** A cycle executes ${total.toFixed(0)} Redis commands (${one.costs.scriptCalls.toFixed(1)} script calls), ` +
      `${(total / c.throughput.mini.costs.commands).toFixed(1)}× the raw floor.` +
      (flow
        ? ` It moves ${flow.runJobs.toFixed(2)} \`runs\` jobs (one per answer, plus the start) and ${flow.timerJobs.toFixed(2)} deadline timer jobs; at the ` +
          `${c.bullCosts.commands.toFixed(0)} commands of the bare BullMQ round trip (§1) that is about ${bullShare(c).toFixed(0)} commands of BullMQ's. ` +
          `It writes ${flow.events.toFixed(2)} events, each a \`SET\` of the tenant's seq, one \`XADD\` (tenant stream) and an \`XLEN\` (its cap) and an append to the run's seqs and one to its owner's, ` +
          `published ${cmd(c, 'publish').toFixed(2)} times (one \`PUBLISH\` per script, of all its events): ` +
          `${(flow.events * COMMANDS_PER_EVENT + cmd(c, 'publish')).toFixed(0)} commands. The other ~${(total - bullShare(c) - flow.events * COMMANDS_PER_EVENT - cmd(c, 'publish')).toFixed(0)} are Parley's ` +
          'scripts and reads (run hash, log, interaction, lease, the deadline filing).'
        : ''),
  );
  return out;
}

/** Each process's share of one core while deadlines were resolved: CPU per deadline × deadlines per second. */
function busy(d: DeadlineResults): Array<[string, number]> {
  return d.costs.cpu
    .filter(([, v]) => Number.isFinite(v))
    .map(([role, v]) => [role, (v * d.resolvedPerSec) / 1000] as [string, number])
    .sort((a, b) => b[1] - a[1]);
}

function deadlineNote(d: DeadlineResults): string {
  const due = d.interactions / (d.windowMs / 1000);
  const keeps = d.resolvedPerSec >= 0.98 * due ? 'Resolution keeps up with that rate' : 'Resolution falls behind the rate they fall due, so lateness grows through the window';
  const services = d.costs.cpu.filter(([role]) => role.startsWith('interactions')).map(([role, v]) => `${role} ${v.toFixed(2)}`);
  const load = busy(d).map(([role, f]) => `${role} ${pct(f, 1)}`);
  return (
    `- **Deadlines (5).** ${n0(d.interactions)} deadlines due over ${d.windowMs / 1000} s (${n0(due)} /s) were resolved at ${n0(d.resolvedPerSec)} /s through the tenant's ` +
    `one timer (${d.interactionServices} interaction-services), p99 lateness ${n0(d.lateness.p99)} ms (target ≤ 1,000 ms). ${keeps}; each deadline costs ${d.costs.cpuTotal.toFixed(2)} ms CPU ` +
    `and ${d.costs.commands.toFixed(0)} Redis commands (${d.costs.scriptCalls.toFixed(1)} script calls, BullMQ's included), the timer jobs and the sweeper's work over the window spread over them. ` +
    `CPU per deadline by interaction-service: ${services.join(', ')} (one tenant's timer is one job at a time, taken by whichever process is free). ` +
    `At the resolved rate, the share of one core each process was busy: ${load.join(', ')}.`
  );
}

/** When the deadlines fell behind: which process was busiest, and where Redis spent its time. */
function deadlineCuts(d: DeadlineResults): string[] {
  if (d.lateness.p99 <= 1000) {
    return [];
  }
  const [top] = busy(d);
  const time = d.costs.redisUsec
    .slice(0, 6)
    .map(([name, us]) => `\`${name}\` ${us.toFixed(0)} µs`)
    .join(', ');
  const lpos = d.costs.redisUsec.find(([name]) => name === 'lpos');
  return [
    `Deadlines (5): ${n0(d.resolvedPerSec)} resolved per second against ${n0(d.interactions / (d.windowMs / 1000))} due, p99 lateness ${n0(d.lateness.p99)} ms. ` +
      `The busiest process was ${top[0]} (${pct(top[1], 1)} of a core at that rate). Redis time per deadline: ${time} (a script's time includes the commands it ran). ` +
      'The tenant has one timer job at a time (the sweeper adds one only for an overdue earliest deadline), so one process sweeps while the other waits; sweeping due deadlines in parallel (several ' +
      'timer jobs over disjoint ranges, or more than one batch in flight) would use both, and whatever Redis spends per deadline bounds the rate whatever the layout.' +
      (lpos
        ? ` \`lpos\` (${lpos[1].toFixed(0)} µs per deadline) is BullMQ's \`getJobState\`, which the sweeper calls for each run left \`queued\` longer than two leases: ` +
          'it scans the `runs` wait list, which here holds every resume job the expiries enqueued (the loop-worker is stopped), so each sweep costs the number of queued runs times the length of that list.'
        : ''),
    '',
  ];
}

type Component = MemoryResults['components'][number];

/** A zset's members as measured, and what their length costs. */
function zsetNote(c: Component, m: MemoryResults): string {
  const z = c.sample;
  if (!z?.memberBytes) {
    return '';
  }
  const what = `${z.encoding}, members of ${z.memberBytes} B (${z.memberIsKey ? 'full interaction keys' : 'ids'})`;
  if (c.perRunKey && z.memberIsKey) {
    return (
      `${what}: past 64 bytes (a longer prefix or tenant name) a member takes the zset out of the listpack encoding, and a one-member zset then costs ` +
      `${b0(m.zsetProbe.long)} instead of ${b0(m.zsetProbe.short)} (measured). Ids instead of keys keep it small whatever the names.`
    );
  }
  return `${what}; over 128 members a zset is a skiplist, so each entry costs a node and a dict entry besides its member${z.memberIsKey ? ': ids instead of keys would shorten every entry' : ''}.`;
}

/** What each memory component is (from its measured sample key), and what would shrink it. */
function memoryNote(c: Component, m: MemoryResults): string {
  const fields = c.sample?.fields ?? [];
  switch (c.name) {
    case 'ix':
      return (
        `${fields.length} fields (${fields.join(', ')}).` +
        (fields.includes('data') ? ' `data` holds the interaction JSON as opened, prompt included; the same prompt is in the log\'s `question` entry and in the `interaction.opened` event.' : '') +
        (fields.includes('prompt') ? ' `prompt` repeats the prompt of the log\'s `question` entry and of the `interaction.opened` event.' : '')
      );
    case 'run': {
      const repeated = ['id', 'tenant'].filter((f) => fields.includes(f));
      return `${fields.length} fields (${fields.join(', ')})${repeated.length ? `; ${repeated.map((f) => `\`${f}\``).join(' and ')} repeat the key` : ''}; the times are epoch ms.`;
    }
    case 'tenant:events':
      return (
        `every event is stored once, here; the stream is trimmed to about \`PARLEY_EVENTS_MAXLEN\` (${n0(m.eventsMaxLen)}; it held ${n0(m.streamLength)}), so this share ` +
        `falls as the population grows, and so does what a replay finds (${n0(m.replay.gone)} of ${n0(m.replay.runs)} parked runs had no event left in it). ` +
        'An entry holds the run id, owner, time (ms), type and data as stream fields (the seq is its id, the tenant its key); `interaction.opened` ' +
        'carries the whole interaction, prompt included: referencing it by id would shrink those entries.'
      );
    case 'run:seqs':
      return (
        `a ${c.sample?.type ?? '?'} (${c.sample?.encoding ?? '?'}${c.sample?.size !== undefined ? `, ${c.sample.size} ${c.sample.type === 'string' ? 'bytes' : 'entries'}` : ''}): ` +
        'the seqs the run\'s replay reads the tenant stream through. Most of its cost is that of a key (name, dict entry, object header), not its content.'
      );
    case 'tenant:active-runs':
      return `filed only under a concurrent-run limit (the bench runs with the limits off): runs the gateway admitted that have not ended; ${zsetNote(c, m)}`;
    case 'tenant:runs':
      return `every run id, scored by creation; entries of expired runs leave only when a listing meets them; ${zsetNote(c, m)}`;
    default:
      return c.sample?.type === 'zset' ? zsetNote(c, m) : '';
  }
}

function memoryCuts(m: MemoryResults): string[] {
  const parts = m.components.filter((x) => x.name !== 'run:log' && x.bytes >= 0.01 * m.totalExclLog);
  const perRunKeys = m.components.filter((x) => x.perRunKey && x.name !== 'run:log').length;
  const over = m.totalExclLog - TARGET_BYTES;
  const out = [
    `Memory per parked run (4): ${b0(m.totalExclLog)} by MEMORY USAGE, ${over > 0 ? `${b0(over)} over` : `${b0(-over)} under`} the ${b0(TARGET_BYTES)} target; ` +
      `${perRunKeys} keys of its own besides the log, each paying its name and object header besides its content. The components of 1% or more:`,
    '',
  ];
  parts.forEach((p, i) => {
    const note = memoryNote(p, m);
    out.push(`${i + 1}. **${COMPONENT_LABELS[p.name] ?? p.name}** (${b0(p.bytes)}, ${pct(p.bytes, m.totalExclLog)})${note ? `: ${note}` : ''}`);
  });
  out.push('');
  return out;
}


/** What each process spends a cycle on, and what would cut it. */
function processNote(role: string, c: CycleResults): string {
  const flow = c.throughput.oneWorker.flow;
  if (role.startsWith('gateway')) {
    return (
      'the answer (validation against the interaction as `interaction.opened` announced it, the resolve script and the `runs` job sent behind it) and the fan-out: each published message ' +
      `(${cmd(c, 'publish').toFixed(1)} per cycle, one per script, holding its events: ${flow ? flow.events.toFixed(1) : 'n/a'} per cycle) is parsed, and each event is checked against every socket of the tenant and broadcast once. ` +
      'Fewer or smaller events cut it.'
    );
  }
  if (role.startsWith('worker')) {
    return (
      'its round trips in a cycle are the lease (which also returns the log entries added since the worker last held the run), ' +
      'one script for the model turn, its question and the park, and BullMQ\'s (taking the job, finishing it) ' +
      `(\`lrange\` ${cmd(c, 'lrange').toFixed(1)}, \`hgetall\` ${cmd(c, 'hgetall').toFixed(1)} executed per cycle, all processes); ` +
      'the conversation, rebuilt from the whole log on every pass, and the scripted model are most of the rest.'
    );
  }
  if (role === 'redis') {
    const usec = c.throughput.oneWorker.costs.redisUsec;
    const scripts = usec.filter(([name]) => name === 'evalsha' || name === 'eval').reduce((sum, [, v]) => sum + v, 0);
    const rest = usec.filter(([name]) => name !== 'evalsha' && name !== 'eval').reduce((sum, [, v]) => sum + v, 0);
    return (
      `${c.throughput.oneWorker.costs.commands.toFixed(0)} commands per cycle, about ${bullShare(c).toFixed(0)} of them BullMQ's (see Commands above). ` +
      `By \`INFO commandstats\`, Redis spent ${scripts.toFixed(0)} µs per cycle in script calls (${c.throughput.oneWorker.costs.scriptCalls.toFixed(1)}, Parley's and BullMQ's) and ` +
      `${rest.toFixed(0)} µs in all other commands, those the scripts ran included` +
      (scripts > 2 * rest ? ': most of its time is the scripts\' own Lua, so fewer and shorter scripts per cycle cut it more than fewer commands.' : '.')
    );
  }
  if (role === 'bench') {
    return 'the answering socket.io client of the bench, not Parley: it is the same in every layout.';
  }
  if (role.startsWith('interactions')) {
    return 'not on the cycle\'s path any more (the worker opens the interaction, the gateway resolves it); this is its queue workers\' polling and the sweeper.';
  }
  return '';
}

function cpuCuts(r: Results, c: CycleResults): string[] {
  const costs = c.throughput.oneWorker.costs;
  const budget = r.cpus;
  const out = [
    `CPU per cycle (2, 3, 7): ${costs.cpuTotal.toFixed(2)} ms over all processes with 1 loop-worker; 1,000 cycles/s on this machine needs ≤ ${budget.toFixed(1)} ms. By process, largest first:`,
    '',
  ];
  [...costs.cpu]
    .filter(([, v]) => Number.isFinite(v))
    .sort((a, b) => b[1] - a[1])
    .forEach(([role, v], i) => {
      const note = processNote(role, c);
      out.push(`${i + 1}. **${role}** (${v.toFixed(2)} ms, ${pct(v, costs.cpuTotal)})${note ? `: ${note}` : ''}`);
    });
  out.push('');
  return out;
}
