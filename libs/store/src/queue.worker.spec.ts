import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Queue, type Job, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { PinoNestLogger, loadConfig } from '@parley/platform';
import { QueueProcessor, QueueWorker, takeoverOptions } from './queue.worker';
import { deleteKeys } from '../../../test/support/delete-keys';
import { startRedisServer, type RedisServer } from '../../../test/support/redis-server';
import { waitFor } from '../../../test/support/wait-for';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'lost-lock';

/** A processor whose job runs until the test opens its gate. */
class GatedProcessor extends QueueProcessor<{ n: number }> {
  jobId?: string;
  readonly errors: Error[] = [];
  renewalFailures = 0;
  worker?: Worker<{ n: number }>;
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  constructor(prefix: string, redisUrl = REDIS_URL) {
    super(QUEUE, loadConfig({}, { redisUrl, leaseMs: 1000, shutdownGraceMs: 500 }), { prefix, concurrency: 1 });
  }

  async process(job: Job<{ n: number }>): Promise<string> {
    this.jobId = job.id;
    await this.gate;
    return 'done';
  }

  finish(): void {
    this.open();
  }

  protected override watch(worker: Worker<{ n: number }>): void {
    this.worker = worker;
    worker.on('error', (error) => this.errors.push(error));
    worker.on('lockRenewalFailed', () => this.renewalFailures++);
  }
}

describe("a queue worker whose job's lock another worker took", () => {
  const prefix = `qw-${randomUUID()}`;
  const lines: Array<Record<string, unknown>> = [];
  let redis: Redis;
  let queue: Queue;
  let processor: GatedProcessor;

  beforeAll(() => {
    Logger.overrideLogger(new PinoNestLogger(pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) })));
    redis = new Redis(REDIS_URL);
    queue = new Queue(QUEUE, { connection: redis, prefix });
    processor = new GatedProcessor(prefix);
    processor.onApplicationBootstrap();
  });

  afterAll(async () => {
    processor.beforeApplicationShutdown();
    await processor.onApplicationShutdown();
    await queue.close();
    await deleteKeys(redis, `${prefix}:*`);
    redis.disconnect();
  });

  it('logs the takeover once at warn, naming the job, and none of BullMQ\'s errors about it at error', async () => {
    // Attempts left: the failed move is retried as a delayed job, as a run job's is.
    await queue.add('step', { n: 1 }, { attempts: 3, backoff: { type: 'fixed', delay: 1000 } });
    const jobId = (await waitFor(() => processor.jobId, { message: 'the job to run' }))!;
    // What the taking worker's moveToActive does once the stalled job is back in the queue.
    await redis.set(`${prefix}:${QUEUE}:${jobId}:lock`, 'token-of-another-worker', 'PX', 60_000);
    await waitFor(() => processor.renewalFailures > 0, { message: 'a failed lock renewal' });
    processor.finish();
    // BullMQ's last word on the job: the retry its failed completion asks for, refused too.
    await waitFor(() => processor.errors.some((error) => error.message.includes('moveToDelayed')), { message: 'the refused retry' });

    expect(processor.errors.map((error) => error.message)).toEqual(
      expect.arrayContaining([`could not renew lock for job ${jobId}`, expect.stringMatching(/moveToFinished/), expect.stringMatching(/moveToDelayed/)]),
    );
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
    const aboutJob = lines.filter((line) => line.jobId === jobId);
    expect(aboutJob.filter((line) => line.level === 40)).toEqual([
      expect.objectContaining({ context: 'GatedProcessor', msg: `${QUEUE} job taken over by another worker: this worker lost its lock`, err: `could not renew lock for job ${jobId}` }),
    ]);
    expect(aboutJob.filter((line) => line.level === 20)).toHaveLength(processor.errors.length - 1);
  });

  it('still logs any other worker error at error', () => {
    processor.worker!.emit('error', new Error('ERR Error running script (call to f_1): out of memory'));
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([
      expect.objectContaining({ context: 'GatedProcessor', msg: 'worker error: ERR Error running script (call to f_1): out of memory' }),
    ]);
  });
});

describe('a queue worker whose Redis went away', () => {
  const lines: Array<Record<string, unknown>> = [];
  let server: RedisServer;
  let processor: GatedProcessor;

  beforeAll(async () => {
    Logger.overrideLogger(new PinoNestLogger(pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) })));
    server = await startRedisServer();
    processor = new GatedProcessor(`qw-${randomUUID()}`, server.url);
    processor.onApplicationBootstrap();
    await processor.worker!.waitUntilReady();
  });

  afterAll(async () => {
    processor.beforeApplicationShutdown();
    await processor.onApplicationShutdown();
    await server.destroy();
  });

  it('logs the commands it fails meanwhile at debug, not at error: the connection reports the outage', async () => {
    await server.kill9();
    await waitFor(() => processor.errors.length >= 3, { timeoutMs: 20_000, message: 'the worker to fail commands' });
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
    expect(lines.filter((line) => line.level === 20 && String(line.msg).startsWith('worker error while Redis is away: '))).not.toHaveLength(0);
  });
});

interface BullWorkerInsides {
  lockManager: { isRunning(): boolean };
  backend: { blockingConnection: { _client: { status: string } } };
}

describe('a queue worker whose close BullMQ never finishes', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedisServer();
  });

  afterAll(async () => {
    await server.destroy();
  });

  it('stops renewing locks once it gives the close up: no timer of it keeps the process alive', async () => {
    const queueWorker = new QueueWorker<unknown>(server.url, QUEUE, () => Promise.resolve(), { prefix: `qw-${randomUUID()}`, ...takeoverOptions(1000) });
    queueWorker.worker.on('error', () => undefined);
    // BullMQ's insides: its lock renewal, and the blocking connection it opened for the worker.
    const { lockManager, backend } = queueWorker.worker as unknown as BullWorkerInsides;
    await waitFor(() => queueWorker.connected && lockManager.isRunning(), { message: 'the worker to run' });
    await server.kill9();
    // Between two reconnection attempts of that connection, BullMQ's close waits for its 'end',
    // which ioredis never emits, and would stop the lock renewal after it.
    await waitFor(() => backend.blockingConnection._client.status === 'reconnecting', { message: 'the blocking connection to wait to reconnect' });
    expect(await queueWorker.finishClose(() => Date.now())).toBe('abandoned');
    expect(lockManager.isRunning()).toBe(false);
  });
});
