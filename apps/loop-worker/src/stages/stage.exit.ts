import type { Answer, CheckpointRef, InteractionPoint, Outcome, Prompt, Stage } from '@parley/contracts';
import { interpretDecision } from './checkpoint.answer';
import { decidePrompt, editPrompt } from './checkpoint.prompt';

/** Revise and edit rounds allowed at one point per stage visit; the next time it is satisfied regardless. */
export const MAX_CHECKPOINT_ROUNDS = 4;

/** Why a point let the stage move on without a person's approval (the `checkpoint.proceeded` event). */
export type ProceedWhy = 'round_limit' | 'deadline' | 'unattended' | 'not_required';
export type SettleWhy = Exclude<ProceedWhy, 'deadline'>;

/** A checkpoint of the current stage visit, as the log holds it. */
export interface VisitCheckpoint {
  /** The exit call (complete_stage or finish) it belongs to. */
  effectId: string;
  interactionId: string;
  ref: CheckpointRef;
  prompt: Prompt;
  /** Settled on the spot, without a person. */
  auto?: boolean;
  resolution?: { outcome: Outcome; answer?: Answer };
  /** purpose 'edit': the person's text was already recorded as the document. */
  adopted?: boolean;
}

export interface ExitInput {
  /** The stage being left. */
  stage: Stage;
  unattended: boolean;
  /** The current exit call. */
  exitEffectId: string;
  /** The stage's latest output: the person's last edit or the model's output. */
  document: string;
  /** Every checkpoint of this stage visit (all exit calls so far), in log order. */
  visit: VisitCheckpoint[];
}

export type ExitStep =
  /** Open this interaction: the worker appends the checkpoint, publishes it and parks. */
  | { kind: 'present'; ref: CheckpointRef; prompt: Prompt }
  /** Record the checkpoint as settled without a person (auto), then call again. */
  | { kind: 'settle'; ref: CheckpointRef; prompt: Prompt; why: SettleWhy }
  /** Presented and not resolved yet: re-publish and park. */
  | { kind: 'wait'; interactionId: string }
  /** An edit was answered: record the person's text as the document, then call again. */
  | { kind: 'adopt'; interactionId: string; text: string }
  /** End this exit attempt: the model gets the directive and works again. */
  | { kind: 'revise'; point: string; directive: string }
  | { kind: 'abort'; option: string | null }
  | { kind: 'fail'; error: string }
  /** Every point is satisfied: the stage moves on. */
  | { kind: 'approved'; notes: string[]; proceeded: Array<{ point: string; why: ProceedWhy }> };

type PointStep = Exclude<ExitStep, { kind: 'approved' }> | { kind: 'satisfied'; note: string | null; why: ProceedWhy | null };

/**
 * What the worker does next at a stage exit, from what the log holds; pure, so it is called
 * again after every step (and after a restart) and picks up where the exit left off.
 *
 * Points are taken in declared order, and each exit call asks every point afresh: what happened
 * in earlier exit calls of the visit only counts toward the point's rounds. Within the current
 * call a point is satisfied when its latest decision approved or proceeded (deadline), or when it
 * was settled on the spot. An edit decision is followed by an edit interaction (same round); once
 * its text is adopted (or it expired: the document stays) the point is asked again, one round
 * later. The round of a new presentation is the number of revise and edit decisions at the point
 * over the whole visit; at MAX_CHECKPOINT_ROUNDS the point is settled (`round_limit`) instead.
 * In an unattended run a point that is not required is settled (`not_required`), and one that
 * auto-approves is settled (`unattended`); one that asks is presented like in an attended run.
 */
export function nextExitStep(input: ExitInput): ExitStep {
  const { stage } = input;
  if (stage.mode === 'autonomous' || stage.points.length === 0) {
    return { kind: 'approved', notes: [], proceeded: [] };
  }
  const visit = dedupe(input.visit).filter((checkpoint) => checkpoint.ref.stage === stage.name);
  const notes: string[] = [];
  const proceeded: Array<{ point: string; why: ProceedWhy }> = [];
  for (const point of stage.points) {
    const step = pointStep(
      input,
      point,
      visit.filter((checkpoint) => checkpoint.ref.point === point.name),
    );
    if (step.kind !== 'satisfied') {
      return step;
    }
    if (step.note !== null) {
      notes.push(step.note);
    }
    if (step.why !== null) {
      proceeded.push({ point: point.name, why: step.why });
    }
  }
  return { kind: 'approved', notes, proceeded };
}

function pointStep(input: ExitInput, point: InteractionPoint, checkpoints: VisitCheckpoint[]): PointStep {
  const { stage, unattended, exitEffectId } = input;
  let rounds = checkpoints.filter((checkpoint) => checkpoint.effectId !== exitEffectId && wasRound(point, checkpoint, unattended)).length;
  /** An edit decision of the current call still waiting for its edit interaction. */
  let editing: VisitCheckpoint | null = null;
  for (const checkpoint of checkpoints.filter((each) => each.effectId === exitEffectId)) {
    if (checkpoint.ref.purpose === 'edit') {
      if (editing === null) {
        continue; // not preceded by an edit decision: nothing to do with it
      }
      editing = null;
      if (checkpoint.resolution === undefined) {
        return { kind: 'wait', interactionId: checkpoint.interactionId };
      }
      switch (checkpoint.resolution.outcome) {
        case 'cancelled':
          return { kind: 'abort', option: null };
        case 'expired':
          continue; // keep the document, ask again
        case 'answered': {
          if (checkpoint.adopted === true) {
            continue;
          }
          const answer = checkpoint.resolution.answer;
          if (answer?.kind !== 'edit_text') {
            return { kind: 'fail', error: `the edit at checkpoint "${point.name}" was answered without a text` };
          }
          return { kind: 'adopt', interactionId: checkpoint.interactionId, text: answer.text };
        }
      }
    }
    editing = null;
    if (checkpoint.auto === true) {
      return { kind: 'satisfied', note: null, why: settleReason(point, unattended, rounds) ?? autoReason(checkpoint) };
    }
    if (checkpoint.resolution === undefined) {
      return { kind: 'wait', interactionId: checkpoint.interactionId };
    }
    const action = interpretDecision(point, checkpoint.resolution.outcome, checkpoint.resolution.answer, unattended);
    switch (action.kind) {
      case 'approve':
        return { kind: 'satisfied', note: action.note, why: null };
      case 'proceed':
        return { kind: 'satisfied', note: null, why: action.why };
      case 'revise':
        return { kind: 'revise', point: point.name, directive: action.directive };
      case 'abort':
        return { kind: 'abort', option: action.option };
      case 'fail':
        return { kind: 'fail', error: action.error };
      case 'edit':
        rounds += 1;
        editing = checkpoint;
        continue;
    }
  }
  if (editing !== null) {
    return {
      kind: 'present',
      ref: { stage: stage.name, point: point.name, round: editing.ref.round, purpose: 'edit' },
      prompt: editPrompt(point, input.document),
    };
  }
  const ref: CheckpointRef = { stage: stage.name, point: point.name, round: rounds, purpose: 'decide' };
  const prompt = decidePrompt(point, input.document.trim() === '' ? null : input.document);
  const why = settleReason(point, unattended, rounds);
  return why === null ? { kind: 'present', ref, prompt } : { kind: 'settle', ref, prompt, why };
}

/** Why a point due to be asked is settled without a person instead, or null: ask. */
function settleReason(point: InteractionPoint, unattended: boolean, rounds: number): SettleWhy | null {
  if (unattended && !point.required) {
    return 'not_required';
  }
  if (unattended && point.unattended === 'auto_approve') {
    return 'unattended';
  }
  return rounds >= MAX_CHECKPOINT_ROUNDS ? 'round_limit' : null;
}

/** A checkpoint settled under circumstances that no longer explain it (e.g. the definition changed). */
function autoReason(checkpoint: VisitCheckpoint): SettleWhy {
  return checkpoint.ref.round >= MAX_CHECKPOINT_ROUNDS ? 'round_limit' : 'unattended';
}

/** A decision of an earlier exit call that used up a round: revise or edit. */
function wasRound(point: InteractionPoint, checkpoint: VisitCheckpoint, unattended: boolean): boolean {
  if (checkpoint.ref.purpose !== 'decide' || checkpoint.auto === true || checkpoint.resolution === undefined) {
    return false;
  }
  const action = interpretDecision(point, checkpoint.resolution.outcome, checkpoint.resolution.answer, unattended);
  return action.kind === 'revise' || action.kind === 'edit';
}

/** One entry per interaction (a step recorded twice, e.g. after a retry), at its first place, resolved if any copy is. */
function dedupe(visit: readonly VisitCheckpoint[]): VisitCheckpoint[] {
  const byId = new Map<string, VisitCheckpoint>();
  for (const checkpoint of visit) {
    const seen = byId.get(checkpoint.interactionId);
    if (seen === undefined) {
      byId.set(checkpoint.interactionId, checkpoint);
    } else {
      byId.set(checkpoint.interactionId, {
        ...seen,
        resolution: seen.resolution ?? checkpoint.resolution,
        adopted: seen.adopted === true || checkpoint.adopted === true,
      });
    }
  }
  return [...byId.values()];
}
