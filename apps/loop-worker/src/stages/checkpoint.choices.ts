import type { InteractionPoint } from '@parley/contracts';
import { matchOption, normaliseOption } from './option.match';

/** What picking an option does: approve, send the stage back with a directive, edit the output, or cancel the run. */
export type ChoiceRole = 'approve' | 'revise' | 'edit' | 'abort';

export interface PointChoice {
  /** As declared (or a default label, see menuChoices). */
  label: string;
  role: ChoiceRole;
  /** role 'revise': the text added to the conversation. */
  directive?: string;
  /** A label Parley added because the point declared fewer than 2 options. */
  isDefault?: boolean;
}

/** When labels collide, the stronger role wins: cancelling beats editing beats revising beats approving. */
const ROLE_PRIORITY: Record<ChoiceRole, number> = { abort: 0, edit: 1, revise: 2, approve: 3 };

const DEFAULT_APPROVE_LABELS = ['Approve', 'Continue'] as const;
const DEFAULT_REVISE_LABELS = ['Revise', 'Try again'] as const;

/**
 * The point's declared options, each label once, in display order: `options`, directive keys,
 * `edit_options`, `abort_options`. A label declared in several lists takes the strongest role
 * (abort > edit > directive > approve), so an author's mistake never turns a cancel into an approval.
 */
export function declaredChoices(point: InteractionPoint): PointChoice[] {
  const roles = new Map<string, ChoiceRole>();
  const order: string[] = [];
  const add = (label: string, role: ChoiceRole): void => {
    const known = roles.get(label);
    if (known === undefined) {
      order.push(label);
      roles.set(label, role);
    } else if (ROLE_PRIORITY[role] < ROLE_PRIORITY[known]) {
      roles.set(label, role);
    }
  };
  point.options.forEach((label) => add(label, 'approve'));
  Object.keys(point.directives).forEach((label) => add(label, 'revise'));
  point.edit_options.forEach((label) => add(label, 'edit'));
  point.abort_options.forEach((label) => add(label, 'abort'));
  return order.map((label) => {
    const role = roles.get(label) ?? 'approve';
    const directive = role === 'revise' ? point.directives[label] : undefined;
    return directive === undefined ? { label, role } : { label, role, directive };
  });
}

/**
 * The choices of a multiple_choice checkpoint: the declared ones, plus defaults when there are
 * fewer than 2 (a menu needs 2). A point with no approving option gets "Approve"; a point still
 * short of 2 gets "Revise" (which sends the stage back with defaultReviseDirective). So: no
 * options → Approve, Revise; one approving option → it, Revise; one other option → it, Approve.
 * A default label that would match a declared one once normalised ("approve") is replaced by
 * its alternative ("Continue", "Try again").
 */
export function menuChoices(point: InteractionPoint): PointChoice[] {
  const choices = declaredChoices(point);
  const taken = (label: string): boolean => choices.some((choice) => normaliseOption(choice.label) === normaliseOption(label));
  const pick = (labels: readonly string[]): string => labels.find((label) => !taken(label)) ?? labels[labels.length - 1];
  if (choices.length < 2 && !choices.some((choice) => choice.role === 'approve')) {
    choices.push({ label: pick(DEFAULT_APPROVE_LABELS), role: 'approve', isDefault: true });
  }
  if (choices.length < 2) {
    const label = pick(DEFAULT_REVISE_LABELS);
    choices.push({ label, role: 'revise', directive: defaultReviseDirective(point, label), isDefault: true });
  }
  return choices;
}

/** The choice the text names (exact first, then normalised; by role priority), or null. */
export function findChoice(text: string, choices: readonly PointChoice[]): PointChoice | null {
  const ranked = [...choices].sort((a, b) => ROLE_PRIORITY[a.role] - ROLE_PRIORITY[b.role]);
  const label = matchOption(text, ranked.map((choice) => choice.label));
  return label === null ? null : (ranked.find((choice) => choice.label === label) ?? null);
}

/** What the model is told when the person picks the default "Revise" option. */
export function defaultReviseDirective(point: InteractionPoint, label: string): string {
  return `The person chose "${label}" at the checkpoint: ${sentence(point.prompt)} Revise your work and try again.`;
}

/** What the model is told when the person answers no to a confirm checkpoint. */
export function notConfirmedDirective(point: InteractionPoint): string {
  return `The person did not confirm: ${sentence(point.prompt)} Revise your work and try again.`;
}

/** The text as a sentence: trimmed, ending in ".", "?" or "!". */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.?!]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
