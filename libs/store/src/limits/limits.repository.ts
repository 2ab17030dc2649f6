import { createHash } from 'node:crypto';
import { RateLimitedError } from '@parley/contracts';
import { zaddEach } from '../many-keys';
import type { StoreContext } from '../store.context';

/** The per-tenant limits of the gateway, and those of one user within a tenant (0 turns one off). */
export interface TenantLimits {
  runsPerMinute: number;
  /** Runs started for one owner. */
  userRunsPerMinute: number;
  concurrentRuns: number;
  /** Runs of one owner that have not ended. */
  userConcurrentRuns: number;
  openInteractions: number;
  sockets: number;
  messagesPerMinute: number;
  /** Messages sent by one user. */
  userMessagesPerMinute: number;
}

type RunLimits = Pick<TenantLimits, 'runsPerMinute' | 'userRunsPerMinute' | 'concurrentRuns' | 'userConcurrentRuns' | 'openInteractions'>;
type MessageLimits = Pick<TenantLimits, 'messagesPerMinute' | 'userMessagesPerMinute'>;

/** Length of the fixed windows of the per-minute limits. */
export const RATE_WINDOW_MS = 60_000;
/** What a refused start is told to wait when too many runs or interactions are open. */
export const BUSY_RETRY_AFTER_SECS = 30;
/** A socket's slot lasts this long unless its gateway refreshes it. */
export const SOCKET_SLOT_TTL_MS = 60_000;
/** How often a gateway refreshes the slots of its live sockets. */
export const SOCKET_REFRESH_MS = 20_000;
/** Most active-run ids checked (oldest first) when the tenant is at its concurrent-run limit. */
const PRUNE_BATCH = 200;
/** An active-run id without a run hash is only pruned after this long: its run may still be being created. */
const MISSING_GRACE_MS = 10_000;
/** An owner's active runs are kept this long after the owner's last start: a run still going after it is no longer counted. */
const OWNER_ACTIVE_KEEP_MS = 30 * 24 * 3600_000;

const retryAfterSecs = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Per-tenant limits kept in Redis, so every gateway enforces the same counts. Each check is one
 * script that writes nothing when it refuses; a refusal throws RateLimitedError (429).
 */
export class LimitsRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Admits a new run of the tenant for `owner` (runs per minute and runs not ended, of the tenant and
   * of the owner; open interactions) and, when admitted, counts it: its id joins the tenant's and the
   * owner's active runs. Throws RateLimitedError otherwise.
   */
  async admitRun(tenant: string, owner: string, runId: string, limits: RunLimits, now = this.ctx.clock.nowMs()): Promise<void> {
    const k = this.ctx.keys;
    const [outcome, value] = (await this.ctx.scripts.run(
      'admitRun',
      [k.rateWindow(tenant, 'runs'), k.activeRuns(tenant), k.openInteractions(tenant), k.userRateWindow(tenant, 'runs', owner), k.ownerActiveRuns(tenant, owner)],
      [
        ...[runId, now, limits.runsPerMinute, RATE_WINDOW_MS, limits.concurrentRuns, limits.openInteractions, k.runPrefix(tenant), PRUNE_BATCH, MISSING_GRACE_MS],
        ...[limits.userRunsPerMinute, limits.userConcurrentRuns, OWNER_ACTIVE_KEEP_MS],
      ],
    )) as [string, number?];
    switch (outcome) {
      case 'ok':
        return;
      case 'runs_per_minute': {
        const secs = retryAfterSecs(value ?? RATE_WINDOW_MS);
        throw new RateLimitedError('runs_per_minute', secs, `tenant ${tenant} has started ${limits.runsPerMinute} runs this minute; try again in ${secs} s`);
      }
      case 'user_runs_per_minute': {
        const secs = retryAfterSecs(value ?? RATE_WINDOW_MS);
        throw new RateLimitedError('user_runs_per_minute', secs, `${limits.userRunsPerMinute} runs were started for ${owner} this minute (limit per user); try again in ${secs} s`);
      }
      case 'user_concurrent_runs':
        throw new RateLimitedError('user_concurrent_runs', BUSY_RETRY_AFTER_SECS, `${owner} has ${value ?? '?'} runs that have not ended (limit per user ${limits.userConcurrentRuns})`);
      case 'concurrent_runs':
        // The tenant's own count is not told: whoever was refused may be a member, who sees only their runs.
        throw new RateLimitedError('concurrent_runs', BUSY_RETRY_AFTER_SECS, `tenant ${tenant} is at its limit of ${limits.concurrentRuns} runs that have not ended`);
      case 'open_interactions':
        throw new RateLimitedError('open_interactions', BUSY_RETRY_AFTER_SECS, `tenant ${tenant} is at its limit of ${limits.openInteractions} open interactions`);
      default:
        throw new Error(`admit-run answered ${String(outcome)}`);
    }
  }

  /** Takes back an admission whose run was not created after all (its active entry and its hits in the windows). */
  async releaseRun(tenant: string, owner: string, runId: string, limits: Pick<TenantLimits, 'runsPerMinute' | 'userRunsPerMinute'>): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.activeRuns(tenant), runId);
    await this.ctx.redis.zrem(this.ctx.keys.ownerActiveRuns(tenant, owner), runId);
    await this.refund(this.windows(tenant, 'runs', owner, limits.runsPerMinute, limits.userRunsPerMinute));
  }

  /**
   * Counts one message of the tenant sent by `sender` (null: a sender not limited on its own, a
   * service speaking for many users); throws RateLimitedError past either per-minute limit, having
   * counted nothing.
   */
  async hitMessage(tenant: string, sender: string | null, limits: MessageLimits): Promise<void> {
    const windows = this.windows(tenant, 'messages', sender, limits.messagesPerMinute, limits.userMessagesPerMinute);
    if (windows.length === 0) {
      return;
    }
    const refused = (await this.ctx.scripts.run('rateHit', windows.map(([key]) => key), [RATE_WINDOW_MS, ...windows.map(([, most]) => most)])) as 0 | [number, number];
    if (refused === 0) {
      return;
    }
    const [which, waitMs] = refused;
    const secs = retryAfterSecs(waitMs);
    if (windows[which - 1][2] === 'user') {
      throw new RateLimitedError('user_messages_per_minute', secs, `${sender ?? '?'} has sent ${limits.userMessagesPerMinute} messages this minute (limit per user); try again in ${secs} s`);
    }
    throw new RateLimitedError('messages_per_minute', secs, `tenant ${tenant} has sent ${limits.messagesPerMinute} messages this minute; try again in ${secs} s`);
  }

  /** Gives back a message's hits when the message was not kept (the run ended, its list was full). */
  async refundMessage(tenant: string, sender: string | null, limits: MessageLimits): Promise<void> {
    await this.refund(this.windows(tenant, 'messages', sender, limits.messagesPerMinute, limits.userMessagesPerMinute));
  }

  /** The window counters a hit of `name` counts on: the tenant's, and the user's (when named), each only under a limit. */
  private windows(tenant: string, name: string, user: string | null, tenantMost: number, userMost: number): Array<[string, number, 'tenant' | 'user']> {
    const windows: Array<[string, number, 'tenant' | 'user']> = [];
    if (tenantMost > 0) {
      windows.push([this.ctx.keys.rateWindow(tenant, name), tenantMost, 'tenant']);
    }
    if (user !== null && userMost > 0) {
      windows.push([this.ctx.keys.userRateWindow(tenant, name, user), userMost, 'user']);
    }
    return windows;
  }

  private async refund(windows: Array<[string, number, 'tenant' | 'user']>): Promise<void> {
    if (windows.length > 0) {
      await this.ctx.scripts.run('rateRefund', windows.map(([key]) => key), []);
    }
  }

  /**
   * Takes a connection slot of `user` for the socket `socket` ("<gateway>:<socket id>") and returns its
   * member (what refresh and release name); throws RateLimitedError when the tenant already has
   * `limits.tenant` live sockets across gateways, or the user `limits.user`. 0 = no limit, but the slot is still kept.
   */
  async acquireSocket(tenant: string, user: string, socket: string, limits: { tenant: number; user: number }, now = this.ctx.clock.nowMs()): Promise<string> {
    // The user as a digest: a user id with a newline in it cannot pass for another user's suffix.
    const userPart = `\n${createHash('sha1').update(user).digest('hex')}`;
    const member = `${socket}${userPart}`;
    const [acquired, live, which] = (await this.ctx.scripts.run(
      'acquireSocket',
      [this.ctx.keys.tenantSockets(tenant)],
      [member, now, now + SOCKET_SLOT_TTL_MS, limits.tenant > 0 ? limits.tenant : Number.MAX_SAFE_INTEGER, userPart, limits.user],
    )) as [number, number, string?];
    if (acquired === 1) {
      return member;
    }
    if (which === 'user') {
      throw new RateLimitedError('user_sockets', retryAfterSecs(SOCKET_REFRESH_MS), `${user} has ${live} open connections in tenant ${tenant} (limit ${limits.user} per user)`);
    }
    throw new RateLimitedError('sockets', retryAfterSecs(SOCKET_REFRESH_MS), `tenant ${tenant} has ${live} open connections (limit ${limits.tenant})`);
  }

  /** Keeps the slots of a gateway's live sockets (tenant → members) from expiring. */
  async refreshSockets(members: Map<string, string[]>, now = this.ctx.clock.nowMs()): Promise<void> {
    if (members.size === 0) {
      return;
    }
    const expiry = now + SOCKET_SLOT_TTL_MS;
    await zaddEach(
      this.ctx.redis,
      [...members].filter(([, list]) => list.length > 0).map(([tenant, list]) => ({ key: this.ctx.keys.tenantSockets(tenant), pairs: list.flatMap((member) => [expiry, member]) })),
    );
  }

  async releaseSocket(tenant: string, member: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.tenantSockets(tenant), member);
  }

  /** Live sockets of the tenant across gateways. */
  liveSockets(tenant: string, now = this.ctx.clock.nowMs()): Promise<number> {
    return this.ctx.redis.zcount(this.ctx.keys.tenantSockets(tenant), now, '+inf');
  }
}
