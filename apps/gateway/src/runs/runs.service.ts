import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { TenantAgents } from '@parley/agents';
import {
  ConflictError,
  NotFoundError,
  RateLimitedError,
  TERMINAL_STATUSES,
  ValidationFailedError,
  isUnattendedTrigger,
  type MessageBody,
  type AuditEntry,
  type Interaction,
  type LogEntry,
  type Run,
  type RunStatus,
  type StartRunBody,
  type TokenClaims,
} from '@parley/contracts';
import { ReplyLostError, mayHaveRun, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, RunControl, type EventPage, type NewRun, type PostMessageResult, type RunPage } from '@parley/store';
import { assertSinceIssued } from '../events/since.check';
import { keyedId } from './keyed-id';
import { AuthService } from '../auth/auth.service';
import { buildAudit } from '../audit/audit.builder';

@Injectable()
export class RunsService {
  private readonly logger = new Logger(RunsService.name);

  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    private readonly agents: TenantAgents,
    private readonly auth: AuthService,
    private readonly control: RunControl,
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
  ) {}

  /**
   * A run owned by the caller or, for a service token, by the end user named in `onBehalfOf`. With an
   * idempotency key, a start whose key (of the same caller) names a run still kept is answered with
   * that run (`replayed`) if it asked the same, refused if it asked something else. Run ids are never
   * derived from the key: once the run is gone, the key makes a new run with a new id.
   */
  async start(user: TokenClaims, body: StartRunBody, idempotencyKey?: string): Promise<{ run: Run; replayed: boolean }> {
    if (user.role === 'service' && body.onBehalfOf === undefined) {
      throw new ValidationFailedError('body', [{ field: 'onBehalfOf', reason: 'required for service tokens: the user the run is started for' }]);
    }
    if (user.role !== 'service' && body.onBehalfOf !== undefined) {
      throw new ValidationFailedError('body', [{ field: 'onBehalfOf', reason: 'only service tokens start runs on behalf of a user' }]);
    }
    const startKey = idempotencyKey === undefined ? undefined : { caller: user.sub, key: idempotencyKey };
    const replayed = startKey && (await this.replayStarted(user, startKey, body));
    if (replayed) {
      return replayed;
    }
    const runId = randomUUID();
    if (!startKey) {
      return this.startNew(user, body, runId);
    }
    const made = await this.awaitStartInProgress(user, startKey, body, runId);
    if (made) {
      return made;
    }
    try {
      return await this.startNew(user, body, runId, startKey);
    } finally {
      await this.store.startKeys.done(user.tenant, startKey.caller, startKey.key, runId).catch(() => undefined);
    }
  }

  /**
   * Marks the key as starting with `runId`; while another start holds it so (a repeat sent before the
   * first got its answer), waits for that start to end and answers with the run it made. Null once
   * this start holds the key: it goes on and makes the run. Waiting looks again at growing
   * intervals (5 ms to 250 ms): the other start is one admission and one create away from done. Its
   * run's creation is published (`run.created`), but a start that is refused, or fails, announces
   * nothing, and the mark's removal is announced by nothing short of keyspace notifications (which
   * Parley does not ask of a Redis): a few reads cover both ends on this rare path. A start that
   * died holding the key lets it go after STARTING_MS (20 s).
   */
  private async awaitStartInProgress(user: TokenClaims, startKey: { caller: string; key: string }, body: StartRunBody, runId: string): Promise<{ run: Run; replayed: true } | null> {
    for (;;) {
      const mark = await this.store.startKeys.mark(user.tenant, startKey.caller, startKey.key, runId).catch(async (error: unknown) => {
        // It may have been set: a retry of this start would wait on it for nothing.
        if (mayHaveRun(error)) {
          await this.store.startKeys.done(user.tenant, startKey.caller, startKey.key, runId).catch(() => undefined);
        }
        throw error;
      });
      if (mark.status === 'marked') {
        return null;
      }
      for (let pauseMs = 5; await this.store.startKeys.isStarting(user.tenant, startKey.caller, startKey.key, mark.runId); pauseMs = Math.min(pauseMs * 2, 250)) {
        await sleep(pauseMs);
      }
      const made = await this.replayStarted(user, startKey, body);
      if (made) {
        return made;
      }
    }
  }

  private async startNew(user: TokenClaims, body: StartRunBody, runId: string, startKey?: { caller: string; key: string }): Promise<{ run: Run; replayed: boolean }> {
    let agent = await this.agents.forStart(user.tenant, body.agent);
    // The tenant's limits (shared by every gateway) are checked before anything of the run is written.
    const owner = body.onBehalfOf ?? user.sub;
    try {
      await this.store.limits.admitRun(user.tenant, owner, runId, {
        ...this.runLimits(),
        concurrentRuns: this.config.limitConcurrentRuns,
        userConcurrentRuns: this.config.limitUserConcurrentRuns,
        openInteractions: this.config.limitOpenInteractions,
      });
    } catch (error) {
      // A repeat sent while the first start was admitted (and counted): it is answered with that run.
      const replayedNow = error instanceof RateLimitedError && startKey ? await this.replayStarted(user, startKey, body) : null;
      if (replayedNow) {
        return replayedNow;
      }
      throw error;
    }
    let created: Awaited<ReturnType<ParleyStore['runs']['create']>>;
    try {
      // A tenant agent's version can be replaced (and dropped) between the lookup and the create: look once more.
      for (let attempt = 0; ; attempt++) {
        const definition = agent.definition;
        created = await this.createOnce({
          tenant: user.tenant,
          runId,
          owner,
          agent: definition.name,
          task: body.task,
          trigger: body.trigger,
          unattended: isUnattended(body),
          ...(definition.stages[0] ? { stage: definition.stages[0].name } : {}),
          ...(agent.digest ? { agentDigest: agent.digest } : {}),
          ...(startKey ? { startKey } : {}),
        });
        if (created.created || !created.versionGone || attempt > 0) {
          break;
        }
        agent = await this.agents.forStart(user.tenant, body.agent);
      }
    } catch (error) {
      // Not when the run may yet be created (a reply lost, a timeout): an admission whose run never
      // came is pruned once the tenant is at its limit.
      if (!mayHaveRun(error)) {
        await this.store.limits.releaseRun(user.tenant, owner, runId, this.runLimits());
      }
      throw error;
    }
    if (!created.created) {
      await this.store.limits.releaseRun(user.tenant, owner, runId, this.runLimits());
      // A start with the same key made its run meanwhile.
      const replayedNow = created.keyTaken && startKey ? await this.replayStarted(user, startKey, body) : null;
      if (replayedNow) {
        return replayedNow;
      }
      throw created.versionGone
        ? new ConflictError(`agent ${body.agent} kept changing while the run started; try again`)
        : created.keyTaken
          ? new ConflictError('Idempotency-Key: the run it started was removed (past its retention) just now; try again')
          : new ConflictError(`run ${runId} already exists`);
    }
    await this.queues.enqueueRun({ tenant: user.tenant, runId, wake: created.wake });
    this.logger.log({ msg: 'run started', tenant: user.tenant, runId, agent: body.agent, owner, by: user.sub });
    return { run: await this.get(user, runId), replayed: false };
  }

  /**
   * A start whose key (by this caller) names a run still kept is answered with that run if it asked
   * the same (the run gets its job should it lack one), refused if not; null when the key names no
   * run. Releases before 2026-12-01 derived the run's id from the key and kept no record of it: such a
   * run is found by that id.
   */
  private async replayStarted(user: TokenClaims, startKey: { caller: string; key: string }, body: StartRunBody): Promise<{ run: Run; replayed: true } | null> {
    const earlier = (await this.store.runs.byStartKey(user.tenant, startKey.caller, startKey.key)) ?? (await this.store.runs.get(user.tenant, keyedId(user, startKey.key)));
    if (!earlier) {
      return null;
    }
    const asked = startedAs(user, body);
    const differs = (['agent', 'task', 'owner', 'trigger', 'unattended'] as const).filter((field) => earlier[field] !== asked[field]);
    if (differs.length > 0) {
      throw new ConflictError(`Idempotency-Key was used for another start (${differs.join(', ')} ${differs.length === 1 ? 'differs' : 'differ'}): use a new key for a new run`);
    }
    await this.control.ensureQueued(user.tenant, earlier.id);
    return { run: await this.get(user, earlier.id), replayed: true };
  }

  /**
   * The create step. When its reply was lost it may have run: the id is this request's own, so a run
   * of that id is this request's (and starts at wake 0); none means it did not run.
   */
  private async createOnce(run: NewRun): Promise<Awaited<ReturnType<ParleyStore['runs']['create']>>> {
    try {
      return await this.store.runs.create(run);
    } catch (error) {
      if (!(error instanceof ReplyLostError)) {
        throw error;
      }
      return (await this.store.runs.get(run.tenant, run.runId)) ? { created: true, wake: 0 } : this.store.runs.create(run);
    }
  }

  /** A run the caller may see; any other id answers 404, exactly like a missing one. */
  async get(user: TokenClaims, runId: string): Promise<Run> {
    const run = await this.store.runs.get(user.tenant, runId);
    if (!run || !this.auth.canSee(user, run)) {
      throw new NotFoundError('run', runId);
    }
    return run;
  }

  list(user: TokenClaims, filter: { status?: RunStatus; limit: number; after?: string }): Promise<RunPage> {
    return this.store.runs.list(user.tenant, { ...filter, ...(user.role === 'member' ? { owner: user.sub } : {}) });
  }

  async pendingInteraction(run: Run): Promise<Interaction | undefined> {
    if (!run.pendingInteractionId) {
      return undefined;
    }
    const interaction = await this.store.interactions.get(run.tenant, run.pendingInteractionId);
    return interaction?.status === 'open' ? interaction : undefined;
  }

  async events(user: TokenClaims, runId: string, since: number, limit: number): Promise<EventPage> {
    await this.get(user, runId);
    await assertSinceIssued(this.store, user.tenant, since, 'query');
    return this.store.events.replayRun(user.tenant, runId, since, limit);
  }

  async log(user: TokenClaims, runId: string): Promise<LogEntry[]> {
    await this.get(user, runId);
    return this.store.runs.readLog(user.tenant, runId);
  }

  async audit(user: TokenClaims, runId: string): Promise<AuditEntry[]> {
    await this.get(user, runId);
    return buildAudit(user.tenant, await this.store.runs.readLog(user.tenant, runId));
  }

  /** Stops a run (and its sub-agents): at once when parked or queued, at its next step when a worker holds it. */
  async stop(user: TokenClaims, runId: string): Promise<Run> {
    const run = await this.get(user, runId);
    if (TERMINAL_STATUSES.includes(run.status)) {
      throw new ConflictError(`run ${runId} has already ended (${run.status})`, { status: run.status });
    }
    const result = await this.control.stop(run.tenant, run.id, { kind: 'user', subject: user.sub, role: user.role });
    switch (result.status) {
      case 'stale':
        throw new ConflictError(`run ${runId} kept changing; try again`);
      case 'already':
        // It ended after the read above (another stop, or its own end): this stop changed nothing.
        throw new ConflictError(`run ${runId} has already ended (${result.runStatus})`, { status: result.runStatus });
      case 'missing':
        throw new NotFoundError('run', runId);
      case 'cancelled':
      case 'requested':
        return this.get(user, runId);
    }
  }

  /**
   * A message for the run, injected between inference calls; kept while the run is parked. With an
   * idempotency key, the same message sent again by the same caller to the same run is kept once
   * (`replayed`); the key used for another text is a conflict.
   */
  async message(user: TokenClaims, runId: string, body: MessageBody, idempotencyKey?: string): Promise<{ messageId: string; pending: number; replayed: boolean }> {
    const run = await this.get(user, runId);
    const messageId = idempotencyKey === undefined ? randomUUID() : keyedId(user, `${runId}\n${idempotencyKey}`);
    // A repeat is told so before the limit is counted: a client retries when it is busiest.
    const before = idempotencyKey === undefined ? null : await this.store.messages.keptBefore(run, messageId, body.text);
    if (before !== null) {
      return this.messageOutcome(runId, messageId, before);
    }
    // Counted before anything is written; given back when the run keeps nothing of the message.
    // A service speaks for many users: only the tenant's limit counts its messages.
    const sender = user.role === 'service' ? null : user.sub;
    await this.store.limits.hitMessage(user.tenant, sender, this.messageLimits());
    let result: PostMessageResult;
    try {
      const by = { kind: 'user' as const, subject: user.sub, role: user.role };
      result = await this.store.messages.post(run, { messageId, text: body.text, by, at: this.store.ctx.clock.now().toISOString() }, idempotencyKey !== undefined);
    } catch (error) {
      if (!mayHaveRun(error)) {
        await this.store.limits.refundMessage(user.tenant, sender, this.messageLimits());
      }
      throw error;
    }
    if (result.status !== 'accepted') {
      await this.store.limits.refundMessage(user.tenant, sender, this.messageLimits());
    }
    return this.messageOutcome(runId, messageId, result);
  }

  private runLimits(): { runsPerMinute: number; userRunsPerMinute: number } {
    return { runsPerMinute: this.config.limitRunsPerMinute, userRunsPerMinute: this.config.limitUserRunsPerMinute };
  }

  private messageLimits(): { messagesPerMinute: number; userMessagesPerMinute: number } {
    return { messagesPerMinute: this.config.limitMessagesPerMinute, userMessagesPerMinute: this.config.limitUserMessagesPerMinute };
  }

  private messageOutcome(runId: string, messageId: string, result: PostMessageResult): { messageId: string; pending: number; replayed: boolean } {
    switch (result.status) {
      case 'accepted':
        return { messageId, pending: result.pending, replayed: false };
      case 'replayed':
        return { messageId, pending: result.pending, replayed: true };
      case 'conflict':
        throw new ConflictError(`Idempotency-Key was used for another message to run ${runId}: use a new key for a new message`);
      case 'ended':
        throw new ConflictError(`no run accepted the message: run ${runId} has ended (${result.runStatus})`, { status: result.runStatus });
      case 'full':
        throw new ConflictError(`run ${runId} already has ${result.pending} messages waiting to be read; send more once it has taken them`, { pending: result.pending });
      case 'missing':
        throw new NotFoundError('run', runId);
    }
  }
}

/** What a start asks for, as its run records it. */
function startedAs(user: TokenClaims, body: StartRunBody): Pick<Run, 'agent' | 'task' | 'owner' | 'trigger' | 'unattended'> {
  return { agent: body.agent, task: body.task, owner: body.onBehalfOf ?? user.sub, trigger: body.trigger, unattended: isUnattended(body) };
}

function isUnattended(body: StartRunBody): boolean {
  return body.unattended === true || isUnattendedTrigger(body.trigger);
}
