/**
 * Item 6: one event to every client. CLIENTS socket.io clients (in CHILD_PROCESSES processes of
 * their own, so the client side is not the bottleneck) on one gateway process, all subscribed to
 * the tenant; a run started over HTTP emits `run.created`, and each client records when it
 * arrives. Baseline: a bare socket.io server emitting one event to the same number of clients.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Harness } from '../../test/harness/harness';
import { QUICK, say, startHarness } from '../support/env';
import { questionerAgent } from '../support/parley';
import { summarize, type Latency } from '../support/stats';

export const CLIENTS = QUICK ? 500 : 5_000;
const CHILD_PROCESSES = 2;
const ROUNDS = QUICK ? 3 : 5;

export interface FanoutResults {
  clients: number;
  processes: number;
  rounds: number;
  parley: { delivery: Latency; max: number; lastPerRound: number[]; connectMs: number; missing: number };
  bare: { delivery: Latency; max: number; lastPerRound: number[]; missing: number };
}

interface Child {
  process: ChildProcess;
  request<T>(message: object, reply: string): Promise<T>;
}

function startChild(h: Harness, env: Record<string, string>): Promise<{ child: Child; ready: any }> {
  const proc = fork(join(__dirname, '..', 'support', 'fanout.child.ts'), [], {
    execArgv: ['-r', join(h.dir, 'ts-hook.js')],
    env: { ...process.env, PARLEY_HARNESS_ROOT: join(__dirname, '..', '..'), PARLEY_HARNESS_PARENT_PID: String(process.pid), ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const request = <T>(message: object, reply: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: any) => {
        if (m.cmd === reply) {
          proc.off('message', onMessage);
          resolve(m as T);
        } else if (m.cmd === 'error') {
          reject(new Error(m.error));
        }
      };
      proc.on('message', onMessage);
      if (Object.keys(message).length) {
        proc.send(message);
      }
    });
  const child: Child = { process: proc, request };
  return request<any>({}, 'ready').then((ready) => ({ child, ready }));
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode === null) {
    const exited = new Promise((resolve) => child.process.once('exit', resolve));
    child.process.send({ cmd: 'close' });
    await exited;
  }
}

async function rounds(children: Child[], trigger: () => Promise<{ key: string; t0: number }>): Promise<{ samples: number[]; lastPerRound: number[]; missing: number }> {
  const samples: number[] = [];
  const lastPerRound: number[] = [];
  let missing = 0;
  // Round -1 warms both ends up (first emit to each socket, code paths compiled) and is not counted.
  for (let r = -1; r < ROUNDS; r++) {
    const { key, t0 } = await trigger();
    const replies = await Promise.all(children.map((c) => c.request<{ times: number[] }>({ cmd: 'collect', key, timeoutMs: 30_000 }, 'collected')));
    const times = replies.flatMap((reply) => reply.times).map((t) => t - t0);
    if (r < 0) {
      continue;
    }
    missing += CLIENTS - times.length;
    samples.push(...times);
    lastPerRound.push(Math.max(...times));
  }
  return { samples, lastPerRound, missing };
}

export async function runFanout(redisUrl: string): Promise<FanoutResults> {
  const per = CLIENTS / CHILD_PROCESSES;
  const h = await startHarness(redisUrl, { name: 'bench-fanout', workers: 0, interactionServices: 0, agents: [questionerAgent('qone', 1)] });
  const children: Child[] = [];
  try {
    const parley = await h.diagnose(async () => {
      const t0 = performance.now();
      const started = await Promise.all(
        Array.from({ length: CHILD_PROCESSES }, () =>
          startChild(h, { FANOUT_MODE: 'clients', FANOUT_URL: h.gateway(1).url, FANOUT_COUNT: String(per), FANOUT_SUBSCRIBE: '1', FANOUT_TOKEN: h.token({ role: 'admin', sub: 'watcher' }) }),
        ),
      );
      const connectMs = performance.now() - t0;
      started.forEach(({ child, ready }) => {
        expect(ready.connected).toBe(per);
        children.push(child);
      });
      say(`6. ${CLIENTS} clients connected and subscribed in ${(connectMs / 1000).toFixed(1)} s`);
      const result = await rounds(children, async () => {
        const t = performance.timeOrigin + performance.now();
        const key = await h.startRun(1, 'qone');
        return { key, t0: t };
      });
      return { ...result, connectMs };
    });
    await Promise.all(children.splice(0).map(stopChild));
    await h.gateway(1).stop();

    const { child: server, ready } = await startChild(h, { FANOUT_MODE: 'server' });
    children.push(server);
    const url = `http://127.0.0.1:${ready.port}`;
    const started = await Promise.all(Array.from({ length: CHILD_PROCESSES }, () => startChild(h, { FANOUT_MODE: 'clients', FANOUT_URL: url, FANOUT_COUNT: String(per), FANOUT_SUBSCRIBE: '0' })));
    started.forEach(({ child }) => children.push(child));
    const clients = started.map(({ child }) => child);
    let n = 0;
    const event = { seq: 0, tenant: h.tenant, owner: 'alice', at: new Date().toISOString(), type: 'run.created', data: { agent: 'qone', task: 'do the thing', trigger: 'api' } };
    const bare = await rounds(clients, () => {
      const key = `bare-${++n}`;
      const t = performance.timeOrigin + performance.now();
      server.process.send({ cmd: 'emit', event: { ...event, runId: key, seq: n } });
      return Promise.resolve({ key, t0: t });
    });
    const out: FanoutResults = {
      clients: CLIENTS,
      processes: CHILD_PROCESSES,
      rounds: ROUNDS,
      parley: { delivery: summarize(parley.samples), max: Math.max(...parley.lastPerRound), lastPerRound: parley.lastPerRound, connectMs: parley.connectMs, missing: parley.missing },
      bare: { delivery: summarize(bare.samples), max: Math.max(...bare.lastPerRound), lastPerRound: bare.lastPerRound, missing: bare.missing },
    };
    expect(out.parley.missing).toBe(0);
    expect(out.bare.missing).toBe(0);
    say(`6. parley fan-out p50 ${out.parley.delivery.p50.toFixed(1)} ms p99 ${out.parley.delivery.p99.toFixed(1)} ms; bare socket.io p99 ${out.bare.delivery.p99.toFixed(1)} ms`);
    return out;
  } finally {
    await Promise.all(children.map(stopChild));
    await h.close();
  }
}
