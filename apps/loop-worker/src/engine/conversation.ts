import type { LogEntryOf, LogEntry, ToolCall } from '@parley/contracts';
import type { ModelBlock, ModelMessage } from '@parley/models';
import { okResult, renderResolution, type ToolResult } from '@parley/tools';

/** One call of the newest model turn, with what the log already holds for it. */
export interface OpenCall {
  call: ToolCall;
  result?: ToolResult;
  question?: LogEntryOf<'question'>;
  /** The resolution of `question`, once there is one. */
  answer?: LogEntryOf<'answer'>;
  /** A delegate call: the sub-agent it started, and how it ended once it has. */
  child?: LogEntryOf<'child'>;
  childResult?: LogEntryOf<'child_result'>;
}

/** A checkpoint of the current stage visit, with its resolution once there is one. */
export interface CheckpointRecord {
  entry: LogEntryOf<'checkpoint'>;
  answer?: LogEntryOf<'answer'>;
  /** An edit whose text was recorded as the document. */
  adopted: boolean;
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
  /** The stage the run is in (agents with stages), as the log last moved it. */
  stage: string | null;
  /** Every checkpoint since the run entered its current stage, in log order. */
  visit: CheckpointRecord[];
  /** The latest text of each pinned document region. */
  documents: Map<string, string>;
  /** Effect ids and interaction ids whose text is already recorded as a document. */
  documentOrigins: Set<string>;
  /** The results of sub-agents that ended, by child run id (the first one recorded). */
  childResults: ReadonlyMap<string, LogEntryOf<'child_result'>>;
}

/**
 * Rebuilds the conversation from the durable log. Results are keyed by physical effect id and
 * answers by interaction id, so an entry recorded twice (a retried append) is still delivered once.
 * Messages a person sent mid-run join the user turn that follows the model turn they came after.
 */
export function buildConversation(entries: LogEntry[]): Conversation {
  const results = new Map<string, ToolResult>();
  const questions = new Map<string, LogEntryOf<'question'>>();
  const answers = new Map<string, LogEntryOf<'answer'>>();
  const children = new Map<string, LogEntryOf<'child'>>();
  const childResults = new Map<string, LogEntryOf<'child_result'>>();
  const origins = new Set<string>();
  for (const entry of entries) {
    switch (entry.type) {
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
      case 'child':
        if (!children.has(entry.effectId)) {
          children.set(entry.effectId, entry);
        }
        break;
      case 'child_result':
        if (!childResults.has(entry.childRunId)) {
          childResults.set(entry.childRunId, entry);
        }
        break;
      case 'document':
        origins.add(entry.origin);
        break;
      case 'task':
      case 'assistant':
      case 'user_message':
      case 'stage':
      case 'checkpoint':
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

  const messages: ModelMessage[] = [];
  const addUserText = (text: string): void => {
    const last = messages.at(-1);
    if (last?.role === 'user') {
      last.content.push({ type: 'text', text });
    } else {
      messages.push({ role: 'user', content: [{ type: 'text', text }] });
    }
  };

  let openTurn: Conversation['openTurn'] = null;
  let iterations = 0;
  let last: LogEntryOf<'assistant'> | undefined;
  let stage: string | null = null;
  let visit: CheckpointRecord[] = [];
  const documents = new Map<string, string>();
  for (const entry of entries) {
    if (entry.type === 'stage') {
      stage = entry.to;
      visit = [];
    } else if (entry.type === 'checkpoint') {
      visit.push({ entry, answer: answers.get(entry.interactionId), adopted: origins.has(entry.interactionId) });
    } else if (entry.type === 'document') {
      documents.set(entry.region, entry.text);
    }
    if (openTurn) {
      continue;
    }
    switch (entry.type) {
      case 'task':
        addUserText(entry.text);
        break;
      case 'user_message':
        addUserText(entry.text);
        break;
      case 'assistant': {
        iterations++;
        last = entry;
        const calls = entry.toolCalls.map((call): OpenCall => {
          const question = questions.get(call.effectId);
          const child = children.get(call.effectId);
          const childResult = child ? childResults.get(child.childRunId) : undefined;
          return {
            call,
            result: resultOf(call),
            question,
            answer: question ? answers.get(question.interactionId) : undefined,
            child,
            childResult,
          };
        });
        if (calls.some((c) => c.result === undefined)) {
          openTurn = { calls };
          break;
        }
        // A turn of only whitespace text is sent without it: the Anthropic API refuses such a text block.
        const content: ModelBlock[] = entry.text.trim() ? [{ type: 'text', text: entry.text }] : [];
        entry.toolCalls.forEach((call) => content.push({ type: 'tool_use', id: call.toolUseId, name: call.name, input: call.input }));
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
        break;
      }
      case 'tool_result':
      case 'question':
      case 'answer':
      case 'stage':
      case 'document':
      case 'checkpoint':
      case 'child':
      case 'child_result':
        break;
    }
  }
  return {
    messages,
    iterations,
    questionsAsked: [...questions.values()].filter((q) => q.prompt.kind !== 'tool_approval').length,
    openTurn,
    endedWithoutTools: last !== undefined && last.toolCalls.length === 0 && openTurn === null && !messagesAfter(entries, last),
    lastText: last?.text ?? '',
    stage,
    visit,
    documents,
    documentOrigins: origins,
    childResults,
  };
}

/** A person spoke after the model's last turn: the loop has something to answer. */
function messagesAfter(entries: LogEntry[], turn: LogEntryOf<'assistant'>): boolean {
  return entries.slice(entries.lastIndexOf(turn) + 1).some((entry) => entry.type === 'user_message');
}

/** What a delegate call gets back once its sub-agent has ended. */
export function childResultOf(result: LogEntryOf<'child_result'>): ToolResult {
  const { childRunId } = result;
  if (result.reason === 'needs_input') {
    return { content: JSON.stringify({ ok: false, childRunId, status: 'needs_input', missing: result.text }), isError: false };
  }
  if (result.status === 'finished') {
    return okResult({ childRunId, status: 'finished', summary: result.text });
  }
  return { content: JSON.stringify({ ok: false, childRunId, status: result.status, error: result.text }), isError: false };
}
