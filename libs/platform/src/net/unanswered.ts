import type { Redis } from 'ioredis';

/**
 * A command was sent and its connection closed before the reply came: it may or may not have run.
 * The caller decides (read back, or let the step's own retry find what is there).
 */
export class ReplyLostError extends Error {
  constructor(command: string) {
    super(`the connection to Redis closed before ${command} was answered: it may have run`);
    this.name = 'ReplyLostError';
  }
}

/** The part of ioredis this reads: the commands sent but unanswered when the connection closed. */
interface UnansweredItem {
  command: { name: string; reject(error: Error): void };
}
interface Unanswered {
  prevCommandQueue?: { length: number; shift(): UnansweredItem | undefined; push(item: UnansweredItem): number } | null;
}

/** Scripts change state, and not all of them can tell a repeat; reads and plain commands can be sent again. */
const NOT_SENT_TWICE = new Set(['evalsha', 'eval']);

/**
 * ioredis sends again, on the next connection, the commands whose replies a closed connection
 * lost (`autoResendUnfulfilledCommands`): a script that ran before the connection dropped would run
 * twice, an answer be recorded twice, a model turn appended twice. Here each script call among them
 * fails with a {@link ReplyLostError} instead; the rest are still sent again, in order. (Turning the
 * option off leaves their promises pending for ever.) ioredis keeps them aside when the connection
 * closes and emits `close` a tick later, before any reconnection.
 */
export function failUnansweredScriptsOnClose(redis: Redis): void {
  redis.on('close', () => {
    const unanswered = (redis as unknown as Unanswered).prevCommandQueue;
    for (let left = unanswered?.length ?? 0; unanswered && left > 0; left--) {
      const item = unanswered.shift()!;
      if (NOT_SENT_TWICE.has(item.command.name)) {
        item.command.reject(new ReplyLostError(item.command.name));
      } else {
        unanswered.push(item);
      }
    }
  });
}
