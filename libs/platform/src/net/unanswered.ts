import type { Redis } from 'ioredis';

/**
 * A command was sent and its connection closed before the reply came: it may or may not have run.
 * The caller decides (read back, or let the step's own retry find what is there).
 */
export class ReplyLostError extends Error {
  constructor(command: string, why = 'the connection to Redis closed before it was answered') {
    super(`${command}: ${why}: it may have run`);
    this.name = 'ReplyLostError';
  }
}

/** ioredis' error for a command unanswered past its connection's `commandTimeout` (it still runs if Redis gets to it). */
export const COMMAND_TIMED_OUT = 'Command timed out';

/** An error after which the command may still have run, or run later: a lost reply, or a timeout. */
export function mayHaveRun(error: unknown): boolean {
  return error instanceof ReplyLostError || (error as Error | null)?.message === COMMAND_TIMED_OUT;
}

/** The parts of ioredis this reads: the commands sent but unanswered, and how it fails them. */
interface UnansweredItem {
  command: { name: string; reject(error: Error): void };
}
interface CommandQueue {
  length: number;
  shift(): UnansweredItem | undefined;
  push(item: UnansweredItem): number;
}
interface Internals {
  prevCommandQueue?: CommandQueue | null;
  commandQueue: CommandQueue;
  flushQueue(error: Error, options?: { offlineQueue?: boolean; commandQueue?: boolean }): void;
}

/** Scripts change state, and not all of them can tell a repeat; reads and plain commands can be sent again. */
const NOT_SENT_TWICE = new Set(['evalsha', 'eval']);

/** Fails the script calls of `queue` with a ReplyLostError; the rest stay, in order. */
function failScripts(queue: CommandQueue): void {
  for (let left = queue.length; left > 0; left--) {
    const item = queue.shift()!;
    if (NOT_SENT_TWICE.has(item.command.name)) {
      item.command.reject(new ReplyLostError(item.command.name));
    } else {
      queue.push(item);
    }
  }
}

/**
 * ioredis sends a command whose reply a closed connection lost once more: a reconnecting
 * connection on the next connection (`autoResendUnfulfilledCommands`), a Redis Cluster through its
 * own retry of a node's "Connection is closed." A script that ran before the connection dropped
 * would run twice: an answer recorded twice, a model turn appended twice. Here every script call
 * among them fails with a {@link ReplyLostError} instead; the rest are still sent again, in order.
 * (Turning the option off leaves their promises pending for ever.)
 * - A reconnecting connection keeps them aside when it closes and emits `close` a tick later,
 *   before it reconnects.
 * - A connection that does not reconnect (a cluster node's) fails them at once through
 *   `flushQueue`, with an error its cluster takes as a reason to send them again elsewhere.
 */
export function failUnansweredScripts(redis: Redis): void {
  const internals = redis as unknown as Internals;
  redis.on('close', () => {
    if (internals.prevCommandQueue) {
      failScripts(internals.prevCommandQueue);
    }
  });
  const flushQueue = internals.flushQueue.bind(redis);
  internals.flushQueue = (error, options) => {
    if (options?.commandQueue !== false) {
      failScripts(internals.commandQueue);
    }
    flushQueue(error, options);
  };
}
