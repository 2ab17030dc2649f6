import { randomUUID } from 'node:crypto';
import type { AgentDefinition, CheckpointRef, EventDraft, LogEntry, Prompt, Role, Stage, ToolCall, WaitReason } from '@parley/contracts';
import type { AppendResult, Lease } from '@parley/store';
import { checkToolInput, errorResult, okResult, prepareFinish, type ToolResult } from '@parley/tools';
import { nextExitStep, type VisitCheckpoint } from '../stages/stage.exit';
import type { EngineResources } from './engine.resources';
import type { RunView, SettleResult } from './run.view';

/** What the stage exit borrows from the dispatcher that owns the turn. */
export interface ExitHooks {
  record(lease: Lease, call: ToolCall, result: ToolResult): Promise<AppendResult>;
  askAndPark(
    lease: Lease,
    agent: AgentDefinition,
    asked: { interactionId: string; waitReason: WaitReason; prompt: Prompt; at: string; checkpoint?: CheckpointRef },
    record?: LogEntry & { type: 'checkpoint' },
  ): SettleResult;
  interrupted(appended: Exclude<AppendResult, { status: 'ok' }>): SettleResult;
}

/** Where an exit call leads once the stage's checkpoints are satisfied. */
type Destination = { kind: 'finish'; summary: string } | { kind: 'stage'; to: Stage | undefined; name: string; output: string };

/**
 * A call that would move the run on (finish, complete_stage). The current stage's interaction
 * points fire first, every time, whatever the model thinks; the step after each answer is worked
 * out from the log by `nextExitStep`, so a restart anywhere resumes where it stood.
 */
export class StageExit {
  constructor(
    private readonly resources: EngineResources,
    private readonly hooks: ExitHooks,
  ) {}

  /** Log entries are stamped on Redis's clock: a checkpoint's deadline counts from its stamp. */
  private stamp(): string {
    return this.resources.store.ctx.clock.now().toISOString();
  }

  async leave(lease: Lease, view: RunView, call: ToolCall): Promise<SettleResult> {
    const destination = this.destination(view, call);
    if ('error' in destination) {
      return this.result(lease, call, errorResult(destination.error));
    }
    const { stage } = view;
    if (!stage || stage.mode !== 'interactive_points' || stage.points.length === 0) {
      return this.moveOn(lease, view, call, destination, [], []);
    }
    const output = destination.kind === 'finish' ? destination.summary : destination.output;
    const region = regionOf(stage);
    if (!view.conversation.documentOrigins.has(call.effectId)) {
      return this.append(lease, { type: 'document', region, text: output, source: 'model', origin: call.effectId, at: this.stamp() }, [
        { type: 'document.updated', data: { region, source: 'model' } },
      ]);
    }
    const step = nextExitStep({
      stage,
      unattended: view.run.unattended,
      exitEffectId: call.effectId,
      document: view.conversation.documents.get(region) ?? output,
      visit: view.conversation.visit.map(toVisitCheckpoint),
    });
    switch (step.kind) {
      case 'present': {
        const entry: LogEntry = { type: 'checkpoint', effectId: call.effectId, interactionId: randomUUID(), ref: step.ref, prompt: step.prompt, at: this.stamp() };
        return this.hooks.askAndPark(lease, view.agent, { interactionId: entry.interactionId, waitReason: 'checkpoint', prompt: step.prompt, at: entry.at, checkpoint: step.ref }, entry);
      }
      case 'settle':
        return this.append(
          lease,
          { type: 'checkpoint', effectId: call.effectId, interactionId: randomUUID(), ref: step.ref, prompt: step.prompt, auto: true, at: this.stamp() },
          [{ type: 'checkpoint.proceeded', data: { stage: stage.name, point: step.ref.point, why: step.why } }],
        );
      case 'wait': {
        const asked = view.conversation.visit.find((c) => c.entry.interactionId === step.interactionId)?.entry;
        if (!asked) {
          return this.result(lease, call, errorResult('the checkpoint this stage waits on is missing from the log'));
        }
        return this.hooks.askAndPark(lease, view.agent, { interactionId: asked.interactionId, waitReason: 'checkpoint', prompt: asked.prompt, at: asked.at, checkpoint: asked.ref });
      }
      case 'adopt':
        return this.append(lease, { type: 'document', region, text: step.text, source: 'person', origin: step.interactionId, at: this.stamp() }, [
          { type: 'document.updated', data: { region, source: 'person' } },
        ]);
      case 'revise':
        return this.result(lease, call, {
          content: JSON.stringify({
            ok: false,
            status: 'revise',
            checkpoint: step.point,
            directive: step.directive,
            note: 'A person asked for changes before this stage can move on. Revise your work accordingly, then call the same tool again.',
          }),
          isError: false,
        });
      case 'abort':
        return { status: 'stop', by: this.abortedBy(view, step.option) };
      case 'fail':
        return { status: 'end', ending: { status: 'failed', reason: 'checkpoint_expired', error: step.error } };
      case 'approved':
        return this.moveOn(
          lease,
          view,
          call,
          destination,
          step.notes,
          step.proceeded.filter((p) => p.why === 'deadline').map((p) => ({ type: 'checkpoint.proceeded' as const, data: { stage: stage.name, point: p.point, why: p.why } })),
        );
    }
  }

  /** The exit call's result, and the stage move (or the run's end) in the same step. */
  private async moveOn(lease: Lease, view: RunView, call: ToolCall, destination: Destination, notes: string[], events: EventDraft[]): Promise<SettleResult> {
    const at = this.stamp();
    const approvedBy = notes.length > 0 ? { notes } : {};
    if (destination.kind === 'finish') {
      const appended = await this.resources.logs.append(lease, this.resultEntry(call, okResult({ ...approvedBy }), at), [this.resultEvent(call, okResult({ ...approvedBy })), ...events]);
      return appended.status === 'ok' ? { status: 'end', ending: { status: 'finished', reason: 'finish', summary: destination.summary } } : this.hooks.interrupted(appended);
    }
    const next = destination.to;
    const result = okResult({ stage: destination.name, ...approvedBy, ...(next?.prompt ? { instructions: next.prompt } : {}) });
    const from = view.stage?.name ?? null;
    const appended = await this.resources.logs.append(
      lease,
      [this.resultEntry(call, result, at), { type: 'stage', from, to: destination.name, at }],
      [this.resultEvent(call, result), ...events, { type: 'stage.entered', data: { stage: destination.name, from } }],
      destination.name,
    );
    return appended.status === 'ok' ? { status: 'settled' } : this.hooks.interrupted(appended);
  }

  private destination(view: RunView, call: ToolCall): Destination | { error: string } {
    if (call.name === 'finish') {
      if (view.stage && view.stage.transitions.length > 0) {
        return { error: `finish ends the run, which is only done from the last stage; call complete_stage (next: ${view.stage.transitions.join(' or ')})` };
      }
      const prepared = prepareFinish(call.input);
      return prepared.ok ? { kind: 'finish', summary: prepared.summary } : { error: prepared.error };
    }
    const checked = checkToolInput('complete_stage', call.input);
    if (!checked.ok) {
      return { error: checked.error };
    }
    const transitions = view.stage?.transitions ?? [];
    const asked = typeof checked.value.next === 'string' ? checked.value.next : undefined;
    const name = asked ?? (transitions.length === 1 ? transitions[0] : undefined);
    if (name === undefined || !transitions.includes(name)) {
      return { error: `next: name the stage to move to, one of: ${transitions.join(', ') || '(none: this is the last stage; call finish)'}` };
    }
    const output = typeof checked.value.output === 'string' ? checked.value.output : '';
    return { kind: 'stage', to: view.agent.stages.find((s) => s.name === name), name, output };
  }

  private abortedBy(view: RunView, option: string | null): { kind: 'user' | 'system'; subject?: string; role?: Role } {
    const last = [...view.conversation.visit].reverse().find((c) => c.answer)?.answer;
    return last?.by.kind === 'user' ? { kind: 'user', ...(last.by.subject ? { subject: last.by.subject } : {}), ...(last.by.role ? { role: last.by.role } : {}) } : { kind: 'system', ...(option ? { subject: option } : {}) };
  }

  private async append(lease: Lease, entry: LogEntry, events: EventDraft[] = []): Promise<SettleResult> {
    const appended = await this.resources.logs.append(lease, entry, events);
    return appended.status === 'ok' ? { status: 'settled' } : this.hooks.interrupted(appended);
  }

  private async result(lease: Lease, call: ToolCall, result: ToolResult): Promise<SettleResult> {
    const appended = await this.hooks.record(lease, call, result);
    return appended.status === 'ok' ? { status: 'settled' } : this.hooks.interrupted(appended);
  }

  private resultEntry(call: ToolCall, result: ToolResult, at: string): LogEntry {
    return { type: 'tool_result', toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, content: result.content, isError: result.isError, at };
  }

  private resultEvent(call: ToolCall, result: ToolResult): EventDraft {
    return { type: 'tool.result', data: { toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, isError: result.isError, content: result.content } };
  }
}

/** The region holding a stage's current output: a declared one, or the stage's own (not shown to the model). */
export function regionOf(stage: Stage): string {
  return stage.points.find((point) => point.document_region)?.document_region ?? `~${stage.name}`;
}

function toVisitCheckpoint(record: RunView['conversation']['visit'][number]): VisitCheckpoint {
  const { entry, answer, adopted } = record;
  return {
    effectId: entry.effectId,
    interactionId: entry.interactionId,
    ref: entry.ref,
    prompt: entry.prompt,
    ...(entry.auto ? { auto: true } : {}),
    ...(answer ? { resolution: { outcome: answer.outcome, ...(answer.answer ? { answer: answer.answer } : {}) } } : {}),
    adopted,
  };
}


