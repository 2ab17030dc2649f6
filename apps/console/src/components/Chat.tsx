import type { Interaction, LogEntry, LogEntryOf } from '../api/types';
import { actorName, prettyContent, prettyJson } from '../format';
import { InteractionCard } from './InteractionCard';

type ToolCall = LogEntryOf<'assistant'>['toolCalls'][number];

type ChatItem =
  | { kind: 'task'; key: string; text: string }
  | { kind: 'model'; key: string; text: string }
  | { kind: 'call'; key: string; call: ToolCall; result?: LogEntryOf<'tool_result'> }
  | { kind: 'question'; key: string; entry: LogEntryOf<'question'> | LogEntryOf<'checkpoint'> }
  | { kind: 'user'; key: string; text: string; by: string; pending: boolean; discarded: boolean }
  | { kind: 'note'; key: string; text: string }
  | { kind: 'document'; key: string; entry: LogEntryOf<'document'> };

export interface PendingMessage {
  messageId: string;
  text: string;
  by: string;
  /** The run ended before reading it (`message.discarded`). */
  discarded?: boolean;
}

/** Turns the durable log into conversation items: calls carry their results, questions appear once. */
export function chatItems(entries: LogEntry[], pending: PendingMessage[]): ChatItem[] {
  const results = new Map<string, LogEntryOf<'tool_result'>>();
  const asked = new Set<string>();
  for (const entry of entries) {
    if (entry.type === 'tool_result') {
      results.set(entry.effectId, entry);
    } else if (entry.type === 'question' && entry.prompt.kind !== 'tool_approval') {
      asked.add(entry.effectId);
    }
  }
  const items: ChatItem[] = [];
  const seenQuestions = new Set<string>();
  const injected = new Set<string>();
  entries.forEach((entry, index) => {
    const key = `${index}`;
    switch (entry.type) {
      case 'task':
        items.push({ kind: 'task', key, text: entry.text });
        break;
      case 'assistant':
        if (entry.text.trim() !== '') {
          items.push({ kind: 'model', key, text: entry.text });
        }
        for (const call of entry.toolCalls) {
          const result = results.get(call.effectId);
          // A human tool's question stands in for its call, unless the call was refused outright.
          if (!asked.has(call.effectId) || result) {
            items.push({ kind: 'call', key: `${key}:${call.effectId}`, call, ...(result ? { result } : {}) });
          }
        }
        break;
      case 'question':
      case 'checkpoint':
        if (!seenQuestions.has(entry.interactionId) && !(entry.type === 'checkpoint' && entry.auto)) {
          seenQuestions.add(entry.interactionId);
          items.push({ kind: 'question', key: entry.interactionId, entry });
        } else if (entry.type === 'checkpoint' && entry.auto) {
          items.push({ kind: 'note', key, text: `checkpoint ${entry.ref.point} proceeded without a person (unattended run)` });
        }
        break;
      case 'user_message':
        injected.add(entry.messageId);
        items.push({ kind: 'user', key: entry.messageId, text: entry.text, by: actorName(entry.by), pending: false, discarded: false });
        break;
      case 'stage':
        items.push({ kind: 'note', key, text: entry.from === null ? `stage ${entry.to}` : `stage ${entry.from} → ${entry.to}` });
        break;
      case 'document':
        items.push({ kind: 'document', key, entry });
        break;
      case 'child':
        items.push({ kind: 'note', key, text: `started sub-agent ${entry.agent} (run ${entry.childRunId})` });
        break;
      case 'child_result':
        items.push({ kind: 'note', key, text: `sub-agent run ${entry.childRunId} ${entry.status} (${entry.reason}): ${entry.text}` });
        break;
      case 'tool_result':
      case 'answer':
        break;
    }
  });
  for (const message of pending) {
    if (!injected.has(message.messageId)) {
      items.push({ kind: 'user', key: message.messageId, text: message.text, by: message.by, pending: !message.discarded, discarded: message.discarded === true });
    }
  }
  return items;
}

export interface ChatProps {
  entries: LogEntry[];
  interactions: Map<string, Interaction>;
  pending: PendingMessage[];
  streaming: string;
  onAnswered: () => void;
}

export function Chat({ entries, interactions, pending, streaming, onAnswered }: ChatProps) {
  const answers = new Map<string, LogEntryOf<'answer'>>();
  for (const entry of entries) {
    if (entry.type === 'answer') {
      answers.set(entry.interactionId, entry);
    }
  }
  return (
    <ol class="chat" data-testid="chat">
      {chatItems(entries, pending).map((item) => (
        <li key={item.key} class={`chat-item ${item.kind}`}>
          <ChatItemView item={item} interactions={interactions} answers={answers} onAnswered={onAnswered} />
        </li>
      ))}
      {streaming ? (
        <li class="chat-item model streaming" aria-live="polite">
          <div class="bubble">{streaming}</div>
        </li>
      ) : null}
    </ol>
  );
}

function ChatItemView({
  item,
  interactions,
  answers,
  onAnswered,
}: {
  item: ChatItem;
  interactions: Map<string, Interaction>;
  answers: Map<string, LogEntryOf<'answer'>>;
  onAnswered: () => void;
}) {
  switch (item.kind) {
    case 'task':
      return (
        <div class="bubble" data-testid="chat-task">
          <span class="who">Task</span>
          {item.text}
        </div>
      );
    case 'model':
      return (
        <div class="bubble" data-testid="chat-model">
          {item.text}
        </div>
      );
    case 'user':
      return (
        <div class={`bubble${item.pending || item.discarded ? ' pending' : ''}`} data-testid="chat-user" data-pending={item.pending ? 'true' : item.discarded ? 'discarded' : 'false'}>
          <span class="who">{item.by}</span>
          {item.text}
          {item.pending ? <span class="muted"> (waiting for the agent to read it)</span> : null}
          {item.discarded ? <span class="muted"> (never read: the run ended first)</span> : null}
        </div>
      );
    case 'call':
      return (
        <details class={`tool-call${item.result?.isError ? ' error' : ''}`} data-testid="chat-tool-call">
          <summary>
            <span class="tool-name">{item.call.name}</span>
            <span class="muted">{item.result ? (item.result.isError ? ' failed' : ' done') : ' …'}</span>
          </summary>
          <h4>Arguments</h4>
          <pre>{prettyJson(item.call.input)}</pre>
          {item.result ? (
            <>
              <h4>Result</h4>
              <pre>{prettyContent(item.result.content)}</pre>
            </>
          ) : null}
        </details>
      );
    case 'question': {
      const { entry } = item;
      return (
        <InteractionCard
          interactionId={entry.interactionId}
          prompt={entry.prompt}
          interaction={interactions.get(entry.interactionId)}
          resolution={answers.get(entry.interactionId)}
          {...(entry.type === 'checkpoint' ? { checkpoint: { stage: entry.ref.stage, point: entry.ref.point } } : {})}
          onAnswered={onAnswered}
        />
      );
    }
    case 'note':
      return <p class="note">{item.text}</p>;
    case 'document':
      return (
        <details class="document-entry">
          <summary>
            document <code>{item.entry.region}</code> updated by {item.entry.source === 'person' ? 'a person' : 'the model'}
          </summary>
          <pre>{item.entry.text}</pre>
        </details>
      );
  }
}
