import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { io, type Socket } from 'socket.io-client';
import { compileHook } from '../../test/harness/harness';
import { deletePrefix, nowMs, sleep } from './stats';

export const MINI_JOB_OPTS = { removeOnComplete: true, removeOnFail: true } as const;

function connection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** Baseline 1: a bare BullMQ `queue.add` → worker `completed` round trip, one at a time. */
export class BullRoundTrip {
  readonly prefix = `bench${randomUUID().slice(0, 8)}`;
  private readonly queueConn: Redis;
  private readonly workerConn: Redis;
  private readonly admin: Redis;
  private readonly queue: Queue;
  private readonly worker: Worker;
  private readonly waiting = new Map<string, () => void>();

  constructor(private readonly url: string) {
    this.queueConn = connection(url);
    this.workerConn = connection(url);
    this.admin = new Redis(url);
    this.queue = new Queue('rt', { connection: this.queueConn, prefix: `${this.prefix}:bull` });
    this.worker = new Worker('rt', () => Promise.resolve('ok'), { connection: this.workerConn, prefix: `${this.prefix}:bull`, concurrency: 1 });
    this.worker.on('completed', (job: Job) => this.waiting.get(job.id ?? '')?.());
  }

  async ready(): Promise<void> {
    await Promise.all([this.queue.waitUntilReady(), this.worker.waitUntilReady()]);
  }

  /** `count` sequential round trips; returns each one's latency in ms. */
  async run(count: number): Promise<number[]> {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = nowMs();
      let done!: () => void;
      const completed = new Promise<void>((resolve) => (done = resolve));
      const job = await this.queue.add('rt', { i }, MINI_JOB_OPTS);
      this.waiting.set(job.id!, done);
      await completed;
      samples.push(nowMs() - start);
      this.waiting.delete(job.id!);
    }
    return samples;
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.queue.close();
    this.queueConn.disconnect();
    this.workerConn.disconnect();
    await deletePrefix(this.admin, this.prefix);
    await this.admin.quit();
  }
}

// One Lua script: park = flip the run's hash to waiting and XADD the question, atomically.
const PARK_LUA = `
redis.call('HSET', KEYS[1], 'status', 'waiting', 'step', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 100000, '*', 'run', ARGV[1], 'step', ARGV[2])
return 1`;

export interface MiniJob {
  runId: string;
  step: number;
  questions: number;
}

type MiniRedis = Redis & { miniPark: (...args: Array<string | number>) => Promise<unknown> };

/** `redis` with the park script defined on it. */
export function withMiniPark(redis: Redis): MiniRedis {
  redis.defineCommand('miniPark', { numberOfKeys: 2, lua: PARK_LUA });
  return redis as MiniRedis;
}

/** The keys of one minimal park/resume instance. */
export const miniKeys = (prefix: string) => ({ stream: `${prefix}:questions`, run: (runId: string) => `${prefix}:run:${runId}`, bull: `${prefix}:bull` });

/** The worker's part of one step: it parks the run on its next question, or finishes it (true). */
export async function miniStep(commands: MiniRedis, prefix: string, { runId, step, questions }: MiniJob): Promise<boolean> {
  const keys = miniKeys(prefix);
  if (step < questions) {
    await commands.miniPark(keys.run(runId), keys.stream, runId, step);
    return false;
  }
  await commands.hset(keys.run(runId), 'status', 'finished');
  return true;
}

/** A part of a minimal park/resume in a process of its own (mini-worker.child.ts, mini-gateway.child.ts), talking to the bench over IPC. */
class MiniChild {
  private readonly dir = mkdtempSync(join(tmpdir(), 'parley-mini-'));
  readonly child: ChildProcess;

  constructor(file: string, url: string, prefix: string, env: Record<string, string>, onMessage: (message: { cmd: string; runId?: string; error?: string }) => void) {
    this.child = fork(join(__dirname, file), [], {
      execArgv: ['-r', compileHook(this.dir)],
      env: { ...process.env, ...env, PARLEY_HARNESS_ROOT: join(__dirname, '..', '..'), PARLEY_HARNESS_PARENT_PID: String(process.pid), MINI_URL: url, MINI_PREFIX: prefix },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', onMessage);
  }

  /** Waits for the child's `ready`, and returns what it said with it. */
  async ready(): Promise<{ port?: number }> {
    const [message] = (await once(this.child, 'message')) as [{ cmd: string; error?: string; port?: number }];
    if (message.cmd !== 'ready') {
      throw new Error(`a mini park/resume process did not start: ${message.error ?? message.cmd}`);
    }
    return message;
  }

  async close(): Promise<void> {
    const exited = once(this.child, 'exit');
    this.child.send({ cmd: 'close' });
    await exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Baseline 2: the least a park/resume runtime can do with the same parts. A BullMQ job advances a
 * run one step; to ask, it runs one Lua script (HSET status=waiting + XADD to a questions stream)
 * and completes. An answerer reading that stream (XREAD BLOCK) flips the run back (HSET
 * status=queued) and re-adds the job. No log, no events, no fencing, no deadlines.
 * `workerProcess`: the worker runs in a child process, the answerer in this one (no resume latency
 * is then taken), as Parley's worker and answering client do. `overSocket` (with `workerProcess`):
 * Parley's layout and hops besides, where an answer crosses the process that reads the stream: a
 * socket.io server in a process of its own sends each question to this process's socket.io client,
 * whose answer it takes (mini-gateway.child.ts).
 */
export class MiniParkResume {
  readonly prefix = `bench${randomUUID().slice(0, 8)}`;
  readonly resumeMs: number[] = [];
  answered = 0;
  private readonly queueConn: Redis;
  /** The in-process worker's connection (none when the worker has a process of its own). */
  private readonly workerConn?: Redis;
  private readonly commands: MiniRedis;
  private readonly reader: Redis;
  private readonly queue: Queue<MiniJob>;
  private readonly worker: Worker<MiniJob> | MiniChild;
  private readonly gateway?: MiniChild;
  private client?: Socket;
  private readonly answeredAt = new Map<string, number>();
  private readonly done = new Set<string>();
  private readonly errors: unknown[] = [];
  private questions = 0;
  private answering = true;
  private stopped = false;
  private loop?: Promise<void>;

  constructor(url: string, concurrency: number, options: { workerProcess?: boolean; overSocket?: boolean } = {}) {
    this.queueConn = connection(url);
    this.commands = withMiniPark(new Redis(url));
    this.reader = connection(url);
    this.queue = new Queue<MiniJob>('mini', { connection: this.queueConn, prefix: miniKeys(this.prefix).bull });
    const onMessage = (message: { cmd: string; runId?: string; error?: string }): void => {
      if (message.cmd === 'done') {
        this.done.add(message.runId!);
      } else if (message.cmd === 'error') {
        this.errors.push(message.error);
      }
    };
    if (options.overSocket) {
      this.gateway = new MiniChild('mini-gateway.child.ts', url, this.prefix, {}, onMessage);
    }
    this.worker = options.workerProcess || options.overSocket
      ? new MiniChild('mini-worker.child.ts', url, this.prefix, { MINI_CONCURRENCY: String(concurrency) }, onMessage)
      : new Worker<MiniJob>('mini', (job) => this.process(job), { connection: (this.workerConn = connection(url)), prefix: miniKeys(this.prefix).bull, concurrency });
  }

  get stream(): string {
    return miniKeys(this.prefix).stream;
  }
  runKey(runId: string): string {
    return miniKeys(this.prefix).run(runId);
  }

  /** The processes of its own of the worker and the socket.io server, by name, when they have them. */
  get pids(): Record<string, number | undefined> {
    return {
      ...(this.worker instanceof MiniChild ? { 'mini-worker': this.worker.child.pid } : {}),
      ...(this.gateway ? { 'mini-gateway': this.gateway.child.pid } : {}),
    };
  }

  async ready(): Promise<void> {
    const [, , gateway] = await Promise.all([
      this.queue.waitUntilReady(),
      this.worker instanceof MiniChild ? this.worker.ready() : this.worker.waitUntilReady(),
      this.gateway?.ready(),
    ]);
    if (gateway?.port === undefined) {
      this.loop = this.read();
      return;
    }
    const client = (this.client = io(`http://127.0.0.1:${gateway.port}`, { transports: ['websocket'] }));
    client.on('question', ({ runId, step }: { runId: string; step: number }) => {
      if (this.answering) {
        this.answered++;
        client.emit('answer', { runId, step, questions: this.questions }, (ok: boolean) => ok || this.errors.push(`answer to ${runId} refused`));
      }
    });
    await new Promise<void>((resolve, reject) => client.once('connect', resolve).once('connect_error', reject));
  }

  /** Starts `runs` runs of `questions` questions each; resolves when all have finished. */
  async runAll(runs: number, questions: number, options: { answer?: boolean; timeoutMs?: number } = {}): Promise<string[]> {
    this.questions = questions;
    this.answering = options.answer ?? true;
    const ids = Array.from({ length: runs }, () => randomUUID());
    await Promise.all(
      ids.map(async (runId) => {
        await this.commands.hset(this.runKey(runId), 'status', 'queued', 'step', 0);
        await this.queue.add('step', { runId, step: 0, questions }, MINI_JOB_OPTS);
      }),
    );
    if (this.answering) {
      await this.waitFor(() => ids.every((id) => this.done.has(id)), options.timeoutMs ?? 120_000);
    }
    return ids;
  }

  /** Waits until `runIds` are all parked (status waiting). */
  async waitParked(runIds: string[], timeoutMs = 120_000): Promise<void> {
    await this.waitFor(async () => {
      const pipeline = this.commands.pipeline();
      runIds.forEach((id) => pipeline.hget(this.runKey(id), 'status'));
      const replies = (await pipeline.exec()) ?? [];
      return replies.every(([, status]) => status === 'waiting');
    }, timeoutMs);
  }

  reset(): void {
    this.resumeMs.length = 0;
    this.answered = 0;
  }

  private async process(job: Job<MiniJob>): Promise<void> {
    const { runId } = job.data;
    const answeredAt = this.answeredAt.get(runId);
    if (answeredAt !== undefined) {
      this.resumeMs.push(nowMs() - answeredAt);
      this.answeredAt.delete(runId);
    }
    if (await miniStep(this.commands, this.prefix, job.data)) {
      this.done.add(runId);
    }
  }

  private async read(): Promise<void> {
    // The stream is this instance's own and starts empty: read it from the beginning.
    let last = '0-0';
    while (!this.stopped) {
      let reply: Array<[string, Array<[string, string[]]>]> | null;
      try {
        reply = await this.reader.xread('COUNT', 1000, 'BLOCK', 100, 'STREAMS', this.stream, last);
      } catch (error) {
        if (!this.stopped) {
          this.errors.push(error);
        }
        return;
      }
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          last = id;
          if (this.answering) {
            void this.answer(fields[1], Number(fields[3])).catch((error: unknown) => this.errors.push(error));
          }
        }
      }
    }
  }

  private async answer(runId: string, step: number): Promise<void> {
    if (!(this.worker instanceof MiniChild)) {
      this.answeredAt.set(runId, nowMs());
    }
    this.answered++;
    await this.commands.hset(this.runKey(runId), 'status', 'queued');
    await this.queue.add('step', { runId, step: step + 1, questions: this.questions }, MINI_JOB_OPTS);
  }

  private async waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (this.errors.length > 0) {
        throw new Error(`mini park/resume failed: ${String(this.errors[0])}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`mini park/resume did not get there within ${timeoutMs} ms`);
      }
      await sleep(5);
    }
  }

  /** Deletes this baseline's keys under its prefix; the instance stays usable for another round. */
  async clearKeys(): Promise<void> {
    await deletePrefix(this.commands, `${this.prefix}:run`);
    await this.commands.del(this.stream);
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.client?.close();
    await this.gateway?.close();
    await this.worker.close();
    await this.queue.close();
    this.queueConn.disconnect();
    this.workerConn?.disconnect();
    this.reader.disconnect();
    await deletePrefix(this.commands, this.prefix);
    await this.commands.quit();
  }
}
