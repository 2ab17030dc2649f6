import { createHash } from 'node:crypto';
import type { Actor, EventDraft, Run } from '@parley/contracts';
import { ReplyLostError } from '@parley/platform';
import type { Lease } from './run.types';
import { transactionReplies, type StoreContext } from './store.context';

export type PostMessageResult =
  | { status: 'accepted'; pending: number }
  | { status: 'ended'; runStatus: string }
  | { status: 'full'; pending: number }
  | { status: 'missing' }
  /** Sent with an idempotency key whose message was kept before: nothing more is. */
  | { status: 'replayed'; pending: number }
  /** Sent with an idempotency key already used for another text: nothing is kept. */
  | { status: 'conflict' };

/** Messages that may wait for one run at once; a client sending more is told to wait. */
export const MAX_PENDING_MESSAGES = 100;
export type TakeMessagesResult = { status: 'ok'; messageIds: string[] } | { status: 'lost' } | { status: 'cancelled' };

/** A message as it waits in the run's list. */
export interface PendingMessage {
  messageId: string;
  text: string;
  by: Actor;
  at: string;
}

/** Messages a person sends a run mid-task: kept in the run's list until the worker moves them into its log. */
export class RunMessageRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Keeps a person's message until the worker injects it; refused for a run that has ended or does not
   * exist. `keyed`: the message id was derived from an idempotency key, so the same message sent again
   * (while the run is kept) is kept once; then a reply lost with its connection is asked for again,
   * and that try finding the message kept means the lost one kept it.
   */
  async post(run: Pick<Run, 'tenant' | 'id' | 'owner'>, message: PendingMessage, keyed = false): Promise<PostMessageResult> {
    try {
      return await this.postOnce(run, message, keyed);
    } catch (error) {
      if (!keyed || !(error instanceof ReplyLostError)) {
        throw error;
      }
      const again = await this.postOnce(run, message, keyed);
      return again.status === 'replayed' ? { status: 'accepted', pending: again.pending } : again;
    }
  }

  /**
   * A keyed message already kept for the run (`replayed`, with the messages waiting now), its key used
   * for another text (`conflict`), or neither (null): one round trip, read before anything is counted.
   */
  async keptBefore(run: Pick<Run, 'tenant' | 'id'>, messageId: string, text: string): Promise<Extract<PostMessageResult, { status: 'replayed' | 'conflict' }> | null> {
    const k = this.ctx.keys;
    const multi = this.ctx.redis.multi().hget(k.runMessageKeys(run.tenant, run.id), messageId).llen(k.runMessages(run.tenant, run.id));
    const [recorded, pending] = (await transactionReplies(multi)) as [string | null, number];
    if (recorded === null) {
      return null;
    }
    return recorded === digestOf(text) ? { status: 'replayed', pending } : { status: 'conflict' };
  }

  private async postOnce(run: Pick<Run, 'tenant' | 'id' | 'owner'>, message: PendingMessage, keyed: boolean): Promise<PostMessageResult> {
    const { keys, args } = this.ctx.prologue(run.tenant, run.id, run.owner);
    const k = this.ctx.keys;
    const received: EventDraft = { type: 'message.received', data: { messageId: message.messageId, text: message.text, by: message.by } };
    const [status, detail] = (await this.ctx.scripts.run(
      'postMessage',
      [...keys, k.run(run.tenant, run.id), k.runMessages(run.tenant, run.id), k.runMessageKeys(run.tenant, run.id)],
      [...args, JSON.stringify(message), JSON.stringify(received.data), MAX_PENDING_MESSAGES, keyed ? digestOf(message.text) : '', message.messageId],
    )) as [string, (string | number)?];
    switch (status) {
      case 'accepted':
      case 'full':
      case 'replayed':
        return { status, pending: Number(detail) };
      case 'ended':
        return { status, runStatus: String(detail) };
      case 'conflict':
        return { status };
      default:
        return { status: 'missing' };
    }
  }

  /** Fenced: moves the run's pending messages into its log, between inference calls. */
  async take(lease: Lease): Promise<TakeMessagesResult> {
    const { keys, args } = this.ctx.prologue(lease.tenant, lease.runId, lease.owner);
    const k = this.ctx.keys;
    const [status, moved] = (await this.ctx.scripts.run(
      'takeMessages',
      [...keys, k.run(lease.tenant, lease.runId), k.runLog(lease.tenant, lease.runId), k.runMessages(lease.tenant, lease.runId)],
      [...args, lease.token],
    )) as [string, string?];
    if (status !== 'ok') {
      return { status: status as 'lost' | 'cancelled' };
    }
    return { status: 'ok', messageIds: (JSON.parse(moved ?? '[]') as PendingMessage[]).map((m) => m.messageId) };
  }
}

function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
