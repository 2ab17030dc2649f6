import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/api.error';
import type { ApprovalFilter } from '../api/http.client';
import type { Interaction, ParleyEvent } from '../api/types';
import { useApp } from '../app.context';
import { ApprovalForm } from '../components/answer/ApprovalForm';
import { actorName, countdown, DECISION_LABELS, relativeTime, shortId } from '../format';
import { useLiveData, useLiveEvents, useNow } from '../live/live.hooks';
import { onLinkClick } from '../router';
import { FormError } from '../components/FormError';

/** How long a card stays, saying who resolved it, before it goes away. */
const GONE_AFTER_MS = 5000;

interface Gone {
  card: Interaction;
  note: string;
}

function isApprovalEvent(event: ParleyEvent): boolean {
  return (event.type === 'interaction.opened' && event.data.interaction.prompt.kind === 'tool_approval') || event.type === 'interaction.claimed';
}

/** The tenant's open approvals (admins), oldest deadline first, live. */
export function ApprovalsPage() {
  const { http, session } = useApp();
  const [draft, setDraft] = useState<ApprovalFilter>({});
  const [filter, setFilter] = useState<ApprovalFilter>({});
  /** The cursors of the pages before this one (a page is the queue past its cursor; the first has none). */
  const [pages, setPages] = useState<string[]>([]);
  const after = pages[pages.length - 1];
  const list = useLiveData(() => http.approvals(filter, after), isApprovalEvent, [filter.agent, filter.tool, filter.runId, after]);
  const applyFilter = (next: ApprovalFilter): void => {
    setFilter(next);
    setPages([]);
  };
  const [gone, setGone] = useState<Map<string, Gone>>(new Map());
  const shown = useRef<Map<string, Interaction>>(new Map());
  /** Resolved cards never come back from a list that was loaded before the resolution. */
  const settled = useRef<Set<string>>(new Set());
  const timers = useRef<number[]>([]);
  const now = useNow();

  useEffect(() => () => timers.current.forEach((timer) => window.clearTimeout(timer)), []);
  for (const card of list.data?.approvals ?? []) {
    if (!settled.current.has(card.id)) {
      shown.current.set(card.id, card);
    }
  }

  useLiveEvents((event) => {
    if (event.type !== 'interaction.resolved') {
      return;
    }
    const card = shown.current.get(event.data.interactionId);
    if (!card) {
      return;
    }
    const how = event.data.decision ? DECISION_LABELS[event.data.decision] : event.data.outcome;
    const note = event.data.by.kind === 'user' ? `resolved by ${actorName(event.data.by)} (${how})` : `${event.data.outcome === 'expired' ? 'expired' : 'cancelled'} (${how})`;
    settled.current.add(card.id);
    setGone((current) => new Map(current).set(card.id, { card, note }));
    list.reload();
    timers.current.push(
      window.setTimeout(() => {
        shown.current.delete(card.id);
        setGone((current) => {
          const next = new Map(current);
          next.delete(card.id);
          return next;
        });
      }, GONE_AFTER_MS),
    );
  }, []);

  const unique = [...(list.data?.approvals ?? []).filter((card) => !settled.current.has(card.id)), ...[...gone.values()].map((g) => g.card)].sort(byDeadline);

  return (
    <section class="page approvals-page">
      <h2>Approval queue</h2>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          applyFilter({ ...draft });
        }}
      >
        {(['agent', 'tool', 'runId'] as const).map((key) => (
          <div class="field" key={key}>
            <label for={`filter-${key}`}>{key === 'runId' ? 'Run id' : key === 'agent' ? 'Agent' : 'Tool'}</label>
            <input
              id={`filter-${key}`}
              type="text"
              data-testid={`filter-${key}`}
              value={draft[key] ?? ''}
              onInput={(event) => setDraft({ ...draft, [key]: event.currentTarget.value })}
            />
          </div>
        ))}
        <div class="actions">
          <button type="submit" data-testid="filter-apply">
            Apply filters
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft({});
              applyFilter({});
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <FormError message={list.error ? describeError(list.error) : undefined} />
      {list.data?.next || pages.length > 0 ? (
        <nav class="pager" data-testid="approvals-pager">
          {pages.length > 0 ? (
            <button type="button" class="secondary" data-testid="approvals-first" onClick={() => setPages([])}>
              First page
            </button>
          ) : null}
          {list.data?.next ? (
            <>
              <span class="muted" data-testid="approvals-more">
                More approvals may wait past these {list.data.approvals.length}.
              </span>
              <button type="button" class="secondary" data-testid="approvals-next" onClick={() => setPages([...pages, list.data!.next!])}>
                Next page
              </button>
            </>
          ) : null}
        </nav>
      ) : null}
      {!list.data ? (
        <p class="muted">Loading…</p>
      ) : unique.length === 0 ? (
        <p class="muted" data-testid="approvals-empty">
          No open approvals.
        </p>
      ) : (
        <ul class="approval-cards" data-testid="approval-cards">
          {unique.map((card) => (
            <ApprovalCard key={card.id} card={card} gone={gone.get(card.id)?.note} me={session.identity.sub} now={now} onChange={list.reload} />
          ))}
        </ul>
      )}
    </section>
  );
}

function byDeadline(a: Interaction, b: Interaction): number {
  const da = a.deadline === null ? Infinity : Date.parse(a.deadline);
  const db = b.deadline === null ? Infinity : Date.parse(b.deadline);
  return da - db || a.createdAt.localeCompare(b.createdAt);
}

function ApprovalCard({ card, gone, me, now, onChange }: { card: Interaction; gone?: string; me: string; now: number; onChange: () => void }) {
  const { http } = useApp();
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const prompt = card.prompt;
  if (prompt.kind !== 'tool_approval') {
    return null;
  }
  const claim = card.claim && Date.parse(card.claim.until) > now ? card.claim : undefined;
  const mine = claim?.subject === me;
  const runPath = `/runs/${card.runId}`;
  const toggleClaim = async (): Promise<void> => {
    setBusy(true);
    setProblem(undefined);
    try {
      await http.claim(card.id, mine);
      onChange();
    } catch (error) {
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class={`approval-card${gone ? ' gone' : ''}`} data-testid="approval-card" data-interaction-id={card.id}>
      <header>
        <strong>{prompt.tool}</strong> <code>{prompt.telling.value}</code>
        <span class="deadline" data-testid="approval-countdown">
          {countdown(card.deadline, now)}
        </span>
      </header>
      <p class="muted">
        agent {card.agent} · run{' '}
        <a href={runPath} onClick={(event) => onLinkClick(event, runPath)}>
          {shortId(card.runId)}
        </a>{' '}
        · owner {card.owner} · asked {relativeTime(card.createdAt, now)}
      </p>
      {gone ? (
        <p class="resolved-note" role="status" data-testid="approval-resolved">
          {gone}
        </p>
      ) : (
        <>
          <div class="claim-row">
            {claim ? (
              <span data-testid="claim-holder">
                {mine ? 'You hold the claim' : `Claimed by ${claim.subject}`} until {new Date(claim.until).toLocaleTimeString()}
              </span>
            ) : (
              <span class="muted">Unclaimed</span>
            )}
            {!claim || mine ? (
              <button type="button" class="secondary" data-testid={mine ? 'release' : 'claim'} disabled={busy} onClick={() => void toggleClaim()}>
                {mine ? 'Release claim' : 'Claim'}
              </button>
            ) : null}
          </div>
          <FormError message={problem} />
          <p class="prompt">{prompt.prompt}</p>
          {claim && !mine ? (
            <p class="muted">Only {claim.subject} can answer until the claim is released or expires.</p>
          ) : (
            <ApprovalForm interactionId={card.id} prompt={prompt} onAnswered={onChange} />
          )}
        </>
      )}
    </li>
  );
}
