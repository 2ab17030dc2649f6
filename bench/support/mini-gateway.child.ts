/**
 * The answer path of the minimal park/resume laid out as Parley's is, in a process of its own: a
 * socket.io server that reads the questions stream (XREAD BLOCK) and sends each question to its
 * clients, and takes their answers (flips the run's hash back, re-adds its job, acks). Run with the
 * harness's ts-hook. MINI_URL, MINI_PREFIX; tells the bench its port over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { MINI_JOB_OPTS, miniKeys, type MiniJob } from './baseline';

const url = process.env.MINI_URL!;
const keys = miniKeys(process.env.MINI_PREFIX!);
const commands = new Redis(url);
const reader = new Redis(url, { maxRetriesPerRequest: null });
const queue = new Queue<MiniJob>('mini', { connection: new Redis(url, { maxRetriesPerRequest: null }), prefix: keys.bull });
const http = createServer();
const server = new Server(http, { transports: ['websocket'] });
const send = (message: unknown) => process.send!(message);
let stopped = false;

interface Answer {
  runId: string;
  step: number;
  questions: number;
}

server.on('connection', (socket) => {
  socket.on('answer', (answer: Answer, ack: (ok: boolean) => void) => {
    void commands
      .hset(keys.run(answer.runId), 'status', 'queued')
      .then(() => queue.add('step', { runId: answer.runId, step: answer.step + 1, questions: answer.questions }, MINI_JOB_OPTS))
      .then(
        () => ack(true),
        (error: unknown) => {
          ack(false);
          send({ cmd: 'error', error: String(error) });
        },
      );
  });
});

async function relayQuestions(): Promise<void> {
  // The stream is this instance's own and starts empty: read it from the beginning.
  let last = '0-0';
  while (!stopped) {
    const reply = await reader.xread('COUNT', 1000, 'BLOCK', 100, 'STREAMS', keys.stream, last);
    for (const [, entries] of reply ?? []) {
      for (const [id, fields] of entries) {
        last = id;
        server.emit('question', { runId: fields[1], step: Number(fields[3]) });
      }
    }
  }
}

http.listen(0, '127.0.0.1', () => {
  const relaying = relayQuestions().catch((error: unknown) => !stopped && send({ cmd: 'error', error: String(error) }));
  send({ cmd: 'ready', port: (http.address() as AddressInfo).port });
  process.on('message', (message: { cmd: string }) => {
    if (message.cmd === 'close') {
      stopped = true;
      void relaying
        .then(() => new Promise((resolve) => void server.close(resolve)))
        .finally(() => Promise.all([queue.close(), commands.quit(), reader.quit()]))
        .finally(() => process.exit(0));
    }
  });
});
