import type { Actor, EventDraft, InteractionRequest, LogEntry, Run, WaitReason } from '@parley/contracts';
import { interactionFields } from './interaction.hash';
import { NO_DEADLINE_SCORE, interactionFor } from './interaction.repository';
import { listRuns, type RunListFilter, type RunPage } from './run.listing';
import { toRun } from './run.hash';
import { eventArgs, type StoreContext } from './store.context';
import { LeaseLostError } from './lease.errors';
import type { AcquireResult, AppendResult, CancelResult, EndResult, Lease, NewRun, ParentWake, ParkResult, RenewResult, RunEnding } from './run.types';

export class RunRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * `versionGone`: the tenant agent's version was dropped meanwhile (replaced and unused); `keyTaken`:
   * the start's idempotency key names another run that is still kept. Either way nothing was written.
   */
  async create(run: NewRun): Promise<{ created: true; wake: number } | { created: false; versionGone?: true; keyTaken?: true }> {
    await this.ctx.noteTenant(run.tenant);
    const { keys, args } = this.ctx.prologue(run.tenant, run.runId, run.owner);
    const k = this.ctx.keys;
    const now = args[3];
    const task: LogEntry = { type: 'task', text: run.task, at: now };
    const created: EventDraft = { type: 'run.created', data: { agent: run.agent, task: run.task, trigger: run.trigger } };
    const stage: LogEntry | null = run.stage ? { type: 'stage', from: null, to: run.stage, at: now } : null;
    const wake = (await this.ctx.scripts.run(
      'createRun',
      [
        ...keys,
        k.run(run.tenant, run.runId),
        k.runIndex(run.tenant),
        k.runLog(run.tenant, run.runId),
        run.parentRunId ? k.runChildren(run.tenant, run.parentRunId) : k.runChildren(run.tenant, run.runId),
        k.run(run.tenant, run.parentRunId ?? run.runId),
        run.startKey ? k.startKey(run.tenant, run.startKey.caller, run.startKey.key) : k.run(run.tenant, run.runId),
      ],
      [
        ...args,
        run.agent,
        run.task,
        run.trigger,
        JSON.stringify(task),
        JSON.stringify(created.data),
        run.unattended ? '1' : '0',
        run.parentRunId ?? '',
        run.stage ?? '',
        stage ? JSON.stringify(stage) : '',
        run.parentLeaseToken ?? '',
        run.agentDigest ?? '',
        run.agentDigest ? k.agentVersion(run.tenant, run.agentDigest) : '',
        run.agentDigest ? k.agentVersionRuns(run.tenant, run.agentDigest) : '',
        k.runPrefix(run.tenant),
        run.startKey ? '1' : '0',
      ],
    )) as number;
    if (wake === -2) {
      throw new LeaseLostError(run.parentRunId ?? run.runId);
    }
    if (wake === -3) {
      return { created: false, versionGone: true };
    }
    if (wake === -4) {
      return { created: false, keyTaken: true };
    }
    return wake < 0 ? { created: false } : { created: true, wake };
  }

  /** The run a start with this idempotency key (by this caller) made, while it is kept. */
  async byStartKey(tenant: string, caller: string, key: string): Promise<Run | null> {
    const runId = await this.ctx.redis.get(this.ctx.keys.startKey(tenant, caller, key));
    return runId === null ? null : this.get(tenant, runId);
  }

  async get(tenant: string, runId: string): Promise<Run | null> {
    const hash = await this.ctx.redis.hgetall(this.ctx.keys.run(tenant, runId));
    return hash.status ? toRun(tenant, runId, hash) : null;
  }

  /** The agent a run uses (and, for a tenant agent, the version it keeps), without reading the whole run. */
  async agentOf(tenant: string, runId: string): Promise<Pick<Run, 'tenant' | 'agent' | 'agentDigest'> | null> {
    const [agent, agentDigest] = await this.ctx.redis.hmget(this.ctx.keys.run(tenant, runId), 'agent', 'agentDigest');
    return agent === null ? null : { tenant, agent, ...(agentDigest ? { agentDigest } : {}) };
  }

  /** Newest first, from `after` (the `next` of the page before) on: see {@link listRuns}. */
  list(tenant: string, filter: RunListFilter): Promise<RunPage> {
    return listRuns(this.ctx, tenant, filter);
  }

  async readLog(tenant: string, runId: string): Promise<LogEntry[]> {
    return (await this.readLogLines(tenant, runId, 0)).map((line) => JSON.parse(line) as LogEntry);
  }

  /** The log's entries as stored (JSON), from entry `from` on. */
  readLogLines(tenant: string, runId: string, from: number): Promise<string[]> {
    return this.ctx.redis.lrange(this.ctx.keys.runLog(tenant, runId), from, -1);
  }

  /**
   * `owner` '' = the run's own (read by the script). `worker` names the caller in the run's `worker`
   * field, for operators and tests. `logFrom`: the log is read from that entry on in the same step
   * (-1: not read). Neither costs a round trip. `jobWake`: the wake number of the job acquiring (a
   * waiting run's counter is raised to it, see acquire-lease.lua).
   */
  async acquire(tenant: string, runId: string, owner: string, token: string, options: { worker?: string; logFrom?: number; jobWake?: number } = {}): Promise<AcquireResult> {
    const { worker = '', logFrom = -1, jobWake } = options;
    const { keys, args } = this.ctx.prologue(tenant, runId, owner);
    const k = this.ctx.keys;
    const [status, detail, third, logLines, takenFrom] = (await this.ctx.scripts.run(
      'acquireLease',
      [...keys, k.run(tenant, runId), k.runInbox(tenant, runId), k.runMessages(tenant, runId), k.runLog(tenant, runId)],
      [...args, token, this.ctx.options.leaseMs, worker, logFrom, jobWake ?? ''],
    )) as [string, string | string[], (string | number)?, string[]?, string?];
    switch (status) {
      case 'acquired': {
        const pairs = detail as string[];
        const hash: Record<string, string> = {};
        for (let i = 0; i < pairs.length; i += 2) {
          hash[pairs[i]] = pairs[i + 1];
        }
        const acquired = { status, run: toRun(tenant, runId, hash), pendingMessages: Number(third ?? 0), stopAsked: hash.cancel === '1', logLines: logLines ?? [] } as const;
        return takenFrom ? { ...acquired, takenOverFrom: takenFrom } : acquired;
      }
      case 'busy':
        return { status, retryInMs: Number(detail) };
      default:
        return { status: 'idle', runStatus: String(detail), ...(third ? { parentRunId: String(third) } : {}) };
    }
  }

  async renew(lease: Lease): Promise<RenewResult> {
    const renewed = await this.ctx.scripts.run(
      'renewLease',
      [this.ctx.keys.run(lease.tenant, lease.runId)],
      [lease.token, this.ctx.options.leaseMs],
    );
    return renewed === 1 ? 'held' : renewed === 2 ? 'stop_requested' : 'lost';
  }

  /** Gives the run back (status queued, no lease) while `lease` still holds it; false when it no longer did. */
  /** Fenced: `cancelled` when a stop was asked meanwhile (the run is still held: its holder ends it). */
  async release(lease: Lease): Promise<'released' | 'lost' | 'cancelled'> {
    const { keys, args } = this.ctx.prologue(lease.tenant, lease.runId, lease.owner);
    const result = await this.ctx.scripts.run('releaseLease', [...keys, this.ctx.keys.run(lease.tenant, lease.runId)], [...args, lease.token]);
    return result === 'released' || result === 'cancelled' ? result : 'lost';
  }

  /**
   * Fenced: appends only while `lease` is still the run's lease. `enterStage` moves the run in the
   * same step. `happened`: the entries record what already happened (a tool call that ran), so a stop
   * asked meanwhile does not keep them out of the log (and the audit).
   */
  async append(lease: Lease, entry: LogEntry | LogEntry[] | null, events: EventDraft[] = [], enterStage = '', happened = false): Promise<AppendResult> {
    const { keys, args } = this.ctx.prologue(lease.tenant, lease.runId, lease.owner);
    const k = this.ctx.keys;
    const entries = entry === null ? [] : Array.isArray(entry) ? entry : [entry];
    const [status, length, previousSha1] = (await this.ctx.scripts.run(
      'appendLog',
      [...keys, k.run(lease.tenant, lease.runId), k.runLog(lease.tenant, lease.runId)],
      [...args, lease.token, this.ctx.options.leaseMs, enterStage, happened ? '1' : '', entries.length, ...entries.map((e) => JSON.stringify(e)), ...eventArgs(events)],
    )) as [string, number?, (string | null)?];
    switch (status) {
      case 'ok':
        return { status, length: length ?? 0, previousSha1: previousSha1 ?? null };
      case 'cancelled':
        return length === undefined ? { status } : { status, recorded: { length, previousSha1: previousSha1 ?? null } };
      default:
        return { status: 'lost' };
    }
  }

  /**
   * Parks the run on `pendingId` (an interaction, or a child run). `open`: the interaction to open in
   * the same step (a repeat for an interaction that exists opens nothing); `record`: log entries to
   * append first (the question, after the model turn that asked it), with `events`; they are
   * appended even when a wake makes the park `continue`.
   */
  async park(lease: Lease, waitReason: WaitReason, pendingId: string, open?: InteractionRequest, record: LogEntry | LogEntry[] = [], events: EventDraft[] = []): Promise<ParkResult> {
    const entries = Array.isArray(record) ? record : [record];
    // Its deadline is filed on Redis's clock, which the deadline timer judges it by.
    const now = this.ctx.clock.now();
    const { keys, args } = this.ctx.prologue(lease.tenant, lease.runId, lease.owner, now);
    const k = this.ctx.keys;
    const runKey = k.run(lease.tenant, lease.runId);
    const interaction = open ? interactionFor(open, now) : null;
    const deadlineMs = interaction?.deadline ? Date.parse(interaction.deadline) : null;
    // Without a deadline: after every deadline, oldest first (few equal scores keep a listing's page boundaries cheap).
    const noDeadlineScore = String(NO_DEADLINE_SCORE + now.getTime());
    const reply = (await this.ctx.scripts.run(
      'park',
      [
        ...keys,
        runKey,
        k.runInbox(lease.tenant, lease.runId),
        interaction ? k.interaction(lease.tenant, interaction.id) : runKey,
        k.openInteractions(lease.tenant),
        k.openApprovals(lease.tenant),
        k.runLog(lease.tenant, lease.runId),
      ],
      [
        ...args,
        lease.token,
        waitReason,
        pendingId,
        interaction ? JSON.stringify({ interaction }) : '',
        interaction?.waitReason === 'approval' ? (deadlineMs === null ? noDeadlineScore : String(deadlineMs)) : '',
        interaction?.prompt.kind ?? '',
        deadlineMs === null ? '' : String(deadlineMs),
        noDeadlineScore,
        entries.length,
        events.length,
        ...entries.map((entry) => JSON.stringify(entry)),
        ...eventArgs(events),
        ...(interaction ? interactionFields(interaction) : []),
      ],
    )) as [ParkResult['status'], (string | number)?];
    return reply[0] === 'parked' ? { status: 'parked', deadlineTimer: reply[1] === '' || reply[1] === undefined ? null : Number(reply[1]) } : { status: reply[0] };
  }

  /** Ends a run: fenced by `lease`, or unfenced (token '') for a run no worker can finish. A sub-agent's end wakes its parent. */
  /** `jobWake`: unfenced, only a run still at this wake counter is ended (the job that gave up was its latest). */
  async end(target: Lease, ending: RunEnding, fenced = true, parentRunId?: string, jobWake?: number): Promise<EndResult> {
    const { keys, args } = this.ctx.prologue(target.tenant, target.runId, target.owner);
    const k = this.ctx.keys;
    const event: EventDraft =
      ending.status === 'finished'
        ? { type: 'run.finished', data: { reason: ending.reason, ...(ending.summary ? { summary: ending.summary } : {}) } }
        : { type: 'run.failed', data: { reason: ending.reason, error: ending.error } };
    const text = ending.status === 'finished' ? (ending.summary ?? '') : ending.error;
    const result: LogEntry = { type: 'child_result', childRunId: target.runId, status: ending.status, reason: ending.reason, text, at: args[3] };
    const reply = (await this.ctx.scripts.run(
      'endRun',
      [
        ...keys,
        k.run(target.tenant, target.runId),
        k.runGrants(target.tenant, target.runId),
        ...this.parentOrSelf(target.tenant, target.runId, parentRunId),
        ...k.runOwned(target.tenant, target.runId),
      ],
      [
        ...args,
        fenced ? target.token : '',
        ending.status,
        ending.reason,
        text,
        event.type,
        JSON.stringify(event.data),
        this.ctx.options.retentionSecs,
        parentRunId ?? '',
        JSON.stringify(result),
        jobWake ?? '',
      ],
    )) as [string, number?];
    if (reply[0] === 'ended') {
      return { status: 'ended', parentWake: this.parentWake(parentRunId, reply[1]) };
    }
    return { status: reply[0] as 'lost' | 'already' | 'stop' };
  }

  private parentOrSelf(tenant: string, runId: string, parentRunId: string | undefined): string[] {
    return this.ctx.keys.parentKeys(tenant, parentRunId ?? runId);
  }

  private parentWake(parentRunId: string | undefined, wake: number | undefined): ParentWake | null {
    return parentRunId && wake !== undefined && wake >= 0 ? { runId: parentRunId, wake } : null;
  }

  /** The wake counter of a queued run (its job id is derived from it), or null when the run is not queued. */
  async queuedWake(tenant: string, runId: string): Promise<number | null> {
    const [status, wake] = await this.ctx.redis.hmget(this.ctx.keys.run(tenant, runId), 'status', 'wake');
    return status === 'queued' ? Number(wake ?? 0) : null;
  }

  async children(tenant: string, runId: string): Promise<string[]> {
    return this.ctx.redis.smembers(this.ctx.keys.runChildren(tenant, runId));
  }

  /** Which of these grant-set members the run holds (one round trip, whatever the number of grants). */
  async grantedAmong(tenant: string, runId: string, members: string[]): Promise<Set<string>> {
    if (members.length === 0) {
      return new Set();
    }
    const held = await this.ctx.redis.smismember(this.ctx.keys.runGrants(tenant, runId), ...members);
    return new Set(members.filter((_, i) => held[i] === 1));
  }

  /** Who asked to stop a run a worker was holding. */
  async cancelRequester(tenant: string, runId: string): Promise<Actor> {
    const raw = await this.ctx.redis.hget(this.ctx.keys.run(tenant, runId), 'cancelBy');
    return raw ? (JSON.parse(raw) as Actor) : { kind: 'system' };
  }

  /**
   * Stops a run. `open` is the interaction the caller believes open (the run's pending one, or for a
   * worker the question it just asked); `leaseToken` marks the caller as the advancer. An open
   * approval is denied by the stop.
   */
  async cancel(
    target: { tenant: string; runId: string; owner: string; parentRunId?: string },
    by: Actor,
    open: { id: string; waitReason: WaitReason } | null,
    leaseToken = '',
  ): Promise<CancelResult> {
    const openInteractionId = open?.id ?? null;
    const now = this.ctx.clock.now();
    const { keys, args } = this.ctx.prologue(target.tenant, target.runId, target.owner, now);
    const k = this.ctx.keys;
    const ix = openInteractionId ? k.interaction(target.tenant, openInteractionId) : k.run(target.tenant, target.runId);
    const answer: LogEntry = { type: 'answer', interactionId: openInteractionId ?? '', outcome: 'cancelled', by, at: now.toISOString() };
    const resolved: EventDraft = {
      type: 'interaction.resolved',
      data: { interactionId: openInteractionId ?? '', outcome: 'cancelled', by, at: now.toISOString(), ...(open?.waitReason === 'approval' ? { decision: 'deny' as const } : {}) },
    };
    const cancelled: EventDraft = { type: 'run.cancelled', data: { reason: 'cancelled', by } };
    const who = by.kind === 'user' ? (by.subject ?? 'a user') : by.kind;
    const childResult: LogEntry = { type: 'child_result', childRunId: target.runId, status: 'cancelled', reason: 'cancelled', text: `stopped by ${who}`, at: now.toISOString() };
    const [status, detail] = (await this.ctx.scripts.run(
      'cancelRun',
      [
        ...keys,
        k.run(target.tenant, target.runId),
        k.runInbox(target.tenant, target.runId),
        ix,
        k.openInteractions(target.tenant),
        k.runLog(target.tenant, target.runId),
        k.openApprovals(target.tenant),
        k.runGrants(target.tenant, target.runId),
        ...this.parentOrSelf(target.tenant, target.runId, target.parentRunId),
        ...k.runOwned(target.tenant, target.runId),
      ],
      [
        ...args,
        JSON.stringify(by),
        openInteractionId ?? '',
        JSON.stringify(answer),
        JSON.stringify(resolved.data),
        JSON.stringify(cancelled.data),
        this.ctx.options.retentionSecs,
        leaseToken,
        target.parentRunId ?? '',
        JSON.stringify(childResult),
      ],
    )) as [string, (string | number)?];
    switch (status) {
      case 'already':
        return { status, runStatus: String(detail ?? '') };
      case 'cancelled':
        return { status, parentWake: this.parentWake(target.parentRunId, Number(detail)) };
      default:
        return { status: status as 'requested' | 'stale' };
    }
  }
}
