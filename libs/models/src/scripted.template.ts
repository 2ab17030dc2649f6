import type { ModelMessage } from './model.types';

export const LAST_ANSWER_PLACEHOLDER = '{{last_answer}}';

/**
 * The plain answer carried by the most recent `tool_result` in the conversation: the `answer` of a
 * `{"ok":true,"answer":X}` result (a string as is, a list of strings joined with ", ", anything
 * else as JSON), otherwise the raw content. Empty when no tool has answered yet.
 */
export function lastAnswer(messages: readonly ModelMessage[]): string {
  for (let m = messages.length - 1; m >= 0; m--) {
    const blocks = messages[m].content;
    for (let b = blocks.length - 1; b >= 0; b--) {
      const block = blocks[b];
      if (block.type === 'tool_result') {
        return plainAnswer(block.content);
      }
    }
  }
  return '';
}

function plainAnswer(content: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return content;
  }
  if (!isRecord(parsed) || parsed.ok !== true || !('answer' in parsed)) {
    return content;
  }
  const answer = parsed.answer;
  if (typeof answer === 'string') {
    return answer;
  }
  if (Array.isArray(answer) && answer.every((item) => typeof item === 'string')) {
    return answer.join(', ');
  }
  return JSON.stringify(answer);
}

/** Replaces the placeholder in every string of `value`, however deep; keys and non-strings stay. */
export function fillTemplate<T>(value: T, answer: string): T {
  return fill(value, answer) as T;
}

function fill(value: unknown, answer: string): unknown {
  if (typeof value === 'string') {
    // split/join, not replace(): an answer containing "$&" must land verbatim.
    return value.split(LAST_ANSWER_PLACEHOLDER).join(answer);
  }
  if (Array.isArray(value)) {
    return value.map((item) => fill(item, answer));
  }
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item, answer)]));
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
