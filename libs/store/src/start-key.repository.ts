import type { StoreContext } from './store.context';

/**
 * How long a start may hold its key as starting: far longer than an admission and a create take, also
 * when each waits out a command timeout (5 s by default) and is sent again. A start that died holding
 * the key lets it go after this.
 */
export const STARTING_MS = 20_000;

export type StartKeyMark = { status: 'marked' } | { status: 'starting'; runId: string };

/**
 * Keyed starts in progress. A start with an idempotency key marks the key as starting (with the id it
 * will give its run) before it is admitted, so a repeat sent meanwhile knows to wait for that run
 * instead of being admitted itself: at a tenant's run limit it would be refused (the first start
 * holds the one place left) though it asks for a run that is being made.
 */
export class StartKeyRepository {
  constructor(private readonly ctx: StoreContext) {}

  async mark(tenant: string, caller: string, key: string, runId: string): Promise<StartKeyMark> {
    const holder = (await this.ctx.redis.call('SET', this.ctx.keys.startKeyPending(tenant, caller, key), runId, 'PX', String(STARTING_MS), 'NX', 'GET')) as string | null;
    // Its own id: this very SET, sent again after a dropped connection lost its first reply.
    return holder === null || holder === runId ? { status: 'marked' } : { status: 'starting', runId: holder };
  }

  /** Whether a start still holds the key as starting with `runId`. */
  async isStarting(tenant: string, caller: string, key: string, runId: string): Promise<boolean> {
    return (await this.ctx.redis.get(this.ctx.keys.startKeyPending(tenant, caller, key))) === runId;
  }

  async done(tenant: string, caller: string, key: string, runId: string): Promise<void> {
    await this.ctx.scripts.run('startKeyDone', [this.ctx.keys.startKeyPending(tenant, caller, key)], [runId]);
  }
}
