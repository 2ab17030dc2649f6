import { isDeepStrictEqual } from 'node:util';
import type { Answer, AnswerBody, Interaction } from '@parley/contracts';

/**
 * Whether `interaction` was resolved by `subject` with the answer `body` says, as the gateway records
 * it (a deny reason trimmed, edited arguments completed by the tool's defaults).
 */
export function answeredWith(interaction: Interaction, body: AnswerBody, subject: string): boolean {
  const { answer, resolvedBy } = interaction;
  return interaction.status === 'answered' && resolvedBy?.subject === subject && answer !== undefined && sameAnswer(answer, body);
}

function sameAnswer(answer: Answer, body: AnswerBody): boolean {
  switch (answer.kind) {
    case 'free_text':
    case 'edit_text':
      return answer.text === body.text;
    case 'multiple_choice':
      return isDeepStrictEqual(answer.choices, body.choices ?? (body.choice === undefined ? undefined : [body.choice]));
    case 'confirm':
      return answer.confirmed === body.confirmed;
    case 'review':
      return answer.approved === body.approved && answer.feedback === body.feedback;
    case 'tool_approval':
      if (answer.decision !== body.decision) {
        return false;
      }
      if (answer.decision === 'deny') {
        return (answer.reason ?? '') === (body.reason?.trim() ?? '');
      }
      return body.input === undefined ? !answer.edited : answer.input !== undefined && isSubset(body.input, answer.input);
  }
}

function isSubset(given: Record<string, unknown>, recorded: Record<string, unknown>): boolean {
  return Object.entries(given).every(([key, value]) => isDeepStrictEqual(recorded[key], value));
}
