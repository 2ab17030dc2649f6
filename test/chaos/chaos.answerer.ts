import type { AnswerBody, Interaction, ParleyEvent } from '@parley/contracts';
import type { EventClient } from '../harness/event.client';
import { CHAOS_TIMEOUT_SECS, choiceFor, textAnswerFor } from './chaos.agent';

export type AnswerOutcome = 'accepted' | 'conflict' | 'not_found' | 'gave_up';

export interface SentAnswer {
  interactionId: string;
  runId: string;
  kind: string;
  body: AnswerBody;
  late: boolean;
  outcome?: AnswerOutcome;
  attempts: number;
}

export interface AnswererOptions {
  clients: EventClient[];
  /** Answers over HTTP on a running gateway, for when a client's socket is gone mid-answer. */
  httpAnswer: (interactionId: string, body: AnswerBody) => Promise<{ status: number; body: any }>;
  lateFraction: number;
  random: () => number;
}

const ATTEMPTS = 8;

/**
 * The automatic person: answers every interaction.opened the clients see, once per interaction id
 * (approvals allow_once, questions an answer derived from the id). A fraction is answered after
 * the deadline on purpose. Conflicts (a deadline or an earlier attempt won) and 404s are expected
 * outcomes and counted, not errors.
 */
export class ChaosAnswerer {
  readonly sent = new Map<string, SentAnswer>();
  private readonly pending = new Set<Promise<void>>();
  private readonly seen = new Map<EventClient, number>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: AnswererOptions) {}

  start(): void {
    // Polls the clients' recorded events: EventClient keeps them all, including replays after a failover.
    this.timer = setInterval(() => this.scan(), 50);
  }

  /** Stops answering and waits for the answers in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all([...this.pending]);
  }

  /** Resolves once no answer is in flight. */
  async drain(): Promise<void> {
    this.scan();
    while (this.pending.size > 0) {
      await Promise.all([...this.pending]);
    }
  }

  private scan(): void {
    if (this.stopped) {
      return;
    }
    for (const client of this.options.clients) {
      const from = this.seen.get(client) ?? 0;
      const events = client.events;
      for (let i = from; i < events.length; i++) {
        this.onEvent(events[i], client);
      }
      this.seen.set(client, events.length);
    }
  }

  private onEvent(event: ParleyEvent, client: EventClient): void {
    if (event.type !== 'interaction.opened') {
      return;
    }
    const interaction = event.data.interaction;
    if (interaction.status !== 'open' || this.sent.has(interaction.id)) {
      return;
    }
    const late = this.options.random() < this.options.lateFraction;
    const sent: SentAnswer = { interactionId: interaction.id, runId: interaction.runId, kind: interaction.prompt.kind, body: bodyFor(interaction), late, attempts: 0 };
    this.sent.set(interaction.id, sent);
    const work = this.answer(sent, client).finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  private async answer(sent: SentAnswer, client: EventClient): Promise<void> {
    if (sent.late) {
      // On purpose after the deadline: the deadline resolves it first and this answer gets a 409.
      await new Promise((resolve) => setTimeout(resolve, CHAOS_TIMEOUT_SECS * 1000 + 1500));
    }
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      sent.attempts = attempt;
      const code = attempt === 1 && client.connected ? await this.overSocket(client, sent) : await this.overHttp(sent);
      if (code === 'accepted' || code === 'conflict' || code === 'not_found') {
        sent.outcome = code;
        return;
      }
      // A gateway or Redis is down: back off and try again, over HTTP on a running gateway.
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
    sent.outcome = 'gave_up';
  }

  private async overSocket(client: EventClient, sent: SentAnswer): Promise<AnswerOutcome | 'retry'> {
    try {
      const ack = await client.answer(sent.interactionId, sent.body);
      return ack?.ok ? 'accepted' : codeOf(ack?.error?.code);
    } catch {
      return 'retry';
    }
  }

  private async overHttp(sent: SentAnswer): Promise<AnswerOutcome | 'retry'> {
    try {
      const res = await this.options.httpAnswer(sent.interactionId, sent.body);
      return res.status === 200 ? 'accepted' : codeOf(res.body?.error?.code);
    } catch {
      return 'retry';
    }
  }
}

function codeOf(code: unknown): AnswerOutcome | 'retry' {
  return code === 'conflict' ? 'conflict' : code === 'not_found' ? 'not_found' : 'retry';
}

export function bodyFor(interaction: Pick<Interaction, 'id' | 'prompt'>): AnswerBody {
  switch (interaction.prompt.kind) {
    case 'tool_approval':
      return { decision: 'allow_once' };
    case 'multiple_choice':
      return { choice: choiceFor(interaction.id) };
    case 'confirm':
      return { confirmed: true };
    case 'review':
      return { approved: true };
    case 'free_text':
    case 'edit_text':
      return { text: textAnswerFor(interaction.id) };
  }
}
