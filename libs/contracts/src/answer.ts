import type { AnswerBody } from './api.schema';
import { InvalidAnswerError, type ErrorIssue } from './errors';
import type { Answer, Prompt } from './interaction.schema';

const FIELDS_BY_KIND: Record<Prompt['kind'], ReadonlyArray<keyof AnswerBody>> = {
  free_text: ['text'],
  multiple_choice: ['choice', 'choices'],
  confirm: ['confirmed'],
  edit_text: ['text'],
  review: ['approved', 'feedback'],
  tool_approval: ['decision', 'reason', 'input', 'directory'],
};

export type ApprovalPrompt = Extract<Prompt, { kind: 'tool_approval' }>;

/**
 * Completes a tool_approval answer: it needs the tool's own schema and grant rules, which live
 * with the tools. Pushes issues and returns undefined when the answer cannot be accepted.
 */
export type ApprovalAnswerer = (prompt: ApprovalPrompt, body: AnswerBody, issues: ErrorIssue[]) => Answer | undefined;

/**
 * Checks a client's answer against the interaction it answers and returns the answer to record.
 * Throws InvalidAnswerError (422) naming the field; nothing is written on failure.
 */
export function validateAnswer(prompt: Prompt, body: AnswerBody, answerApproval: ApprovalAnswerer): Answer {
  const issues: ErrorIssue[] = [];
  const allowed = FIELDS_BY_KIND[prompt.kind];
  for (const key of Object.keys(body) as Array<keyof AnswerBody>) {
    if (body[key] !== undefined && !allowed.includes(key)) {
      issues.push({ field: key, reason: `not used by ${prompt.kind} interactions (use ${allowed.join(' or ')})` });
    }
  }
  if (issues.length > 0) {
    throw new InvalidAnswerError(issues);
  }
  const answer = prompt.kind === 'tool_approval' ? answerApproval(prompt, body, issues) : answerFor(prompt, body, issues);
  if (issues.length > 0 || answer === undefined) {
    throw new InvalidAnswerError(issues);
  }
  return answer;
}

function answerFor(prompt: Exclude<Prompt, ApprovalPrompt>, body: AnswerBody, issues: ErrorIssue[]): Answer | undefined {
  switch (prompt.kind) {
    case 'free_text':
    case 'edit_text':
      if (body.text === undefined) {
        issues.push({ field: 'text', reason: `required for ${prompt.kind} interactions` });
        return undefined;
      }
      return { kind: prompt.kind, text: body.text };
    case 'confirm':
      if (body.confirmed === undefined) {
        issues.push({ field: 'confirmed', reason: 'required (true or false) for a confirm interaction' });
        return undefined;
      }
      return { kind: 'confirm', confirmed: body.confirmed };
    case 'review':
      if (body.approved === undefined) {
        issues.push({ field: 'approved', reason: 'required (true or false) for a review interaction' });
        return undefined;
      }
      return { kind: 'review', approved: body.approved, ...(body.feedback === undefined ? {} : { feedback: body.feedback }) };
    case 'multiple_choice':
      return choiceAnswer(prompt, body, issues);
  }
}

function choiceAnswer(prompt: Extract<Prompt, { kind: 'multiple_choice' }>, body: AnswerBody, issues: ErrorIssue[]): Answer | undefined {
  if (body.choice !== undefined && body.choices !== undefined) {
    issues.push({ field: 'choices', reason: 'send either choice or choices, not both' });
    return undefined;
  }
  const picked = body.choices ?? (body.choice === undefined ? undefined : [body.choice]);
  const field = body.choices === undefined ? 'choice' : 'choices';
  if (picked === undefined || picked.length === 0) {
    issues.push({ field, reason: prompt.multi ? 'pick at least one option (choices: [indexes])' : 'required: the 0-based index of an option' });
    return undefined;
  }
  if (!prompt.multi && picked.length > 1) {
    issues.push({ field, reason: 'this question takes exactly one option' });
    return undefined;
  }
  if (new Set(picked).size !== picked.length) {
    issues.push({ field, reason: 'an option is picked twice' });
    return undefined;
  }
  const outOfRange = picked.find((index) => index >= prompt.options.length);
  if (outOfRange !== undefined) {
    issues.push({ field, reason: `option ${outOfRange} is out of range (0..${prompt.options.length - 1})` });
    return undefined;
  }
  return { kind: 'multiple_choice', choices: picked, labels: picked.map((index) => prompt.options[index].label) };
}
