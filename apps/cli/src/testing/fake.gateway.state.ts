import { randomUUID } from 'node:crypto';
import {
  AnswerBodySchema,
  ConflictError,
  ForbiddenError,
  InvalidAnswerError,
  MessageBodySchema,
  NotFoundError,
  ParleyError,
  TERMINAL_STATUSES,
  parseOrThrow,
  validateAnswer,
  type Actor,
  type AgentSummary,
  type AnswerBody,
  type ApprovalPrompt,
  type AuditEntry,
  type CheckpointRef,
  type EventDraft,
  type Interaction,
  type ParleyEvent,
  type Prompt,
  type Run,
  type ScheduleInfo,
  type SubscribeMessage,
  type TokenClaims,
  type WaitReason,
} from '@parley/contracts';
import { loadConfig, verifyToken } from '@parley/platform';
import { answerApproval, argsDigest } from '@parley/tools';
import type { SafeCommand } from '../api/api.client';

/**
 * The fake gateway's in-memory state (runs, interactions, events, audits, ...) and the operations
 * its HTTP routes, its socket.io handlers and the test helpers share. How events reach subscribers
 * is left to publish().
 */
export abstract class FakeGatewayState {
  readonly agents: AgentSummary[] = [
    { name: 'echo', description: 'repeats what it is told', provider: 'scripted', tools: ['ask_user', 'read_file'] },
  ];
  readonly runs = new Map<string, Run>();
  readonly interactions = new Map<string, Interaction>();
  readonly events: ParleyEvent[] = [];
  readonly subscribes: SubscribeMessage[] = [];
  readonly answers: Array<{ via: 'http' | 'socket'; interactionId: string; body: AnswerBody; accepted: boolean }> = [];
  /** Approval decisions by run, as `GET /v1/runs/:id/audit` returns them; answers, expiries and stops add to it. */
  readonly audits = new Map<string, AuditEntry[]>();
  /** Safe commands: `default` and `global` apply to every agent, `agent:<name>` to that agent. */
  readonly safeCommands: SafeCommand[] = [
    { entry: 'ls', source: 'default', note: 'lists files' },
    { entry: 'git status', source: 'default', note: 'read-only git' },
    { entry: 'make test', source: 'global' },
    { entry: 'npm test', source: 'agent:echo' },
  ];
  /** What `GET /v1/schedules` returns. */
  readonly schedules: ScheduleInfo[] = [];
  /** Every message accepted for a run (`POST /v1/runs/:id/messages` or the socket's `message`), in order. */
  readonly messages: Array<{ runId: string; messageId: string; text: string; by: Actor }> = [];
  /** How long a claim holds. */
  claimSecs = 300;
  /**
   * Behave as if a worker held every running run: a stop only flags it (the reply shows it still
   * running) until completeStops() ends it, as the worker would at its next step.
   */
  holdStops = false;
  onRunStarted: (run: Run) => void = () => undefined;
  onAnswered: (interaction: Interaction) => void = () => undefined;
  /** Called before GET /v1/runs/:id answers, with the run id. */
  onGetRun: (runId: string) => void = () => undefined;
  /** The next this-many answers are refused with 422 whatever they say. */
  rejectAnswers = 0;
  /** Misbehave by replaying from the start on every subscribe, to prove the client dedupes. */
  replayEverything = false;
  /** Events up to this seq were trimmed from the stream: replays and pages skip them and say so. */
  trimmedUpTo = 0;
  url = '';

  protected seq = 0;
  private readonly secret = loadConfig({}).jwtSecret;
  /** Messages not yet passed to the model, by run. */
  protected readonly inboxes = new Map<string, string[]>();
  protected readonly requestedStops = new Map<string, Actor>();

  /** Hands a run's event to the subscribers it concerns. */
  protected abstract publish(runId: string, event: ParleyEvent): void;

  emit(runId: string, draft: EventDraft): ParleyEvent {
    const run = this.mustGetRun(runId);
    this.seq += 1;
    const event: ParleyEvent = { seq: this.seq, tenant: run.tenant, runId, owner: run.owner, at: new Date().toISOString(), ...draft };
    this.events.push(event);
    this.publish(runId, event);
    return event;
  }

  protected open(runId: string, prompt: Prompt, waitReason: WaitReason, deadline: string | null, checkpoint?: CheckpointRef): Interaction {
    const run = this.mustGetRun(runId);
    const interaction: Interaction = {
      id: randomUUID(),
      tenant: run.tenant,
      runId,
      owner: run.owner,
      agent: run.agent,
      waitReason,
      prompt,
      ...(checkpoint === undefined ? {} : { checkpoint }),
      status: 'open',
      createdAt: new Date().toISOString(),
      deadline,
    };
    this.interactions.set(interaction.id, interaction);
    this.setStatus(runId, 'waiting', waitReason);
    this.emit(runId, { type: 'interaction.opened', data: { interaction } });
    return interaction;
  }

  protected answer(interactionId: string, raw: unknown, by: Actor, via: 'http' | 'socket' = 'http'): Interaction {
    const interaction = this.mustGetInteraction(interactionId);
    const body = parseOrThrow(AnswerBodySchema, raw, 'answer');
    this.mustBeOpen(interaction);
    const claim = this.liveClaim(interaction);
    if (claim !== undefined && claim.subject !== by.subject) {
      throw claimedBy(claim);
    }
    if (this.rejectAnswers > 0) {
      this.rejectAnswers -= 1;
      this.answers.push({ via, interactionId, body, accepted: false });
      throw new InvalidAnswerError([{ field: 'answer', reason: 'refused by the test gateway' }]);
    }
    let answer;
    try {
      answer = validateAnswer(interaction.prompt, body, answerApproval);
    } catch (error) {
      this.answers.push({ via, interactionId, body, accepted: false });
      throw error;
    }
    this.answers.push({ via, interactionId, body, accepted: true });
    const at = new Date().toISOString();
    const resolved: Interaction = { ...interaction, status: 'answered', answer, resolvedAt: at, resolvedBy: by };
    this.interactions.set(interactionId, resolved);
    const decision = answer.kind === 'tool_approval' ? { decision: answer.decision } : {};
    this.emit(interaction.runId, { type: 'interaction.resolved', data: { interactionId, outcome: 'answered', by, at, ...decision } });
    if (answer.kind === 'tool_approval' && interaction.prompt.kind === 'tool_approval') {
      const scope = answer.decision === 'allow_once' ? 'once' : answer.decision === 'allow_stage' ? 'stage' : answer.decision === 'allow_run' ? 'run' : null;
      this.addAudit(interaction.runId, {
        ...this.auditBase(interaction, interaction.prompt, at),
        basis: 'person',
        decision: answer.decision,
        scope,
        approver: { tenant: interaction.tenant, ...by },
        grants: answer.grants,
        edited: answer.edited,
        ...(answer.reason === undefined ? {} : { reason: answer.reason }),
        argsDigest: answer.argsDigest,
      });
    }
    this.setStatus(interaction.runId, 'running');
    setImmediate(() => this.onAnswered(resolved));
    return resolved;
  }

  /** Stops a run: at once, unless holdStops makes a running run wait for its worker's next step. */
  protected stopRun(runId: string, by: Actor): Run {
    const run = this.mustGetRun(runId);
    if (TERMINAL_STATUSES.includes(run.status)) {
      throw new ConflictError(`run ${runId} has already ended (${run.status})`, { status: run.status });
    }
    if (this.holdStops && run.status === 'running') {
      this.requestedStops.set(runId, by);
      return run;
    }
    this.cancelNow(runId, by);
    return this.mustGetRun(runId);
  }

  /** Ends the run and its sub-agents as cancelled by `by`. */
  protected cancelNow(runId: string, by: Actor): void {
    if (TERMINAL_STATUSES.includes(this.mustGetRun(runId).status)) {
      return;
    }
    this.end(runId, 'cancelled', { endReason: 'cancelled', stoppedBy: by });
    this.emit(runId, { type: 'run.cancelled', data: { reason: 'cancelled', by } });
    for (const child of this.runs.values()) {
      if (child.parentRunId === runId) {
        this.cancelNow(child.id, by);
      }
    }
  }

  /** Queues a message for a run, as `POST /v1/runs/:id/messages` does. */
  protected postMessage(runId: string, raw: unknown, by: Actor): { messageId: string; pending: number } {
    const { text } = parseOrThrow(MessageBodySchema, raw, 'body');
    const run = this.mustGetRun(runId);
    if (TERMINAL_STATUSES.includes(run.status)) {
      throw new ConflictError(`no run accepted the message: run ${runId} has ended (${run.status})`, { status: run.status });
    }
    const messageId = randomUUID();
    const inbox = [...(this.inboxes.get(runId) ?? []), messageId];
    this.inboxes.set(runId, inbox);
    this.messages.push({ runId, messageId, text, by });
    this.emit(runId, { type: 'message.received', data: { messageId, text, by } });
    return { messageId, pending: inbox.length };
  }

  protected claim(interactionId: string, by: Actor, release: boolean): Interaction {
    if (by.role !== 'admin') {
      throw new ForbiddenError('only admins claim approvals');
    }
    const interaction = this.mustGetInteraction(interactionId);
    if (interaction.waitReason !== 'approval') {
      throw new ConflictError(`interaction ${interactionId} is not an approval; only approvals are claimed`, { waitReason: interaction.waitReason });
    }
    this.mustBeOpen(interaction);
    const held = this.liveClaim(interaction);
    if (held !== undefined && held.subject !== by.subject) {
      throw claimedBy(held);
    }
    if (release && held === undefined) {
      return interaction;
    }
    const { claim: _previous, ...rest } = interaction;
    const claim = release ? null : { subject: by.subject ?? 'someone', until: new Date(Date.now() + this.claimSecs * 1000).toISOString() };
    const updated: Interaction = claim === null ? rest : { ...rest, claim };
    this.interactions.set(interactionId, updated);
    this.emit(interaction.runId, { type: 'interaction.claimed', data: { interactionId, claim, by } });
    return updated;
  }

  private liveClaim(interaction: Interaction): Interaction['claim'] {
    return interaction.claim !== undefined && Date.parse(interaction.claim.until) > Date.now() ? interaction.claim : undefined;
  }

  private mustBeOpen(interaction: Interaction): void {
    if (interaction.status !== 'open') {
      const who = interaction.resolvedBy?.subject ?? interaction.resolvedBy?.kind ?? 'someone';
      throw new ConflictError(`interaction ${interaction.id} was already ${interaction.status} by ${who} at ${interaction.resolvedAt ?? '?'}`);
    }
  }

  private auditBase(interaction: Interaction, prompt: ApprovalPrompt, at: string): Pick<AuditEntry, 'at' | 'tool' | 'effectId' | 'interactionId'> {
    return { at, tool: prompt.tool, effectId: `effect-${interaction.id}`, interactionId: interaction.id };
  }

  /** A deadline or a stop denies an approval nobody answered. */
  protected auditUnanswered(interaction: Interaction, basis: 'deadline' | 'cancelled', by: Actor, at: string): void {
    if (interaction.prompt.kind !== 'tool_approval') {
      return;
    }
    this.addAudit(interaction.runId, {
      ...this.auditBase(interaction, interaction.prompt, at),
      basis,
      decision: 'deny',
      scope: null,
      approver: { tenant: interaction.tenant, ...by },
      grants: [],
      edited: false,
      argsDigest: argsDigest(interaction.prompt.input),
    });
  }

  addAudit(runId: string, entry: AuditEntry): void {
    this.audits.set(runId, [...(this.audits.get(runId) ?? []), entry]);
  }

  protected setStatus(runId: string, status: Run['status'], waitReason?: Run['waitReason']): void {
    const run = this.mustGetRun(runId);
    if (run.status === status && run.waitReason === waitReason) {
      return;
    }
    const { waitReason: _previous, ...rest } = run;
    this.runs.set(runId, { ...rest, status, ...(waitReason === undefined ? {} : { waitReason }), updatedAt: new Date().toISOString() });
    const stage = run.stage === undefined ? {} : { stage: run.stage };
    this.emit(runId, { type: 'run.status', data: { status, ...(waitReason === undefined ? {} : { waitReason }), ...stage } });
  }

  protected end(runId: string, status: 'finished' | 'failed' | 'cancelled', extra: Partial<Run>): void {
    const { waitReason: _previous, ...rest } = this.mustGetRun(runId);
    this.runs.set(runId, { ...rest, ...extra, status, updatedAt: new Date().toISOString() });
    for (const interaction of this.interactions.values()) {
      if (interaction.runId === runId && interaction.status === 'open') {
        this.interactions.set(interaction.id, { ...interaction, status: 'cancelled' });
        this.auditUnanswered(interaction, 'cancelled', { kind: 'system' }, new Date().toISOString());
      }
    }
  }

  protected authenticate(token: unknown): Promise<TokenClaims> {
    return verifyToken(typeof token === 'string' ? token : '', this.secret);
  }

  protected mustGetRun(id: string): Run {
    const run = this.runs.get(id);
    if (run === undefined) {
      throw new NotFoundError('run', id);
    }
    return run;
  }

  protected mustGetInteraction(id: string): Interaction {
    const interaction = this.interactions.get(id);
    if (interaction === undefined) {
      throw new NotFoundError('interaction', id);
    }
    return interaction;
  }
}

export function claimedBy(claim: { subject: string; until: string }): ConflictError {
  return new ConflictError(`claimed by ${claim.subject} until ${claim.until}; only they may answer until then`, { claim });
}

export function toBody(error: unknown): unknown {
  if (error instanceof ParleyError) {
    return error.toBody();
  }
  return { error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
}
