import { abortedError } from './model.errors';
import type { ModelAdapter, ModelRequest, ModelToolCall, ModelTurn } from './model.types';
import { fillTemplate, lastAnswer } from './scripted.template';

/** One scripted turn, as parsed from an agent file (`tool_calls` and `input` may be left out). */
export interface ScriptedTurnInput {
  text?: string;
  tool_calls?: ReadonlyArray<{ name: string; input?: Record<string, unknown> }>;
}

const DELTA_CHUNKS = 3;

/**
 * A model that plays a fixed script, for demos and tests. The turn it plays is the number of
 * assistant messages already in the conversation, so re-running a step after a crash plays the
 * same turn with the same tool-call ids.
 */
export class ScriptedModelAdapter implements ModelAdapter {
  constructor(private readonly turns: readonly ScriptedTurnInput[]) {}

  async complete(request: ModelRequest): Promise<ModelTurn> {
    throwIfAborted(request.signal);
    const turnIndex = request.messages.filter((message) => message.role === 'assistant').length;
    const turn = this.turns[turnIndex];
    if (turn === undefined) {
      return { text: '', toolCalls: [], stopReason: 'end_turn' };
    }
    const answer = lastAnswer(request.messages);
    const text = fillTemplate(turn.text ?? '', answer);
    const toolCalls: ModelToolCall[] = (turn.tool_calls ?? []).map((call, callIndex) => ({
      id: `scripted_${turnIndex}_${callIndex}`,
      name: call.name,
      input: fillTemplate(call.input ?? {}, answer),
    }));
    for (const chunk of chunks(text, DELTA_CHUNKS)) {
      // Deliver asynchronously, as a real stream does; a microtask, so fake timers cannot stall it.
      await Promise.resolve();
      throwIfAborted(request.signal);
      request.onTextDelta?.(chunk);
    }
    return { text, toolCalls, stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn' };
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw abortedError(signal);
  }
}

/** Splits text into at most `count` non-empty pieces, never inside a surrogate pair. */
function chunks(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.ceil(chars.length / count);
  const pieces: string[] = [];
  for (let start = 0; start < chars.length; start += size) {
    pieces.push(chars.slice(start, start + size).join(''));
  }
  return pieces;
}
