import { COMPONENT_LABELS } from '../items/parked';
import type { Results } from './report';

const n0 = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const b0 = (v: number) => `${n0(v)} B`;

/** The notes under the summary table: what is not met, where the time and the bytes go, what to try first. */
export function analysis(r: Results): string[] {
  const out: string[] = ['## What the figures say', ''];
  const c = r.cycles;
  const m = r.memory;
  const d = r.deadlines;
  const f = r.fanout;
  if (c) {
    const one = c.throughput.oneWorker;
    const two = c.throughput.twoWorkers;
    const best = Math.max(one.perSec, two.perSec);
    const cpu = one.costs.cpuTotal;
    const ceiling = (r.cpus * 1000) / cpu;
    const l = c.latency;
    out.push(
      `- **Latency (1).** Sequential answer → resume is ${l.parleyResume.p50.toFixed(1)} ms p50 / ${l.parleyResume.p99.toFixed(1)} ms p99, ` +
        `${(l.parleyResume.p99 / l.bull.p99).toFixed(1)}× the bare BullMQ round trip at p99 (target ≤ 2×). It crosses three processes ` +
        '(client → gateway → worker → gateway → client) where the baseline crosses one; each hop is a BullMQ job or a pub/sub message.',
    );
    out.push(
      `- **Throughput (2, 3) is CPU-bound.** One cycle costs ${cpu.toFixed(2)} ms of CPU summed over all processes ` +
        `(${one.costs.cpu.map(([role, v]) => `${role} ${v.toFixed(2)}`).join(', ')}), against ${c.throughput.mini.costs.cpuTotal.toFixed(2)} ms for the raw floor. ` +
        `With ${r.cpus} cores that caps this machine at about ${n0(ceiling)} cycles/s whatever the process layout, which is why a second ` +
        `worker process adds ${two.perSec >= one.perSec * 1.1 ? 'little' : 'nothing'} (${n0(one.perSec)} → ${n0(two.perSec)} /s). ` +
        `1,000 cycles/s here needs ≤ ${((r.cpus * 1000) / 1000).toFixed(1)} ms of CPU per cycle: about ${(cpu / 2).toFixed(1)}× less than now.` +
        (r.langgraph ? ` Against LangGraph the best Parley figure is ${(best / r.langgraph.memory.perSec).toFixed(2)}× MemorySaver (target 3×)${'perSec' in r.langgraph.postgres ? ` and ${(best / r.langgraph.postgres.perSec).toFixed(2)}× PostgresSaver, the durable LangGraph setup` : ''}.` : ''),
    );
    out.push(
      `- **Commands (7).** A cycle executes ${one.costs.commands.toFixed(0)} Redis commands (${one.costs.scriptCalls.toFixed(1)} script calls), ` +
        `${(one.costs.commands / c.throughput.mini.costs.commands).toFixed(1)}× the raw floor. Most are BullMQ's: each cycle moves three jobs ` +
        '(`runs`, `interaction-requests`, and a `deadlines` job that is added and then removed by the answer), and each job costs an add, a ' +
        'move to active, a move to finished and their `events` stream entries. Parley\'s own events cost two `XADD`s (tenant and run stream) and a `PUBLISH` each.',
    );
  }
  if (m) {
    const parts = m.components.filter((x) => x.name !== 'run:log').slice(0, 5);
    out.push(
      `- **Memory (4).** ${b0(m.usedMemoryExclLog)} per parked run by \`used_memory\` (${b0(m.totalExclLog)} by MEMORY USAGE), ` +
        `${(m.usedMemoryExclLog / m.naive.usedMemory).toFixed(1)}× the naive design and ${(m.usedMemoryExclLog / 1536).toFixed(1)}× the 1.5 KB target. ` +
        `The largest parts: ${parts.map((p) => `${COMPONENT_LABELS[p.name] ?? p.name} ${b0(p.bytes)}`).join('; ')}.`,
    );
  }
  if (d) {
    const due = d.interactions / (d.windowMs / 1000);
    out.push(
      `- **Deadlines (5).** ${n0(d.interactions)} deadlines due over ${d.windowMs / 1000} s (${n0(due)} /s) were resolved at ${n0(d.resolvedPerSec)} /s by ` +
        `${d.interactionServices} interaction-services, p99 lateness ${n0(d.lateness.p99)} ms. ` +
        (d.lateness.p99 > 1000
          ? 'Resolution falls behind the rate they fall due, so lateness grows through the window: the cost is per deadline ' +
            `(${d.costs.cpuTotal.toFixed(2)} ms CPU and ${d.costs.commands.toFixed(0)} commands each: a BullMQ job, an interaction read, the resolve script, a resume job).`
          : `Resolution keeps up with that rate; each costs ${d.costs.cpuTotal.toFixed(2)} ms CPU and ${d.costs.commands.toFixed(0)} Redis commands (a BullMQ job, an interaction read, the resolve script, a resume job).`),
    );
  }
  if (f) {
    out.push(
      `- **Fan-out (6).** One event reaches ${n0(f.clients)} clients at p99 ${f.parley.delivery.p99.toFixed(0)} ms (slowest ${f.parley.max.toFixed(0)} ms), ` +
        `${(f.parley.delivery.p99 / f.bare.delivery.p99).toFixed(2)}× a bare socket.io server's \`nsp.emit\`. The gateway checks each event against each ` +
        'socket\'s subscription (sequence, run, owner) and calls `socket.emit` per socket, so the packet is encoded once per socket; a ' +
        'room broadcast (rooms per tenant and per owner) encodes it once.',
    );
  }
  out.push('');
  out.push('## Where to cut, ranked by expected gain');
  out.push('');
  out.push('Measured, not tried: these are suggestions for whoever owns the store and the services (the bench changes no product code).');
  out.push('');
  out.push('Memory per parked run (4):');
  out.push('');
  const comp = (name: string) => m?.components.find((x) => x.name === name)?.bytes ?? Number.NaN;
  out.push(
    `1. **The per-run event stream** (${b0(comp('run:events'))}): Redis 7 preallocates a stream's newest listpack node at ` +
      '`stream-node-max-bytes` (4,096 B by default), so every stream costs about 4.7 KB from its first entry on (one 5-byte entry: ' +
      '4,736 B by MEMORY USAGE here), and every event is stored twice, in the tenant stream and in `run:<id>:events`. Serving a run\'s ' +
      'replay from the tenant stream (the gateway filters by run already), or deleting the run stream when the run parks, saves nearly ' +
      'all of it; a smaller `stream-node-max-bytes` (a server setting, for every stream) would cut the preallocation without code changes.',
  );
  out.push(
    `2. **One delayed BullMQ job per open interaction** (${b0(comp('bull:deadlines:job') + comp('bull:deadlines:delayed'))} with its \`delayed\` entry): a ` +
      'tenant deadline zset (score = deadline, member = interaction id) swept by one repeatable job or a blocking loop would cost one ' +
      'zset entry (~60–150 B) and lets an answer skip the job removal (fewer commands per cycle too, and a sweep can expire many ' +
      'interactions per round trip, which is what item 5 needs).',
  );
  out.push(
    `3. **Event payloads** (the tenant stream share, ${b0(comp('tenant:events'))} per run, bounded by \`PARLEY_EVENTS_MAXLEN\`): \`interaction.opened\` carries the whole ` +
      'interaction (prompt included), which is also in the interaction hash and the log. Referencing it by id would shrink both streams.',
  );
  out.push(
    `4. **Index members are full key names** (\`run:<id>:ix\` ${b0(comp('run:ix'))}, \`open-ix\` ${b0(comp('tenant:open-ix'))} per run): with a longer prefix or tenant name a ` +
      'member passes 64 bytes and Redis switches the zset from a listpack to a skiplist (a one-member `run:<id>:ix` then costs ~1 KB: it did ' +
      'in a trial with the harness\'s longer prefix). Storing interaction ids instead of keys keeps them small whatever the names.',
  );
  out.push(
    `5. **The interaction hash** (${b0(comp('ix'))}) keeps the interaction as one JSON \`data\` field, prompt included, next to the same prompt in the log.`,
  );
  out.push('');
  out.push('CPU and commands per cycle (2, 3, 7), and deadline throughput (5):');
  out.push('');
  out.push(
    '1. **Fold the `interaction-requests` hop into the park step**: open the interaction in the same Lua script that parks the run ' +
      '(same slot: tenant hash tag) instead of a BullMQ job to the interaction-service. One job lifecycle (~40 commands, one process ' +
      'hop and its CPU) less per cycle, and `interaction.opened` reaches the client sooner.',
  );
  out.push('2. **Deadlines as a zset sweep** (memory item 2): no delayed job added per question and no removal per answer; expiries batched.');
  out.push(
    '3. **One event copy, not two**: dropping the per-run stream halves the `XADD`s per event; the gateway parses each published ' +
      'event once per message, so fewer or smaller events also cut gateway CPU.',
  );
  out.push(
    '4. **Fewer reads per resume**: the worker reads the run hash and the whole log (`HGETALL`, `LRANGE`) before acquiring the lease and ' +
      'again in the loop; the acquire script could return what the step needs.',
  );
  out.push(
    '5. **Fan-out by room** (item 6): join each socket to a tenant room (and an owner room for members) and broadcast once per ' +
      'event instead of `socket.emit` per socket; the per-socket sequence check can stay for replays.',
  );
  out.push('');
  return out;
}
