import type { Answer, InteractionPoint, Outcome } from '@parley/contracts';
import { declaredChoices, findChoice, menuChoices, notConfirmedDirective, type PointChoice } from './checkpoint.choices';

/** What a checkpoint's decision (purpose `decide`) asks the worker to do. */
export type CheckpointAction =
  /** note: what the person said or picked, added to the conversation (null: nothing to add). */
  | { kind: 'approve'; note: string | null }
  /** The directive is added to the conversation and the stage runs again. */
  | { kind: 'revise'; directive: string; option: string }
  /** Open the stage's latest output for the person to edit. */
  | { kind: 'edit'; option: string }
  /** Cancel the run at once; option null: the run was stopped (the interaction was cancelled). */
  | { kind: 'abort'; option: string | null }
  /** Nobody answered in time: the point lets the stage move on with nothing added. */
  | { kind: 'proceed'; why: 'deadline' }
  | { kind: 'fail'; error: string };

/** The option recorded with a revise for a confirm answered no. */
export const NOT_CONFIRMED_OPTION = 'No';

/**
 * Reads a checkpoint decision. By outcome:
 * - cancelled (the run was stopped) → abort(null);
 * - expired → proceed (deadline), except in an unattended run at a point that asks even then
 *   (`unattended: ask`), where nobody will ever answer: fail, saying the checkpoint expired;
 * - answered, by the answer's kind (not the point's style, so an answer always reads as recorded):
 *   - multiple_choice: the picked label, matched against the menu (abort → edit → directive →
 *     approve, exact before normalised); an approving label approves with the note "<point>: <label>".
 *     A label the menu no longer has (the gateway took it from the menu as asked, so the agent's
 *     definition changed meanwhile) fails the run: it may have meant to cancel, never approve on a guess;
 *   - free_text: the text matched the same way against the declared options (the "Approve" /
 *     "Revise" menu defaults are not options there); a matching approve option gives the note
 *     "<point>: <option>", unmatched text approves with the trimmed text as the note (null if blank);
 *   - confirm: yes approves with no note; no revises with notConfirmedDirective (option "No");
 *   - any other kind, or no answer at all, fails the run: the interaction was not a checkpoint decision.
 */
export function interpretDecision(point: InteractionPoint, outcome: Outcome, answer: Answer | undefined, unattendedRun: boolean): CheckpointAction {
  switch (outcome) {
    case 'cancelled':
      return { kind: 'abort', option: null };
    case 'expired':
      return unattendedRun && point.unattended === 'ask'
        ? { kind: 'fail', error: `checkpoint "${point.name}" expired without an answer, and nobody else will answer it in this unattended run` }
        : { kind: 'proceed', why: 'deadline' };
    case 'answered':
      break;
  }
  if (answer === undefined) {
    return { kind: 'fail', error: `checkpoint "${point.name}" was answered without an answer` };
  }
  switch (answer.kind) {
    case 'multiple_choice': {
      const label = answer.labels[0];
      if (label === undefined) {
        return { kind: 'fail', error: `checkpoint "${point.name}" was answered with no option picked` };
      }
      const choice = findChoice(label, menuChoices(point));
      return choice === null
        ? { kind: 'fail', error: `checkpoint "${point.name}" was answered "${label}", which the agent's checkpoint no longer offers (its definition changed while the checkpoint waited)` }
        : act(point, choice);
    }
    case 'free_text': {
      const text = answer.text.trim();
      const choice = findChoice(text, declaredChoices(point));
      if (choice !== null) {
        return act(point, choice);
      }
      return { kind: 'approve', note: text === '' ? null : text };
    }
    case 'confirm':
      return answer.confirmed
        ? { kind: 'approve', note: null }
        : { kind: 'revise', directive: notConfirmedDirective(point), option: NOT_CONFIRMED_OPTION };
    case 'edit_text':
    case 'review':
    case 'tool_approval':
      return { kind: 'fail', error: `checkpoint "${point.name}" got an answer of kind ${answer.kind}, which does not decide a checkpoint` };
  }
}

function act(point: InteractionPoint, choice: PointChoice): CheckpointAction {
  switch (choice.role) {
    case 'abort':
      return { kind: 'abort', option: choice.label };
    case 'edit':
      return { kind: 'edit', option: choice.label };
    case 'revise':
      return { kind: 'revise', directive: choice.directive ?? point.directives[choice.label] ?? '', option: choice.label };
    case 'approve':
      return { kind: 'approve', note: `${point.name}: ${choice.label}` };
  }
}
