import { randomUUID } from 'node:crypto';
import { DEFAULT_STAGE, type AnswerBody, type CheckpointRef, type EndReason, type EventData, type Interaction, type Prompt, type Run } from '@parley/contracts';
import { approvalPrompt, describeCall } from '@parley/tools';
import { FakeGatewayState } from './fake.gateway.state';

/**
 * The helpers tests script runs with: messages and tool calls, questions, approvals and
 * checkpoints, stages, sub-agents, stops, claims and answers from someone else, and run endings.
 */
export abstract class FakeGatewayScript extends FakeGatewayState {
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
}
