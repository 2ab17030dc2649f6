import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError } from '../api/api.error';
import type { Interaction, LogEntry, ParleyEvent, Run } from '../api/types';
import { useApp } from '../app.context';
import { Chat, type PendingMessage } from '../components/Chat';
import { StatusBadge } from '../components/StatusBadge';
import { actorName, isEnded, relativeTime } from '../format';
import { useLiveData, useLiveEvents, useNow } from '../live/live.hooks';
import { onLinkClick } from '../router';
import { FormError } from '../components/FormError';

interface RunView {
  run: Run;
  entries: LogEntry[];
  interactions: Map<string, Interaction>;
}

/** One run as a conversation, answered in place; reloaded from the log whenever the run changes. */
export function RunPage({ runId }: { runId: string }) {
  const { http } = useApp();
  const view = useLiveData<RunView>(
    async () => {
      const [{ run }, { entries }, { interactions }] = await Promise.all([http.run(runId), http.log(runId), http.runInteractions(runId)]);
      return { run, entries, interactions: new Map(interactions.map((i) => [i.id, i])) };
    },
    (event) => event.runId === runId && event.type !== 'message.delta',
    [runId],
  );
  const pending = usePendingMessages(runId);
  const streaming = useStreamingText(runId);

  if (!view.data) {
    return (
      <section class="page">
        <p>
          <a href="/runs" onClick={(event) => onLinkClick(event, '/runs')}>
            ← Runs
          </a>
        </p>
        {view.error ? (
          <p class="form-error" role="alert">
            {describeError(view.error)}
          </p>
        ) : (
          <p class="muted">Loading…</p>
        )}
      </section>
    );
  }
  const { run, entries, interactions } = view.data;
  return (
    <section class="page run-page" data-testid="run-page" data-run-id={run.id}>
      <p>
        <a href="/runs" onClick={(event) => onLinkClick(event, '/runs')}>
          ← Runs
        </a>
      </p>
      <RunHeader run={run} />
      <Chat entries={entries} interactions={interactions} pending={pending} streaming={streaming} onAnswered={view.reload} />
      <RunFooter run={run} />
      {!isEnded(run) ? <MessageBox runId={run.id} /> : null}
    </section>
  );
}

function RunHeader({ run }: { run: Run }) {
  const now = useNow(10_000);
  return (
    <header class="run-header">
      <h2>
        {run.agent} <span class="muted run-id">{run.id}</span>
      </h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge run={run} />
        </dd>
        {run.stage ? (
          <>
            <dt>Stage</dt>
            <dd data-testid="run-stage">{run.stage}</dd>
          </>
        ) : null}
        <dt>Owner</dt>
        <dd>{run.owner}</dd>
        <dt>Started</dt>
        <dd title={run.createdAt}>{relativeTime(run.createdAt, now)}</dd>
        {run.unattended ? (
          <>
            <dt>Mode</dt>
            <dd>unattended</dd>
          </>
        ) : null}
      </dl>
      {!isEnded(run) ? <StopButton runId={run.id} /> : null}
    </header>
  );
}

function RunFooter({ run }: { run: Run }) {
  if (!isEnded(run)) {
    return null;
  }
  return (
    <div class={`run-end ${run.status}`} data-testid="run-end">
      <strong>Run {run.status}</strong>
      {run.endReason ? ` (${run.endReason})` : ''}
      {run.stoppedBy ? ` by ${actorName(run.stoppedBy)}` : ''}
      {run.summary ? <p data-testid="run-summary">{run.summary}</p> : null}
      {run.error ? <p class="form-error">{run.error}</p> : null}
    </div>
  );
}

function StopButton({ runId }: { runId: string }) {
  const { http } = useApp();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  if (!confirming) {
    return (
      <button type="button" class="danger" data-testid="stop-run" onClick={() => setConfirming(true)}>
        Stop run
      </button>
    );
  }
  const stop = async (): Promise<void> => {
    setBusy(true);
    setProblem(undefined);
    try {
      await http.stop(runId);
      setConfirming(false);
    } catch (error) {
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="confirm-stop" role="group" aria-label="Confirm stopping the run">
      <span>Stop this run? An open question is cancelled (an approval is denied).</span>
      <button type="button" class="danger" data-testid="stop-confirm" disabled={busy} onClick={() => void stop()}>
        Yes, stop it
      </button>
      <button type="button" class="secondary" data-testid="stop-cancel" disabled={busy} onClick={() => setConfirming(false)}>
        Keep it running
      </button>
      <FormError message={problem} />
    </div>
  );
}

function MessageBox({ runId }: { runId: string }) {
  const { http } = useApp();
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const send = async (): Promise<void> => {
    if (text.trim() === '') {
      setProblem('Write a message first.');
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      await http.message(runId, text);
      setText('');
    } catch (error) {
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="message-box"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <label for="message-text">Message the agent (it reads it before its next step)</label>
      <textarea id="message-text" data-testid="message-text" rows={2} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <div class="actions">
        <button type="submit" data-testid="message-send" disabled={busy}>
          Send message
        </button>
      </div>
      <FormError message={problem} />
    </form>
  );
}

/** Messages the run has received but not yet read (or never will: discarded at its end): from its event history, then live. */
function usePendingMessages(runId: string): PendingMessage[] {
  const { http } = useApp();
  const [received, setReceived] = useState<Map<string, PendingMessage>>(new Map());
  const add = (events: ParleyEvent[]): void => {
    const mine = events.filter((event) => event.runId === runId);
    const found = mine.flatMap((event) =>
      event.type === 'message.received' ? [{ messageId: event.data.messageId, text: event.data.text, by: actorName(event.data.by) }] : [],
    );
    const discarded = new Set(mine.flatMap((event) => (event.type === 'message.discarded' ? event.data.messageIds : [])));
    if (found.length > 0 || discarded.size > 0) {
      setReceived((current) => {
        const next = new Map<string, PendingMessage>([...current, ...found.map((m) => [m.messageId, m] as const)]);
        discarded.forEach((id) => {
          const message = next.get(id);
          if (message) {
            next.set(id, { ...message, discarded: true });
          }
        });
        return next;
      });
    }
  };
  useEffect(() => {
    setReceived(new Map());
    http.runEvents(runId).then(
      ({ events }) => add(events),
      () => undefined,
    );
  }, [runId]);
  useLiveEvents((event) => add([event]), [runId]);
  return useMemo(() => [...received.values()], [received]);
}

/** Model text as it streams (best effort, not in the log); cleared when the full turn arrives. */
function useStreamingText(runId: string): string {
  const [text, setText] = useState('');
  useEffect(() => setText(''), [runId]);
  useLiveEvents(
    (event) => {
      if (event.runId !== runId) {
        return;
      }
      if (event.type === 'message.delta') {
        setText((current) => current + event.data.text);
      } else if (event.type === 'message' || event.type === 'tool.call' || event.type === 'run.status') {
        setText('');
      }
    },
    [runId],
  );
  return text;
}
