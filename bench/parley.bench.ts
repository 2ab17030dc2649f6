/**
 * `npm run bench`: issue 6's seven figures, each next to its baseline in the same run, and the
 * other hot paths. The items live in bench/items/; this file runs them in order on the bench's own
 * Redis and writes docs/benchmarks.md (not with BENCH_QUICK=1). Assertions are sanity checks
 * only (every run finished, every question answered), never timing thresholds.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runCycles } from './items/cycles';
import { runFanout } from './items/fanout';
import { runApprovals, runCommandLine, runGrants } from './items/hotpaths';
import { runLangGraph } from './items/langgraph';
import { runParked } from './items/parked';
import { analysis } from './support/analysis';
import { QUICK, benchRedis, say } from './support/env';
import { commandMeter } from './support/meter';
import { machine, renderMarkdown, writeReport, type Results } from './support/report';

commandMeter.install();

const started = Date.now();
const results: Results = { date: new Date().toISOString().slice(0, 10), ...machine(), redisVersion: '', seconds: 0, loads: [] };

describe('Parley benchmarks (issue 6)', () => {
  let redis: Awaited<ReturnType<typeof benchRedis>>;
  let admin: Redis;

  beforeAll(async () => {
    redis = await benchRedis();
    admin = new Redis(redis.url);
    const info = await admin.info('server');
    results.redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    say(`node ${results.node}, ${results.cpus} cpus, redis ${results.redisVersion} at ${redis.url}${QUICK ? ' (quick mode)' : ''}`);
  });

  beforeEach(() => {
    results.loads.push(loadavg()[0]);
  });

  afterAll(async () => {
    results.loads.push(loadavg()[0]);
    await admin.quit();
    await redis.close();
    results.seconds = (Date.now() - started) / 1000;
    const notes = analysis(results);
    process.stdout.write(`\n${renderMarkdown(results, notes)}\n`);
    const complete = [results.cycles, results.langgraph, results.approvals, results.grants, results.commandLine, results.fanout, results.memory].every(Boolean);
    if (!QUICK && !complete) {
      say('not every item finished: docs/benchmarks.md left as it was');
    } else if (!QUICK) {
      writeReport(join(__dirname, '..', 'docs', 'benchmarks.md'), results, notes);
      say('wrote docs/benchmarks.md');
    }
    say(`took ${results.seconds.toFixed(0)} s`);
  });

  it('1, 2, 7: answer → resume, cycles per second (1 and 2 workers), CPU and commands per cycle', async () => {
    results.cycles = await runCycles(redis.url, redis.pid, admin);
  });

  it('3: the same cycle in LangGraph JS (MemorySaver, PostgresSaver)', async () => {
    results.langgraph = await runLangGraph();
  });

  it('hot path: approve → resume cycles', async () => {
    results.approvals = await runApprovals(redis.url);
  });

  it('hot path: tool calls covered by a run grant', async () => {
    results.grants = await runGrants(redis.url);
  });

  it('hot path: command-line analysis (pure CPU)', () => {
    results.commandLine = runCommandLine();
  });

  it('6: fan-out of one event to many socket.io clients', async () => {
    results.fanout = await runFanout(redis.url);
  });

  it('4, 5: Redis bytes per parked run, deadline lateness', async () => {
    const parked = await runParked(redis.url, redis.pid, admin);
    results.memory = parked.memory;
    results.deadlines = parked.deadlines;
  });
});
