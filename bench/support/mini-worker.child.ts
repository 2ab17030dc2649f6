/**
 * The worker of the minimal park/resume (the floor of item 2) in a process of its own, run with the
 * harness's ts-hook: it takes the `mini` queue's jobs as baseline.ts's in-process worker does, and
 * tells the bench over IPC which runs finished. MINI_URL, MINI_PREFIX, MINI_CONCURRENCY.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { miniKeys, miniStep, withMiniPark, type MiniJob } from './baseline';

const url = process.env.MINI_URL!;
const prefix = process.env.MINI_PREFIX!;
const commands = withMiniPark(new Redis(url));
const connection = new Redis(url, { maxRetriesPerRequest: null });
const send = (message: unknown) => process.send!(message);

const worker = new Worker<MiniJob>(
  'mini',
  async (job) => {
    if (await miniStep(commands, prefix, job.data)) {
      send({ cmd: 'done', runId: job.data.runId });
    }
  },
  { connection, prefix: miniKeys(prefix).bull, concurrency: Number(process.env.MINI_CONCURRENCY) },
);
worker.on('error', (error) => send({ cmd: 'error', error: error.message }));
worker.waitUntilReady().then(
  () => send({ cmd: 'ready' }),
  (error: unknown) => send({ cmd: 'error', error: String(error) }),
);

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'close') {
    void worker
      .close()
      .finally(() => Promise.all([commands.quit(), connection.quit()]))
      .finally(() => process.exit(0));
  }
});
