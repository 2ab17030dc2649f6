import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Namespace, type Socket } from 'socket.io';
import {
  AnswerBodySchema,
  ConflictError,
  DEFAULT_STAGE,
  ForbiddenError,
  InvalidAnswerError,
  MessageBodySchema,
  NotFoundError,
  ParleyError,
  RunMessageSchema,
  SOCKET,
  StartRunBodySchema,
  StopMessageSchema,
  SubscribeMessageSchema,
  TERMINAL_STATUSES,
  isUnattendedTrigger,
  parseOrThrow,
  validateAnswer,
  type Actor,
  type AgentSummary,
  type AnswerBody,
  type ApprovalPrompt,
  type AuditEntry,
  type CheckpointRef,
  type EndReason,
  type EventData,
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
import { answerApproval, approvalPrompt, argsDigest, describeCall } from '@parley/tools';
import type { SafeCommand } from '../api/api.client';

/**
 * An in-memory stand-in for the gateway's HTTP and socket.io API, for the CLI's own specs. Tests
 * script runs through the helper methods (say, ask, finish, ...) and the onRunStarted/onAnswered hooks.
 */
export class FakeGateway {
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
  /** The next this-many answers are refused with 422 whatever they say. */
  rejectAnswers = 0;
  /** Misbehave by replaying from the start on every subscribe, to prove the client dedupes. */
  replayEverything = false;
  url = '';

  private seq = 0;
  private readonly secret = loadConfig({}).jwtSecret;
  private readonly http: HttpServer;
  private readonly io: Server;
  private readonly nsp: Namespace;
  private readonly subscribers = new Map<string, { socket: Socket; runId?: string }>();
  /** Messages not yet passed to the model, by run. */
  private readonly inboxes = new Map<string, string[]>();
  private readonly requestedStops = new Map<string, Actor>();

  constructor() {
    this.http = createServer((req, res) => {
      void this.route(req, res);
    });
    this.io = new Server(this.http);
    this.nsp = this.io.of(SOCKET.namespace);
    this.nsp.use((socket, next) => {
      const auth: unknown = socket.handshake.auth;
      this.authenticate((auth as { token?: unknown }).token).then(
        (claims) => {
          const data: unknown = socket.data;
          (data as { claims?: TokenClaims }).claims = claims;
          next();
        },
        (error: unknown) => next(Object.assign(new Error('unauthenticated'), { data: toBody(error) })),
      );
    });
    this.nsp.on('connection', (socket) => this.connected(socket));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    const { port } = this.http.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      void this.io.close(() => resolve());
    });
  }

  /** Drops every socket at the transport level, as a network blip would; clients reconnect. */
  dropConnections(): void {
    for (const socket of this.nsp.sockets.values()) {
      socket.conn.close();
    }
  }

  get connectionCount(): number {
    return this.nsp.sockets.size;
  }

  emit(runId: string, draft: EventDraft): ParleyEvent {
    const run = this.mustGetRun(runId);
    this.seq += 1;
    const event: ParleyEvent = { seq: this.seq, tenant: run.tenant, runId, owner: run.owner, at: new Date().toISOString(), ...draft };
    this.events.push(event);
    for (const { socket, runId: filter } of this.subscribers.values()) {
      if (filter === undefined || filter === runId) {
        socket.emit(SOCKET.event, event);
      }
    }
    return event;
  }

  say(runId: string, ...chunks: string[]): void {
    this.setStatus(runId, 'running');
    for (const text of chunks) {
      this.emit(runId, { type: 'message.delta', data: { text } });
    }
    this.emit(runId, { type: 'message', data: { text: chunks.join('') } });
  }

  tool(runId: string, name: string, input: Record<string, unknown>, content: string, isError = false): void {
    const ids = { toolUseId: randomUUID(), effectId: randomUUID() };
    this.emit(runId, { type: 'tool.call', data: { ...ids, name, input } });
    this.emit(runId, { type: 'tool.result', data: { ...ids, name, isError, content } });
  }

  /** Opens an interaction; a tool_approval prompt makes the run wait for an approval. */
  ask(runId: string, prompt: Prompt, deadline: string | null = null): Interaction {
    return this.open(runId, prompt, prompt.kind === 'tool_approval' ? 'approval' : 'question', deadline);
  }

  /**
   * Opens a checkpoint at the exit of the run's current stage. An edit_text prompt is an edit
   * round (purpose `edit`); any other prompt asks the person to decide.
   */
  askCheckpoint(runId: string, point: string, prompt: Prompt, options: { round?: number; deadline?: string | null } = {}): Interaction {
    const checkpoint: CheckpointRef = {
      stage: this.mustGetRun(runId).stage ?? DEFAULT_STAGE,
      point,
      round: options.round ?? 0,
      purpose: prompt.kind === 'edit_text' ? 'edit' : 'decide',
    };
    return this.open(runId, prompt, 'checkpoint', options.deadline ?? null, checkpoint);
  }

  /** The run moves on to another stage, as a stage exit or the start of a staged agent's run does. */
  enterStage(runId: string, stage: string): void {
    const run = this.mustGetRun(runId);
    this.runs.set(runId, { ...run, stage, updatedAt: new Date().toISOString() });
    this.emit(runId, { type: 'stage.entered', data: { stage, from: run.stage ?? null } });
  }

  /** A checkpoint of the current stage lets the stage move on without a person. */
  proceed(runId: string, point: string, why: EventData<'checkpoint.proceeded'>['why']): void {
    this.emit(runId, { type: 'checkpoint.proceeded', data: { stage: this.mustGetRun(runId).stage ?? DEFAULT_STAGE, point, why } });
  }

  /** The run passes its queued messages to the model; returns their ids. */
  injectMessages(runId: string): string[] {
    const messageIds = this.inboxes.get(runId) ?? [];
    this.inboxes.delete(runId);
    if (messageIds.length > 0) {
      this.emit(runId, { type: 'message.injected', data: { messageIds } });
    }
    return messageIds;
  }

  /** The run delegates to a sub-agent and waits for it, as the delegate tool does. */
  startChild(parentRunId: string, agent: string, task = 'a delegated task'): Run {
    const parent = this.mustGetRun(parentRunId);
    const now = new Date().toISOString();
    const child: Run = {
      id: randomUUID(),
      tenant: parent.tenant,
      owner: parent.owner,
      agent,
      task,
      trigger: 'delegate',
      status: 'queued',
      unattended: true,
      parentRunId,
      createdAt: now,
      updatedAt: now,
    };
    this.runs.set(child.id, child);
    this.emit(child.id, { type: 'run.created', data: { agent, task, trigger: 'delegate' } });
    this.emit(parentRunId, { type: 'child.started', data: { childRunId: child.id, agent } });
    this.setStatus(parentRunId, 'waiting', 'child');
    return child;
  }

  /** Ends the runs whose stop holdStops kept pending, as their workers would at their next step. */
  completeStops(): void {
    const stops = [...this.requestedStops];
    this.requestedStops.clear();
    for (const [runId, by] of stops) {
      this.cancelNow(runId, by);
    }
  }

  private open(runId: string, prompt: Prompt, waitReason: WaitReason, deadline: string | null, checkpoint?: CheckpointRef): Interaction {
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

  /** Opens a tool approval for a call, with the prompt the loop worker would build for it. */
  askApproval(runId: string, tool: string, input: Record<string, unknown>, options: { deadline?: string | null; stage?: string } = {}): Interaction {
    return this.ask(runId, approvalPrompt(tool, input, describeCall(tool, input), options.stage ?? 'build'), options.deadline ?? null);
  }

  /** Someone else (another terminal, the web UI) answers. */
  answerAs(subject: string, interactionId: string, body: AnswerBody): Interaction {
    return this.answer(interactionId, body, { kind: 'user', subject, role: 'member' });
  }

  expire(interactionId: string): void {
    const interaction = this.mustGetInteraction(interactionId);
    const at = new Date().toISOString();
    this.interactions.set(interactionId, { ...interaction, status: 'expired', resolvedAt: at, resolvedBy: { kind: 'deadline' } });
    const decision = interaction.prompt.kind === 'tool_approval' ? { decision: 'deny' as const } : {};
    this.emit(interaction.runId, { type: 'interaction.resolved', data: { interactionId, outcome: 'expired', by: { kind: 'deadline' }, at, ...decision } });
    this.auditUnanswered(interaction, 'deadline', { kind: 'deadline' }, at);
  }

  /** Someone (an admin elsewhere) takes or gives up an approval, as `POST|DELETE /v1/approvals/:id/claim` would. */
  claimAs(subject: string, interactionId: string, release = false): Interaction {
    return this.claim(interactionId, { kind: 'user', subject, role: 'admin' }, release);
  }

  finish(runId: string, summary?: string, reason: EndReason = 'finish'): void {
    this.end(runId, 'finished', { endReason: reason, ...(summary === undefined ? {} : { summary }) });
    this.emit(runId, { type: 'run.finished', data: { reason, ...(summary === undefined ? {} : { summary }) } });
  }

  fail(runId: string, error: string, reason: EndReason = 'model_error'): void {
    this.end(runId, 'failed', { endReason: reason, error });
    this.emit(runId, { type: 'run.failed', data: { reason, error } });
  }

  private connected(socket: Socket): void {
    socket.on(SOCKET.subscribe, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const subscribe = parseOrThrow(SubscribeMessageSchema, message, 'subscribe message');
        this.subscribes.push(subscribe);
        this.subscribers.set(socket.id, { socket, runId: subscribe.runId });
        ack({ ok: true, lastSeq: this.seq });
        const since = this.replayEverything ? 0 : (subscribe.since ?? this.seq);
        for (const event of this.events) {
          if (event.seq > since && (subscribe.runId === undefined || subscribe.runId === event.runId)) {
            socket.emit(SOCKET.event, event);
          }
        }
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.answer, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { interactionId, answer } = message as { interactionId: string; answer: unknown };
        ack({ ok: true, interaction: this.answer(interactionId, answer, this.actorOf(socket), 'socket') });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.message, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { runId, text } = parseOrThrow(RunMessageSchema, message, 'message');
        ack({ ok: true, ...this.postMessage(runId, { text }, this.actorOf(socket)) });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.stop, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { runId } = parseOrThrow(StopMessageSchema, message, 'stop message');
        ack({ ok: true, run: this.stopRun(runId, this.actorOf(socket)) });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on('disconnect', () => this.subscribers.delete(socket.id));
  }

  private actorOf(socket: Socket): Actor {
    const data: unknown = socket.data;
    const claims = (data as { claims?: TokenClaims }).claims;
    return { kind: 'user', subject: claims?.sub ?? 'cli', role: claims?.role ?? 'admin' };
  }

  private answer(interactionId: string, raw: unknown, by: Actor, via: 'http' | 'socket' = 'http'): Interaction {
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
  private stopRun(runId: string, by: Actor): Run {
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
  private cancelNow(runId: string, by: Actor): void {
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
  private postMessage(runId: string, raw: unknown, by: Actor): { messageId: string; pending: number } {
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

  private claim(interactionId: string, by: Actor, release: boolean): Interaction {
    if (by.role !== 'admin') {
      throw new ForbiddenError('only admins claim approvals');
    }
    const interaction = this.mustGetInteraction(interactionId);
    if (interaction.waitReason !== 'approval') {
      throw new ConflictError(`interaction ${interactionId} is not an approval; only approvals are claimed`);
    }
    this.mustBeOpen(interaction);
    const held = this.liveClaim(interaction);
    if (held !== undefined && held.subject !== by.subject) {
      throw claimedBy(held);
    }
    if (release && held === undefined) {
      throw new ConflictError(`interaction ${interactionId} is not claimed by you`);
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
  private auditUnanswered(interaction: Interaction, basis: 'deadline' | 'cancelled', by: Actor, at: string): void {
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

  private setStatus(runId: string, status: Run['status'], waitReason?: Run['waitReason']): void {
    const run = this.mustGetRun(runId);
    if (run.status === status && run.waitReason === waitReason) {
      return;
    }
    const { waitReason: _previous, ...rest } = run;
    this.runs.set(runId, { ...rest, status, ...(waitReason === undefined ? {} : { waitReason }), updatedAt: new Date().toISOString() });
    const stage = run.stage === undefined ? {} : { stage: run.stage };
    this.emit(runId, { type: 'run.status', data: { status, ...(waitReason === undefined ? {} : { waitReason }), ...stage } });
  }

  private end(runId: string, status: 'finished' | 'failed' | 'cancelled', extra: Partial<Run>): void {
    const { waitReason: _previous, ...rest } = this.mustGetRun(runId);
    this.runs.set(runId, { ...rest, ...extra, status, updatedAt: new Date().toISOString() });
    for (const interaction of this.interactions.values()) {
      if (interaction.runId === runId && interaction.status === 'open') {
        this.interactions.set(interaction.id, { ...interaction, status: 'cancelled' });
        this.auditUnanswered(interaction, 'cancelled', { kind: 'system' }, new Date().toISOString());
      }
    }
  }

  private authenticate(token: unknown): Promise<TokenClaims> {
    return verifyToken(typeof token === 'string' ? token : '', this.secret);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const header = req.headers.authorization ?? '';
      const claims = await this.authenticate(header.startsWith('Bearer ') ? header.slice(7) : '');
      const url = new URL(req.url ?? '/', 'http://fake');
      const [version, collection, id, action] = url.pathname.split('/').filter((part) => part !== '');
      const route = `${req.method ?? 'GET'} ${[version, collection, id === undefined ? undefined : ':id', action].filter((part) => part !== undefined).join('/')}`;
      const query = url.searchParams;
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const reply = (status: number, value: unknown): void => send(res, status, value);
      switch (route) {
        case 'GET v1/agents':
          return reply(200, { agents: this.agents });
        case 'POST v1/runs': {
          const start = parseOrThrow(StartRunBodySchema, body, 'run');
          if (!this.agents.some((agent) => agent.name === start.agent)) {
            throw new NotFoundError('agent', start.agent);
          }
          const now = new Date().toISOString();
          const run: Run = {
            id: randomUUID(),
            tenant: claims.tenant,
            owner: claims.sub,
            agent: start.agent,
            task: start.task,
            trigger: start.trigger,
            status: 'queued',
            unattended: start.unattended || isUnattendedTrigger(start.trigger),
            createdAt: now,
            updatedAt: now,
          };
          this.runs.set(run.id, run);
          this.emit(run.id, { type: 'run.created', data: { agent: run.agent, task: run.task, trigger: run.trigger } });
          setImmediate(() => this.onRunStarted(run));
          return reply(201, { run });
        }
        case 'GET v1/runs': {
          const status = query.get('status');
          const limit = Number(query.get('limit') ?? 50);
          const runs = [...this.runs.values()].filter((run) => status === null || run.status === status).reverse().slice(0, limit);
          return reply(200, { runs });
        }
        case 'GET v1/runs/:id': {
          const run = this.mustGetRun(id);
          const open = [...this.interactions.values()].find((interaction) => interaction.runId === id && interaction.status === 'open');
          return reply(200, open === undefined ? { run } : { run, interaction: open });
        }
        case 'GET v1/runs/:id/events': {
          this.mustGetRun(id);
          const since = Number(query.get('since') ?? 0);
          const limit = Number(query.get('limit') ?? 1000);
          return reply(200, { events: this.events.filter((event) => event.runId === id && event.seq > since).slice(0, limit) });
        }
        case 'GET v1/runs/:id/log':
          this.mustGetRun(id);
          return reply(200, { entries: [] });
        case 'GET v1/runs/:id/audit':
          this.mustGetRun(id);
          return reply(200, { entries: this.audits.get(id) ?? [] });
        case 'GET v1/approvals':
          return reply(200, { approvals: this.openApprovals(query) });
        case 'GET v1/approvals/:id':
          if (id !== 'safe-commands') {
            break;
          }
          return reply(200, this.safeCommandsFor(query.get('agent') ?? undefined));
        case 'POST v1/approvals/:id/claim':
        case 'DELETE v1/approvals/:id/claim':
          return reply(200, { interaction: this.claim(id, { kind: 'user', subject: claims.sub, role: claims.role }, req.method === 'DELETE') });
        case 'POST v1/runs/:id/stop':
        case 'POST v1/runs/:id/cancel':
          return reply(200, { run: this.stopRun(id, { kind: 'user', subject: claims.sub, role: claims.role }) });
        case 'POST v1/runs/:id/messages':
          return reply(202, this.postMessage(id, body, { kind: 'user', subject: claims.sub, role: claims.role }));
        case 'GET v1/schedules':
          if (claims.role === 'member') {
            throw new ForbiddenError('only admins and services list schedules');
          }
          return reply(200, { schedules: this.schedules });
        case 'GET v1/interactions': {
          const all = query.get('status') === 'all';
          const runId = query.get('runId');
          const interactions = [...this.interactions.values()].filter(
            (interaction) => (all || interaction.status === 'open') && (runId === null || interaction.runId === runId),
          );
          return reply(200, { interactions });
        }
        case 'GET v1/interactions/:id':
          return reply(200, { interaction: this.mustGetInteraction(id) });
        case 'POST v1/interactions/:id/answer':
          return reply(200, { interaction: this.answer(id, body, { kind: 'user', subject: claims.sub, role: claims.role }) });
        default:
          break;
      }
      return reply(404, { error: { code: 'not_found', message: `no route ${route}` } });
    } catch (error) {
      send(res, error instanceof ParleyError ? error.status : 500, toBody(error));
    }
  }

  private openApprovals(query: URLSearchParams): Interaction[] {
    const [agent, tool, runId] = ['agent', 'tool', 'runId'].map((key) => query.get(key));
    const limit = Number(query.get('limit') ?? 100);
    return [...this.interactions.values()]
      .filter(
        (interaction) =>
          interaction.status === 'open' &&
          interaction.prompt.kind === 'tool_approval' &&
          (agent === null || interaction.agent === agent) &&
          (tool === null || interaction.prompt.tool === tool) &&
          (runId === null || interaction.runId === runId),
      )
      .sort((a, b) => deadlineOrder(a.deadline) - deadlineOrder(b.deadline))
      .slice(0, limit);
  }

  private safeCommandsFor(agent: string | undefined): { agent: string | null; safeCommands: SafeCommand[] } {
    if (agent !== undefined && !this.agents.some((known) => known.name === agent)) {
      throw new NotFoundError('agent', agent);
    }
    const sources = new Set(['default', 'global', ...(agent === undefined ? [] : [`agent:${agent}`])]);
    return { agent: agent ?? null, safeCommands: this.safeCommands.filter((command) => sources.has(command.source)) };
  }

  private mustGetRun(id: string): Run {
    const run = this.runs.get(id);
    if (run === undefined) {
      throw new NotFoundError('run', id);
    }
    return run;
  }

  private mustGetInteraction(id: string): Interaction {
    const interaction = this.interactions.get(id);
    if (interaction === undefined) {
      throw new NotFoundError('interaction', id);
    }
    return interaction;
  }
}

function claimedBy(claim: { subject: string; until: string }): ConflictError {
  return new ConflictError(`claimed by ${claim.subject} until ${claim.until}; only they may answer until then`, { claim });
}

/** Oldest deadline first; approvals that wait forever last. */
function deadlineOrder(deadline: string | null): number {
  return deadline === null ? Number.POSITIVE_INFINITY : Date.parse(deadline);
}

function toBody(error: unknown): unknown {
  if (error instanceof ParleyError) {
    return error.toBody();
  }
  return { error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
