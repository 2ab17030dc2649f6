import type { LogEntryOf, LogEntry, ToolCall } from '@parley/contracts';
import type { ModelBlock, ModelMessage } from '@parley/models';
import { renderResolution, type ToolResult } from '@parley/tools';

/** One call of the newest model turn, with what the log already holds for it. */
export interface OpenCall {
  call: ToolCall;
  result?: ToolResult;
  question?: LogEntryOf<'question'>;
  /** The resolution of `question`, once there is one. */
  answer?: LogEntryOf<'answer'>;
}

/** A run's log, read back: the model's context and where the loop stands. */
export interface Conversation {
  /** The context for the next model call; complete turns only. */
  messages: ModelMessage[];
  /** Model turns taken so far. */
  iterations: number;
  /** Questions asked so far (each one counts against the per-loop budget; approvals do not). */
  questionsAsked: number;
  /** The newest model turn while some of its tool calls have no result yet. */
  openTurn: { calls: OpenCall[] } | null;
  /** The newest model turn had no tool calls: the loop has nothing left to do. */
  endedWithoutTools: boolean;
  lastText: string;
}

/**
 * Rebuilds the conversation from the durable log. Results are keyed by physical effect id and
 * answers by interaction id, so an entry recorded twice (a retried append) is still delivered once.
 */
export function buildConversation(entries: LogEntry[]): Conversation {
  const results = new Map<string, ToolResult>();
  const questions = new Map<string, LogEntryOf<'question'>>();
  const answers = new Map<string, LogEntryOf<'answer'>>();
  const turns: Array<LogEntryOf<'assistant'>> = [];
  let task = '';
  for (const entry of entries) {
    switch (entry.type) {
      case 'task':
        task = entry.text;
        break;
      case 'assistant':
        turns.push(entry);
        break;
      case 'tool_result':
        if (!results.has(entry.effectId)) {
          results.set(entry.effectId, { content: entry.content, isError: entry.isError });
        }
        break;
      case 'question':
        if (!questions.has(entry.effectId)) {
          questions.set(entry.effectId, entry);
        }
        break;
      case 'answer':
        if (!answers.has(entry.interactionId)) {
          answers.set(entry.interactionId, entry);
        }
        break;
    }
  }

  const resultOf = (call: ToolCall): ToolResult | undefined => {
    const direct = results.get(call.effectId);
    if (direct) {
      return direct;
    }
    const question = questions.get(call.effectId);
    // An approval's answer is not the call's result: the call still has to run (or be refused).
    if (!question || question.prompt.kind === 'tool_approval') {
      return undefined;
    }
    const answer = answers.get(question.interactionId);
    return answer ? renderResolution(question.prompt, answer.outcome, answer.answer) : undefined;
  };
  const answerOf = (question: LogEntryOf<'question'> | undefined) => (question ? answers.get(question.interactionId) : undefined);

  const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: task }] }];
  let openTurn: Conversation['openTurn'] = null;
  for (const turn of turns) {
    const content: ModelBlock[] = turn.text ? [{ type: 'text', text: turn.text }] : [];
    turn.toolCalls.forEach((call) => content.push({ type: 'tool_use', id: call.toolUseId, name: call.name, input: call.input }));
    const calls = turn.toolCalls.map((call) => {
      const question = questions.get(call.effectId);
      return { call, result: resultOf(call), question, answer: answerOf(question) };
    });
    if (calls.some((c) => c.result === undefined)) {
      openTurn = { calls };
      break;
    }
    messages.push({ role: 'assistant', content: content.length > 0 ? content : [{ type: 'text', text: '(no text)' }] });
    if (calls.length > 0) {
      messages.push({
        role: 'user',
        content: calls.map(({ call, result }) => ({
          type: 'tool_result' as const,
          tool_use_id: call.toolUseId,
          content: result?.content ?? '',
          ...(result?.isError ? { is_error: true } : {}),
        })),
      });
    }
  }
  const last = turns.at(-1);
  return {
    messages,
    iterations: turns.length,
    questionsAsked: [...questions.values()].filter((q) => q.prompt.kind !== 'tool_approval').length,
    openTurn,
    endedWithoutTools: last !== undefined && last.toolCalls.length === 0,
    lastText: last?.text ?? '',
  };
}
