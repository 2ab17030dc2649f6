import type { Writable } from 'node:stream';
import { z } from 'zod';
import type { AnswerBody, EventData, Interaction, ParleyEvent } from '@parley/contracts';
import { ApiError } from '../api/api.error';
import { parseEvent, type RawEvent } from '../api/event.parse';
import { EXIT } from '../cli.errors';
import { errorMessage } from '../errors.describe';
import { formatClaimChange } from '../format/event.format';
import { formatActor, formatClaim, formatResolution, respondHint } from '../format/interaction.format';
import { explainEnd, narration } from '../format/run.narration';
import { escapeControls, escapeJsonControls } from '../format/text';
import { TextOutput } from '../format/text.output';
import type { InteractionPrompter } from '../prompt/interaction.prompter';
import { EndOfInputError, PromptCancelledError } from '../prompt/line.reader';
import { ClaimWaits, othersLiveClaim, type Claim } from './claim.waits';

/** How long the end of a run waits for the acknowledgement of an answer already on its way. */
const ANSWER_GRACE_MS = 2000;

/** The details of a 409 refusing an answer because someone else holds a claim on the approval. */
const ClaimConflictSchema = z.object({ claim: z.object({ subject: z.string(), until: z.string() }) });

export interface RunFollowerDeps {
  runId: string;
  json: boolean;
  /** Prompts (and the notes about them) go to stderr rather than stdout. */
  promptsOnStderr: boolean;
  /** Who this CLI answers as (the token's `sub`), to tell someone else's claim from ours; undefined when unknown. */
  subject?: string;
  stdout: Writable;
  stderr: Writable;
  /** Called on the first question only, so runs that never ask leave stdin alone. */
  prompter: () => InteractionPrompter;
  answer: (interactionId: string, body: AnswerBody) => Promise<Interaction>;
  lookup: (interactionId: string) => Promise<Interaction>;
}

/**
 * Reacts to one run's events: prints them, asks the person each open question once, and settles
 * `outcome` with the exit code when the run ends. Questions are asked one at a time while events
 * keep flowing, so a question answered elsewhere (or a run that ends) withdraws the prompt.
 */
export class RunFollower {
  readonly outcome: Promise<number>;
  private settle!: (code: number) => void;
  private readonly out: TextOutput;
  private readonly notes: TextOutput;
  private finished = false;
  private streamed = false;
  private inputClosed = false;
  private readonly known = new Set<string>();
  private readonly resolved = new Set<string>();
  private readonly answeredHere = new Set<string>();
  private queue: Interaction[] = [];
  private pumping = false;
  private active?: { interaction: Interaction; controller: AbortController };
  private sending?: string;
  private deferredEnd?: () => void;
  private readonly claimed: ClaimWaits;

  constructor(private readonly deps: RunFollowerDeps) {
    this.outcome = new Promise<number>((resolve) => {
      this.settle = resolve;
    });
    this.out = new TextOutput(deps.stdout);
    this.notes = deps.promptsOnStderr ? new TextOutput(deps.stderr) : this.out;
    this.claimed = new ClaimWaits((interaction) => this.askAgain(interaction));
  }

  handle(raw: RawEvent): void {
    if (this.finished) {
      return;
    }
    if (this.deps.json) {
      this.deps.stdout.write(`${escapeJsonControls(JSON.stringify(raw))}\n`);
    }
    const event = parseEvent(raw);
    if (event === undefined) {
      this.human(`(skipped event #${raw.seq} "${raw.type}": not understood by this CLI)`);
      return;
    }
    if (event.runId === this.deps.runId) {
      this.apply(event);
    }
  }

  /** Connection trouble reported by the event stream. */
  notice(message: string): void {
    this.warn(message);
  }

  interrupt(): void {
    if (this.finished) {
      return;
    }
    const { runId } = this.deps;
    this.end(EXIT.interrupted, () => this.note(`interrupted; run ${runId} keeps going (follow it with: parley logs ${runId} -f)`));
  }

  /** Following broke down (the stream gave up, or something unexpected): the run itself goes on. */
  fail(error: unknown): void {
    if (this.finished) {
      return;
    }
    const { runId } = this.deps;
    this.end(EXIT.error, () => {
      this.warn(`error: ${errorMessage(error)}`);
      this.warn(`run ${runId} keeps going (follow it with: parley logs ${runId} -f)`);
    });
  }

  private apply(event: ParleyEvent): void {
    switch (event.type) {
      case 'run.created':
      case 'run.status':
        // Handed back or taken over before its turn was recorded: the text streamed so far is dropped,
        // and the model is asked again.
        if (this.streamed && 'status' in event.data && (event.data.status === 'queued' || event.data.status === 'running')) {
          this.out.breakLine();
          this.human('(that reply was cut short: the model is asked again)');
          this.streamed = false;
        }
        return;
      case 'stage.entered':
      case 'checkpoint.proceeded':
      case 'message.received':
      case 'message.injected':
      case 'message.discarded':
      case 'child.started':
      case 'child.ended':
      case 'tool.call':
      case 'tool.result':
      case 'run.stop_requested':
        this.human(narration(event));
        return;
      case 'document.updated':
        // The checkpoint that follows shows the document; nothing to say on its own.
        return;
      case 'message.delta':
        if (!this.deps.json) {
          this.out.text(event.data.text);
        }
        this.streamed = true;
        return;
      case 'message':
        // The full text repeats what the deltas already showed.
        if (this.streamed) {
          this.out.breakLine();
        } else {
          this.human(event.data.text);
        }
        this.streamed = false;
        return;
      case 'interaction.opened':
        this.opened(event.data.interaction);
        return;
      case 'interaction.resolved':
        this.closedElsewhere(event.data.interactionId, formatResolution(event.data.outcome, event.data.by, event.data.at, event.data.decision));
        return;
      case 'interaction.claimed':
        this.claimChanged(event.data);
        return;
      case 'run.finished': {
        const summary = event.data.summary === undefined ? '' : `: ${event.data.summary}`;
        this.end(EXIT.ok, () => this.human(`✓ run finished (${event.data.reason})${explainEnd(event.data.reason)}${summary}`));
        return;
      }
      case 'run.failed':
        this.end(EXIT.error, () => this.warn(`✗ run failed (${event.data.reason})${explainEnd(event.data.reason)}: ${event.data.error}`));
        return;
      case 'run.cancelled':
        this.end(EXIT.error, () => this.warn(`✗ run cancelled by ${formatActor(event.data.by)} (${event.data.reason})`));
        return;
    }
  }

  private opened(interaction: Interaction): void {
    if (this.known.has(interaction.id) || this.resolved.has(interaction.id)) {
      return;
    }
    this.known.add(interaction.id);
    this.queue.push(interaction);
    void this.pump();
  }

  private closedElsewhere(id: string, resolution: string): void {
    this.resolved.add(id);
    this.queue = this.queue.filter((interaction) => interaction.id !== id);
    this.claimed.drop(id);
    if (this.answeredHere.has(id) || this.sending === id || !this.known.has(id)) {
      return;
    }
    if (this.active?.interaction.id === id) {
      this.active.controller.abort();
      this.note(`interaction ${id} was ${resolution}; your answer is no longer needed`);
      return;
    }
    this.note(`interaction ${id} was ${resolution}`);
  }

  /**
   * Someone took or gave up a claim. A question set aside for another admin's claim is asked again
   * once that claim is gone; one being asked when another admin claims it is withdrawn and set aside.
   */
  private claimChanged({ interactionId: id, claim, by }: EventData<'interaction.claimed'>): void {
    if (!this.known.has(id) || this.resolved.has(id)) {
      return;
    }
    this.note(`interaction ${id} ${formatClaimChange(claim, by)}`);
    const others = claim === null ? undefined : othersLiveClaim(claim, this.deps.subject);
    if (others === undefined) {
      this.claimed.release(id);
    } else if (this.claimed.has(id)) {
      this.claimed.renew(id, others);
    } else if (this.active?.interaction.id === id && this.sending !== id) {
      this.active.controller.abort();
      this.setAside({ ...this.active.interaction, claim: others }, others);
    }
  }

  /** Waits for another admin's claim to end before asking; the respond hint says how to answer it then from elsewhere. */
  private setAside(interaction: Interaction, claim: Claim): void {
    if (this.finished || this.resolved.has(interaction.id)) {
      return;
    }
    this.claimed.hold(interaction, claim);
    this.note(`interaction ${interaction.id} is ${formatClaim(claim)}; it is asked here again when the claim ends (or answer it then with: ${respondHint(interaction)})`);
    void this.recheckClaim(interaction.id);
  }

  /** The claim may have ended before the interaction was set aside (its release event already came and went). */
  private async recheckClaim(id: string): Promise<void> {
    // Should the lookup fail, the claim's lapse brings it back anyway.
    const current = await this.deps.lookup(id).catch(() => undefined);
    if (current !== undefined) {
      this.claimed.recheck(current, this.deps.subject);
    }
  }

  private askAgain(interaction: Interaction): void {
    if (this.finished || this.resolved.has(interaction.id)) {
      return;
    }
    this.queue.push(interaction);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      return;
    }
    this.pumping = true;
    try {
      for (let next = this.queue.shift(); next !== undefined && !this.finished; next = this.queue.shift()) {
        await this.attend(next);
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.pumping = false;
    }
  }

  private async attend(interaction: Interaction): Promise<void> {
    if (this.resolved.has(interaction.id)) {
      return;
    }
    if (this.inputClosed) {
      this.note(`waiting for an answer from elsewhere: ${respondHint(interaction)}`);
      return;
    }
    const current = await this.stillOpen(interaction);
    if (current === undefined || this.finished || this.resolved.has(interaction.id)) {
      return;
    }
    const claim = othersLiveClaim(current.claim, this.deps.subject);
    if (claim !== undefined) {
      this.setAside(current, claim);
      return;
    }
    const controller = new AbortController();
    this.active = { interaction: current, controller };
    try {
      await this.converse(current, controller.signal);
    } finally {
      this.active = undefined;
    }
  }

  /** A replayed question may have been answered long ago; asking it again would only earn a 409. */
  private async stillOpen(interaction: Interaction): Promise<Interaction | undefined> {
    try {
      const current = await this.deps.lookup(interaction.id);
      return current.status === 'open' ? current : undefined;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        return undefined;
      }
      return interaction;
    }
  }

  private async converse(interaction: Interaction, signal: AbortSignal): Promise<void> {
    const prompter = this.deps.prompter();
    let problem: string | undefined;
    for (;;) {
      this.notes.breakLine();
      let body: AnswerBody;
      try {
        body = await prompter.ask(interaction, signal, problem);
      } catch (error) {
        if (error instanceof PromptCancelledError) {
          return;
        }
        if (error instanceof EndOfInputError) {
          this.inputClosed = true;
          this.note(`stdin is closed; waiting for an answer from elsewhere: ${respondHint(interaction)}`);
          return;
        }
        throw error;
      }
      this.sending = interaction.id;
      try {
        await this.deps.answer(interaction.id, body);
        this.answeredHere.add(interaction.id);
        this.note('✓ answer sent');
        return;
      } catch (error) {
        if (!(error instanceof ApiError)) {
          throw error;
        }
        if (error.status === 409) {
          this.note(`answer not accepted: ${error.message}`);
          const conflict = ClaimConflictSchema.safeParse(error.details);
          if (conflict.success) {
            this.setAside({ ...interaction, claim: conflict.data.claim }, conflict.data.claim);
          }
          return;
        }
        if (error.status === 422 || error.status === 400 || error.status === 413) {
          problem = error.message;
        } else if (error.status === 0 || error.status >= 500) {
          problem = `could not send the answer (${error.message})`;
        } else {
          throw error;
        }
      } finally {
        this.sending = undefined;
        this.deferredEnd?.();
      }
    }
  }

  private end(code: number, report?: () => void): void {
    if (this.finished) {
      return;
    }
    this.stop();
    const finish = (): void => {
      this.deferredEnd = undefined;
      report?.();
      this.settle(code);
    };
    if (this.sending === undefined) {
      finish();
      return;
    }
    // The answer's events can overtake its ack; let "answer sent" print before the run's end.
    this.deferredEnd = finish;
    setTimeout(() => this.deferredEnd?.(), ANSWER_GRACE_MS).unref();
  }

  private stop(): void {
    this.finished = true;
    this.queue = [];
    this.claimed.clear();
    this.active?.controller.abort();
  }

  private human(line: string): void {
    if (!this.deps.json) {
      this.out.line(line);
    }
  }

  private note(line: string): void {
    this.notes.line(line);
  }

  private warn(line: string): void {
    this.out.breakLine();
    this.notes.breakLine();
    this.deps.stderr.write(`${escapeControls(line)}\n`);
  }
}
