import type { Answer, Outcome, Prompt } from '@parley/contracts';
import { errorResult, okResult, type ToolResult } from './tool-result';

export const NO_ANSWER_ERROR = 'no answer: the person did not answer before the deadline; continue with what you have';
export const CANCELLED_ERROR = 'cancelled: the question was withdrawn';
export const SKIPPED_FOR_QUESTION_ERROR = 'skipped: a question to the user took precedence; call this tool again after the answer if still needed';

/** Raised when an answer does not belong to the prompt it resolves: a bug upstream, never the model's doing. */
export class ResolutionMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResolutionMismatchError';
  }
}

/**
 * The tool_result the model gets once a question is resolved. An expired or cancelled question is
 * not an error of the model's: the result says so and the run carries on.
 */
export function renderResolution(prompt: Prompt, outcome: Outcome, answer?: Answer): ToolResult {
  switch (outcome) {
    case 'expired':
      return errorResult(NO_ANSWER_ERROR, false);
    case 'cancelled':
      return errorResult(CANCELLED_ERROR, false);
    case 'answered':
      if (answer === undefined) {
        throw new ResolutionMismatchError(`a ${prompt.kind} interaction was answered without an answer`);
      }
      return okResult({ answer: answerForModel(prompt, answer) });
  }
}

function answerForModel(prompt: Prompt, answer: Answer): unknown {
  if (answer.kind !== prompt.kind) {
    throw new ResolutionMismatchError(`a ${prompt.kind} interaction got a ${answer.kind} answer`);
  }
  switch (answer.kind) {
    case 'free_text':
    case 'edit_text':
      return answer.text;
    case 'multiple_choice':
      if (prompt.kind === 'multiple_choice' && prompt.multi) {
        return answer.labels;
      }
      if (answer.labels.length !== 1) {
        throw new ResolutionMismatchError(`a single-choice interaction got ${answer.labels.length} labels`);
      }
      return answer.labels[0];
    case 'confirm':
      return answer.confirmed;
    case 'review': {
      const feedback = answer.feedback?.trim() ?? '';
      return { approved: answer.approved, feedback: feedback === '' ? null : feedback };
    }
    case 'tool_approval':
      throw new ResolutionMismatchError('an approval is not the result of a call: the call runs (or is refused) once it is resolved');
  }
}

/** The result of a human tool called once the loop's question budget is spent (0: the agent may not ask). */
export function budgetExhaustedResult(max: number): ToolResult {
  if (max <= 0) {
    return errorResult('not allowed: this agent may not ask the user questions; continue with what you have, or call finish');
  }
  const questions = max === 1 ? '1 question' : `${max} questions`;
  return errorResult(
    `question budget used up: you have asked the user ${questions}, the most allowed in this loop; ` +
      'continue with what you have, or call finish',
  );
}

/** The result of a tool call put off because a question to the person in the same turn went first. */
export function skippedForQuestionResult(): ToolResult {
  return errorResult(SKIPPED_FOR_QUESTION_ERROR);
}
