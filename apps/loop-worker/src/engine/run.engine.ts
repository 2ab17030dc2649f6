import { randomUUID } from 'node:crypto';
import type { RunAgents } from '@parley/agents';
import { TERMINAL_STATUSES, type AgentDefinition, type EventDraft, type LogEntry, type Run, type RunJob, type RunStatus, type Stage, type ToolCall, type WaitReason } from '@parley/contracts';
import { isModelError } from '@parley/models';
import { metrics } from '@parley/platform';
import { LeaseLostError, type AppendResult, type Lease, type RunEnding } from '@parley/store';
import { summaryOfReply, toolSpecs } from '@parley/tools';
import { buildConversation, type Conversation } from './conversation';
import { DeltaEmitter } from './delta.emitter';
import type { AdvanceOutcome, EngineResources } from './engine.resources';
import type { HeldLog } from './held.log';
import { recordedEnding } from './recorded.ending';
import { systemPromptFor } from './system.prompt';
import { toolsOffered, type Parking, type RunView, type SettleResult } from './run.view';
import { HOPELESS_STOPS, withCallsRefused } from './cut-off.turn';
import { TurnDispatcher } from './turn.dispatcher';

/** What a step holds besides the lease: the run as acquired, its agent, its log. */
interface Held {
  run: Run;
  agent: AgentDefinition;
  log: HeldLog;
  /** The model call this job already put off after it failed retryably, and how often. */
  modelRetry: RunJob['modelRetry'];
}

/** The longest wait before a step whose model call failed is tried again. */
const LONGEST_MODEL_RETRY_MS = 60_000;

/**
 * Advances one run until it parks or ends. It holds the run's lease while it works; every write
 * is fenced by that lease, and the model's context is rebuilt from the log on every step.
 */
export class RunEngine {
  private readonly dispatcher: TurnDispatcher;

  /** `agentsForRun`: the agents a run of a tenant agent sees (its version, its powers as enabled now). */
  constructor(
    private readonly resources: EngineResources,
    private readonly leaseMs: number,
    private readonly agentsForRun?: (run: Run) => Promise<RunAgents>,
  ) {
    this.dispatcher = new TurnDispatcher(resources);
  }

  /** One step, with a log line naming the run and how the step ended. */
  async advance(job: RunJob, shutdown?: AbortSignal): Promise<AdvanceOutcome> {
    const started = Date.now();
    const outcome = await this.step(job, shutdown);
    // Parked on a question or an approval: this line links the run to its interaction.
    const parkedOn = outcome.status === 'parked' ? { interactionId: outcome.interactionId } : {};
    const line = { runId: job.runId, tenant: job.tenant, wake: job.wake, outcome: outcome.status, ms: Date.now() - started, ...parkedOn };
    const { logger } = this.resources;
    if (outcome.status === 'lost') {
      logger.warn(line, 'run step stopped: another worker took the run over');
    } else if (outcome.status === 'released') {
      logger.info(line, 'run handed back: this worker is shutting down');
    } else {
      logger.info(line, 'run step done');
    }
    return outcome;
  }

  /** `shutdown` aborts the model call in flight and hands the run back between two steps. */
  private async step(job: RunJob, shutdown?: AbortSignal): Promise<AdvanceOutcome> {
    // The lease is the first round trip: it hands back the run under it and the log this worker lacks.
    const token = randomUUID();
    const logFrom = this.resources.logs.readFrom(job.tenant, job.runId);
    const acquired = await this.resources.store.runs.acquire(job.tenant, job.runId, '', token, { worker: this.resources.workerId, logFrom, jobWake: job.wake });
    if (acquired.status === 'busy') {
      return acquired;
    }
    if (acquired.status === 'idle') {
      // A sub-agent that ended (this job is a retry) may have died before its parent's enqueue.
      if (acquired.parentRunId && TERMINAL_STATUSES.includes(acquired.runStatus as RunStatus)) {
        await this.resources.control.ensureQueued(job.tenant, acquired.parentRunId);
      }
      return { status: 'idle', runStatus: acquired.runStatus };
    }
    const { run } = acquired;
    if (acquired.takenOverFrom) {
      this.resources.logger.warn({ runId: job.runId, tenant: job.tenant, from: acquired.takenOverFrom }, 'run taken over: the lease of the worker that held it ran out');
    }
    const lease: Lease = { tenant: job.tenant, runId: job.runId, owner: run.owner, token };
    const log = this.resources.logs.forStep(lease);
    try {
      if (acquired.stopAsked) {
        // Asked while another advancer held the run (it died, or handed it back): nothing more of
        // it runs here, not even the tool calls its last turn left unsettled.
        return await this.cancel(lease, run, null);
      }
      log.absorb(acquired.logLines, logFrom);
      const nothingWaiting = acquired.pendingMessages === 0;
      const engine = run.agentDigest && this.agentsForRun ? new RunEngine({ ...this.resources, agents: await this.agentsForRun(run) }, this.leaseMs) : this;
      return await engine.hold(lease, { run, log, modelRetry: job.modelRetry }, nothingWaiting, shutdown);
    } catch (error) {
      // Handed back: the job's next attempt takes the run at once, not once the lease runs out, and
      // after its last attempt the run can be marked failed (one held under a live lease is left alone).
      await this.resources.store.runs
        .release(lease)
        .catch((failure: unknown) => this.resources.logger.warn({ err: failure, runId: lease.runId }, 'could not hand back a run whose step failed'));
      throw error;
    } finally {
      this.resources.logs.stepDone(lease);
    }
  }

  /** Advances a run this worker holds the lease of, with its heartbeat, until it parks, ends or is lost. */
  private async hold(lease: Lease, acquired: Omit<Held, 'agent'>, nothingWaiting: boolean, shutdown?: AbortSignal): Promise<AdvanceOutcome> {
    const { run } = acquired;
    const { store, agents, logger } = this.resources;
    const agent = agents.find(run.agent);
    if (!agent) {
      return this.end(lease, run, { status: 'failed', reason: 'internal_error', error: agents.whyMissing(run.agent) });
    }
    // Aborted when the lease is lost, a stop is asked (the reason says which) or the worker shuts down
    // (a listener, not AbortSignal.any: that costs a dependent signal per step on the shutdown one).
    const abort = new AbortController();
    const onShutdown = (): void => abort.abort();
    shutdown?.addEventListener('abort', onShutdown, { once: true });
    const heartbeat = setInterval(() => {
      store.runs.renew(lease).then(
        (renewed) => renewed === 'held' || abort.abort(renewed),
        (error: unknown) => logger.warn({ err: error, runId: lease.runId }, 'lease renewal failed'),
      );
    }, Math.max(250, Math.floor(this.leaseMs / 3)));
    try {
      return await this.loop(lease, { ...acquired, agent }, nothingWaiting, abort.signal, shutdown);
    } catch (error) {
      // Another worker took the run over; it carries on from the log, this one just stops.
      if (error instanceof LeaseLostError) {
        return { status: 'lost' };
      }
      throw error;
    } finally {
      clearInterval(heartbeat);
      shutdown?.removeEventListener('abort', onShutdown);
    }
  }

  private async loop(lease: Lease, held: Held, nothingWaiting: boolean, signal: AbortSignal, shutdown?: AbortSignal): Promise<AdvanceOutcome> {
    const { store } = this.resources;
    const { run, agent, log } = held;
    let resumed = false;
    // When the lease step found no message waiting (a stop asked before it ended the run there) and
    // the first model call follows at once (no tool ran meanwhile), take-messages has nothing to do.
    // A stop asked in that instant is seen by the append (or park) after the call.
    let nothingToTake = nothingWaiting;
    for (;;) {
      if (shutdown?.aborted) {
        return this.release(lease, run);
      }
      const entries = await log.read();
      if (!resumed) {
        resumed = true;
        observeResume(entries, this.resources.store.ctx.clock.nowMs());
      }
      const conversation = buildConversation(entries);
      const view: RunView = { run, agent, stage: stageOf(agent, conversation), conversation };
      const recorded = conversation.openTurn ? null : recordedEnding(entries);
      if (recorded) {
        // The previous worker recorded the ending call's result and died before ending the run.
        return this.end(lease, run, recorded);
      }
      if (conversation.openTurn) {
        nothingToTake = false;
        const settled = await this.dispatcher.settle(lease, view, conversation.openTurn.calls);
        const next = await this.afterSettle(lease, run, settled);
        if (next) {
          return next;
        }
        continue;
      }
      // Between inference calls: what the person said meanwhile joins the conversation.
      if ((view.stage?.accepts_messages ?? true) && !nothingToTake) {
        const taken = await store.messages.take(lease);
        if (taken.status !== 'ok') {
          return taken.status === 'lost' ? { status: 'lost' } : this.cancel(lease, run, null);
        }
        if (taken.messageIds.length > 0) {
          continue;
        }
      }
      nothingToTake = false;
      if (conversation.endedWithoutTools && view.stage && (view.stage.transitions.length > 0 || view.stage.points.length > 0)) {
        // A stage is left through its exit, where its checkpoints fire; a turn without tools is no exit.
        const nudged = await this.nudge(lease, view.stage, conversation.iterations);
        if (nudged.status !== 'ok') {
          return nudged.status === 'lost' ? { status: 'lost' } : this.cancel(lease, run, null);
        }
        continue;
      }
      if (conversation.endedWithoutTools) {
        const summary = summaryOfReply(conversation.lastText);
        return this.end(lease, run, { status: 'finished', reason: 'no_tool_calls', ...(summary === undefined ? {} : { summary }) });
      }
      if (conversation.iterations >= agent.limits.max_iterations) {
        return this.end(lease, run, { status: 'finished', reason: 'max_iterations' });
      }
      const stepped = await this.callModel(lease, view, held.modelRetry, signal, shutdown);
      if (stepped) {
        return stepped;
      }
    }
  }

  /** One model turn, recorded in the log with its events. Returns an outcome only when the loop stops. */
  private async callModel(lease: Lease, view: RunView, putOff: RunJob['modelRetry'], signal: AbortSignal, shutdown?: AbortSignal): Promise<AdvanceOutcome | null> {
    const { store } = this.resources;
    const { run, agent, stage, conversation } = view;
    const deltas = new DeltaEmitter(store.runs, lease);
    let turn;
    try {
      turn = await this.resources.modelFor(agent).complete({
        system: systemPromptFor(agent, stage, conversation.documents, run.unattended),
        messages: conversation.messages,
        tools: toolSpecs(toolsOffered(view)),
        onTextDelta: (text) => deltas.push(text),
        signal,
      });
    } catch (error) {
      await deltas.drain();
      if (signal.aborted) {
        // The turn is dropped unrecorded: whoever advances the run next asks the model again. A call
        // given up for a stop ends the run now (release does), not once the call would have returned.
        return shutdown?.aborted || signal.reason === 'stop_requested' ? this.release(lease, view.run) : { status: 'lost' };
      }
      if (isModelError(error)) {
        // Counted per model call: the turn a call would record is the run's next (`iterations`).
        const turn = conversation.iterations;
        const spent = putOff?.turn === turn ? putOff.count : 0;
        const { steps, firstDelayMs } = this.resources.modelRetry;
        if (error.retryable && spent < steps) {
          // The turn was not recorded: asking again later is safe. Jittered, so that runs an
          // overload failed together do not all come back at once.
          const delay = Math.min(LONGEST_MODEL_RETRY_MS, firstDelayMs * 2 ** spent);
          this.resources.logger.warn({ runId: lease.runId, tenant: lease.tenant, err: error.message, kind: error.kind, tries: spent + 1 }, 'model call failed; the step is tried again later');
          const handedBack = await this.release(lease, view.run);
          // Never sooner than the API asked (a retry-after too long for the SDK to sleep on).
          const retryInMs = Math.max(error.retryAfterMs ?? 0, Math.round(delay * (0.8 + Math.random() * 0.4)));
          return handedBack.status === 'released' ? { status: 'retry', retryInMs, modelRetry: { turn, count: spent + 1 } } : handedBack;
        }
        const tries = error.retryable ? ` (its step was tried ${spent + 1} times)` : '';
        return this.end(lease, run, { status: 'failed', reason: 'model_error', error: `${error.message}${tries}` });
      }
      throw error;
    }
    await deltas.drain();
    const toolCalls: ToolCall[] = turn.toolCalls.map((call) => ({
      toolUseId: call.id,
      effectId: `fx_${randomUUID()}`,
      name: call.name,
      input: call.input,
    }));
    const events: EventDraft[] = [
      ...(turn.text ? [{ type: 'message' as const, data: { text: turn.text } }] : []),
      ...toolCalls.map((call) => ({
        type: 'tool.call' as const,
        data: { toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, input: call.input },
      })),
    ];
    const entry: LogEntry = { type: 'assistant', text: turn.text, toolCalls, at: this.resources.store.ctx.clock.now().toISOString() };
    if (turn.stopReason === 'max_tokens') {
      return this.cutOff(lease, run, entry, events, conversation.iterations);
    }
    const hopeless = HOPELESS_STOPS[turn.stopReason];
    if (hopeless) {
      // Cut off where asking again would only repeat it: the turn is kept (none of its calls runs) and the run fails.
      const stopped = await this.appendedOrStopped(lease, run, await this.resources.logs.append(lease, withCallsRefused(entry, events, turn.stopReason), events));
      return stopped ?? this.end(lease, run, { status: 'failed', reason: 'model_error', error: hopeless });
    }
    const question = this.dispatcher.questionOf(lease, view, toolCalls);
    if (question) {
      // A turn that only asks: the turn, its question and the park are one step.
      return this.park(lease, run, question, { entries: [entry], events });
    }
    return this.appendedOrStopped(lease, run, await this.resources.logs.append(lease, entry, events));
  }

  /** Null when the loop goes on after an append; else how it stopped (a takeover, or a stop asked meanwhile). */
  private appendedOrStopped(lease: Lease, run: Run, appended: AppendResult): Promise<AdvanceOutcome | null> | AdvanceOutcome | null {
    switch (appended.status) {
      case 'ok':
        return null;
      case 'lost':
        return { status: 'lost' };
      case 'cancelled':
        return this.cancel(lease, run, null);
    }
  }

  private async afterSettle(lease: Lease, run: Run, settled: SettleResult): Promise<AdvanceOutcome | null> {
    switch (settled.status) {
      case 'settled':
        return null;
      case 'lost':
        return { status: 'lost' };
      case 'cancelled':
        return this.cancel(lease, run, null);
      case 'end':
        return this.end(lease, run, settled.ending);
      case 'stop': {
        const result = await this.resources.control.stopHeld(lease, run, settled.by, null);
        return result.status === 'cancelled' ? { status: 'ended', runStatus: 'cancelled' } : { status: 'lost' };
      }
      case 'park':
        return this.park(lease, run, settled);
    }
  }

  /** Parks as settled; `turn`: the model turn that asked, recorded in the same step. Null when a wake came meanwhile. */
  private async park(lease: Lease, run: Run, settled: Parking, turn: { entries: LogEntry[]; events: EventDraft[] } = { entries: [], events: [] }): Promise<AdvanceOutcome | null> {
    const records = settled.record ? [...turn.entries, settled.record] : turn.entries;
    const parked = await this.resources.store.runs.park(lease, settled.waitReason, settled.interactionId, settled.open, records, turn.events);
    switch (parked.status) {
      case 'parked':
        if (parked.deadlineTimer !== null) {
          await this.resources.queues.scheduleDeadlineTimer(lease.tenant, parked.deadlineTimer, this.resources.store.ctx.clock.nowMs());
        }
        return { status: 'parked', interactionId: settled.interactionId };
      case 'continue':
        // The wake may carry a log entry (an answer) written after this step's last append.
        this.resources.logs.woken(lease);
        return null;
      case 'lost':
        return { status: 'lost' };
      case 'cancelled':
        return this.cancel(lease, run, { id: settled.interactionId, waitReason: settled.waitReason });
    }
  }

  /**
   * A turn its output limit cut off. Its last tool call may have lost arguments without a trace (the
   * partial JSON is read as far as it goes), so none of its calls runs: each gets an error result
   * saying so. A cut-off reply without calls is not the run's end: the model is told to go on.
   */
  private async cutOff(lease: Lease, run: Run, turn: Extract<LogEntry, { type: 'assistant' }>, events: EventDraft[], iteration: number): Promise<AdvanceOutcome | null> {
    const entries = withCallsRefused(turn, events, 'max_tokens');
    if (turn.toolCalls.length === 0) {
      const messageId = `cut-off-${iteration}`;
      entries.push({ type: 'user_message', messageId, text: 'Your reply was cut off at its output limit (max_tokens). Go on from where it stopped, more briefly.', by: { kind: 'system' }, at: turn.at });
      events.push({ type: 'message.injected', data: { messageIds: [messageId] } });
    }
    return this.appendedOrStopped(lease, run, await this.resources.logs.append(lease, entries, events));
  }

  /** Tells the model how to leave its stage. */
  private nudge(lease: Lease, stage: Stage, iteration: number): Promise<AppendResult> {
    const how = stage.transitions.length > 0 ? `call complete_stage (next: ${stage.transitions.join(' or ')})` : 'call finish';
    const messageId = `nudge-${iteration}`;
    return this.resources.logs.append(
      lease,
      { type: 'user_message', messageId, text: `To move on from stage ${stage.name}, ${how}.`, by: { kind: 'system' }, at: this.resources.store.ctx.clock.now().toISOString() },
      [{ type: 'message.injected', data: { messageIds: [messageId] } }],
    );
  }

  /** Hands the run back for a later step; one a stop was asked of meanwhile is ended instead. */
  private async release(lease: Lease, run: Run): Promise<AdvanceOutcome> {
    const released = await this.resources.store.runs.release(lease);
    return released === 'cancelled' ? this.cancel(lease, run, null) : { status: released };
  }

  private async end(lease: Lease, run: Run, ending: RunEnding): Promise<AdvanceOutcome> {
    const ended = await this.resources.control.end(lease, ending, run.parentRunId ? { parentRunId: run.parentRunId } : {});
    switch (ended.status) {
      case 'lost':
        return { status: 'lost' };
      case 'stop':
        // A stop asked after the last step: it wins over the ending the loop reached.
        return this.cancel(lease, run, null);
      case 'ended':
      case 'already':
        return { status: 'ended', runStatus: ending.status };
    }
  }

  /** A stop was asked while this worker held the run: end it now, with the question it had opened. */
  private async cancel(lease: Lease, run: Run, open: { id: string; waitReason: WaitReason } | null): Promise<AdvanceOutcome> {
    const by = await this.resources.store.runs.cancelRequester(lease.tenant, lease.runId);
    const result = await this.resources.control.stopHeld(lease, run, by, open);
    return result.status === 'cancelled' ? { status: 'ended', runStatus: 'cancelled' } : { status: 'lost' };
  }
}

/** A run taken up right after an answer: how long the answer waited for a worker (both times on Redis's clock). */
function observeResume(entries: LogEntry[], nowMs: number): void {
  const last = entries.at(-1);
  if (last?.type === 'answer') {
    metrics.answerToResume.observe(Math.max(0, nowMs - Date.parse(last.at)) / 1000);
  }
}

function stageOf(agent: AgentDefinition, conversation: Conversation): Stage | undefined {
  return conversation.stage === null ? undefined : agent.stages.find((stage) => stage.name === conversation.stage);
}

