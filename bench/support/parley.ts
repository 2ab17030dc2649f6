import type { AnswerBody, EventType, ParleyEvent, Prompt } from '@parley/contracts';
import type { TestClient } from '../../test/support/stack';
import { nowMs, sleep } from './stats';

/**
 * A scripted agent that asks `questions` free-text questions in a row (one per model turn, no
 * text, so no message deltas), then finishes. `timeoutSecs` 3600 is the agents' default limit: each
 * question's deadline is then filed in a tenant index by `park` and dropped by the answer.
 */
export function questionerAgent(name: string, questions: number, timeoutSecs = 3600) {
  const turns: Array<Record<string, unknown>> = [];
  for (let i = 0; i < questions; i++) {
    turns.push({ tool_calls: [{ name: 'ask_user_text', input: { question: `Question ${i + 1}?` } }] });
  }
  turns.push({ tool_calls: [{ name: 'finish', input: { summary: 'last: {{last_answer}}' } }] });
  return {
    name,
    model: { provider: 'scripted', turns },
    tools: ['ask_user_text', 'finish'],
    limits: { max_iterations: questions + 5, max_ask_user_per_loop: questions, interaction_timeout_secs: timeoutSecs },
  };
}

/**
 * A scripted agent that writes `calls` files in a row with `write_file` (permission `ask`, the
 * default), one call per model turn and each to a different path (`out/<n>.txt`), then finishes.
 * Every call needs an approval unless a run grant covers it; each approval is a `tool_approval`
 * interaction with the same default deadline as the questions above.
 */
export function writerAgent(name: string, calls: number, timeoutSecs = 3600) {
  const turns: Array<Record<string, unknown>> = [];
  for (let i = 0; i < calls; i++) {
    turns.push({ tool_calls: [{ name: 'write_file', input: { path: `out/${i}.txt`, content: `file ${i}` } }] });
  }
  turns.push({ tool_calls: [{ name: 'finish', input: { summary: 'written' } }] });
  return {
    name,
    model: { provider: 'scripted', turns },
    tools: ['write_file', 'finish'],
    limits: { max_iterations: calls + 5, interaction_timeout_secs: timeoutSecs },
  };
}

export type BenchAgent = ReturnType<typeof questionerAgent> | ReturnType<typeof writerAgent>;

interface Pending {
  sentAt: number;
}

export interface AnswererOptions {
  /** The answer to every `tool_approval` (default `{ decision: 'allow_once' }`); other kinds get `{ text }`. */
  approval?: AnswerBody;
}

/**
 * Answers every interaction of the runs it sees, over socket.io, as soon as `interaction.opened`
 * arrives, by the prompt's kind: a `tool_approval` gets the configured decision, anything else a
 * `{ text }`. It times each answer to the run's resume: the `run.status` event with status
 * `running` that follows. An answer that lands before the worker has parked the run is absorbed
 * without a resume (the worker reads it and goes on): such cycles are counted, not timed.
 *
 * While held (`hold()`), it collects the interactions that open instead of answering them, and
 * `release()` answers them all at once. It also times the gap between consecutive `tool.result`
 * events of a run with no interaction in between (`finish` aside): one model turn plus one tool
 * call that ran without asking anyone (`stepMs`).
 */
export class AutoAnswerer {
  /**
   * The event types it reads to answer and time resumes: a client that subscribes to these only is
   * sent nothing it ignores. `stepMs` needs `tool.result` besides.
   */
  static readonly TYPES: readonly EventType[] = ['interaction.opened', 'run.status', 'run.finished', 'run.failed', 'run.cancelled'];
  readonly resumeMs: number[] = [];
  readonly cycleMs: number[] = [];
  readonly stepMs: number[] = [];
  readonly finished = new Map<string, 'finished' | 'failed' | 'cancelled'>();
  answered = 0;
  /** Of `answered`, how many were `tool_approval` interactions. */
  approvals = 0;
  absorbed = 0;
  ackErrors: string[] = [];
  private readonly pending = new Map<string, Pending>();
  /** When each run's last answer was sent: answer → next question is one whole cycle. */
  private readonly lastSent = new Map<string, number>();
  /** When each run's last `tool.result` arrived, while no interaction has opened since. */
  private readonly lastResult = new Map<string, number>();
  private readonly approval: AnswerBody;
  private holding = false;
  private held: Array<{ runId: string; interactionId: string; kind: Prompt['kind'] }> = [];

  constructor(
    private readonly client: TestClient,
    options: AnswererOptions = {},
  ) {
    this.approval = options.approval ?? { decision: 'allow_once' };
    client.socket.on('event', (event: ParleyEvent) => this.onEvent(event));
  }

  reset(): void {
    this.resumeMs.length = 0;
    this.cycleMs.length = 0;
    this.stepMs.length = 0;
    this.answered = 0;
    this.approvals = 0;
    this.absorbed = 0;
    this.ackErrors = [];
  }

  /** From now on, collect opened interactions instead of answering them. */
  hold(): void {
    this.holding = true;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Answers every collected interaction at once and goes back to answering as they open. */
  release(): void {
    this.holding = false;
    const held = this.held;
    this.held = [];
    held.forEach(({ runId, interactionId, kind }) => this.answer(runId, interactionId, kind));
  }

  async waitHeld(count: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.held.length < count) {
      if (this.ackErrors.length > 0) {
        throw new Error(`answer failed: ${this.ackErrors[0]}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`only ${this.held.length} of ${count} interactions opened within ${timeoutMs} ms`);
      }
      await sleep(5);
    }
  }

  private onEvent(event: ParleyEvent): void {
    const at = nowMs();
    const pending = this.pending.get(event.runId);
    switch (event.type) {
      case 'interaction.opened': {
        if (pending) {
          // The previous answer never produced a resume event: it was absorbed by a running worker.
          this.absorbed++;
        }
        this.pending.delete(event.runId);
        this.lastResult.delete(event.runId);
        const last = this.lastSent.get(event.runId);
        if (last !== undefined) {
          this.cycleMs.push(at - last);
        }
        const { id, prompt } = event.data.interaction;
        if (this.holding) {
          this.held.push({ runId: event.runId, interactionId: id, kind: prompt.kind });
        } else {
          this.answer(event.runId, id, prompt.kind);
        }
        return;
      }
      case 'tool.result': {
        // `finish` records a result too: that last turn is not a tool call run without asking.
        const previous = this.lastResult.get(event.runId);
        if (previous !== undefined && event.data.name !== 'finish') {
          this.stepMs.push(at - previous);
        }
        this.lastResult.set(event.runId, at);
        return;
      }
      case 'run.status':
        if (pending && event.data.status === 'running') {
          this.resumeMs.push(at - pending.sentAt);
          this.pending.delete(event.runId);
        }
        return;
      case 'run.finished':
      case 'run.failed':
      case 'run.cancelled':
        if (pending) {
          this.absorbed++;
          this.pending.delete(event.runId);
        }
        this.lastSent.delete(event.runId);
        this.lastResult.delete(event.runId);
        this.finished.set(event.runId, event.type === 'run.finished' ? 'finished' : event.type === 'run.failed' ? 'failed' : 'cancelled');
        return;
      case 'interaction.resolved':
      case 'interaction.claimed':
      case 'stage.entered':
      case 'checkpoint.proceeded':
      case 'message.received':
      case 'message.injected':
      case 'message.discarded':
      case 'child.started':
      case 'child.ended':
      case 'document.updated':
      case 'message.delta':
      case 'message':
      case 'run.created':
      case 'tool.call':
      case 'run.stop_requested':
        return;
    }
  }

  private answer(runId: string, interactionId: string, kind: Prompt['kind']): void {
    const sentAt = nowMs();
    this.pending.set(runId, { sentAt });
    this.lastSent.set(runId, sentAt);
    this.answered++;
    let answer: AnswerBody;
    if (kind === 'tool_approval') {
      this.approvals++;
      answer = this.approval;
    } else {
      answer = { text: `ok ${this.answered}` };
    }
    this.client.socket
      .timeout(30_000)
      .emitWithAck('answer', { interactionId, answer })
      .then(
        (ack: { ok?: boolean; error?: { message: string } }) => {
          if (!ack.ok) {
            this.ackErrors.push(ack.error?.message ?? 'not ok');
          }
        },
        (error: unknown) => this.ackErrors.push(String(error)),
      );
  }

  async waitFinished(runIds: string[], timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (runIds.some((id) => !this.finished.has(id))) {
      if (Date.now() > deadline) {
        const left = runIds.filter((id) => !this.finished.has(id)).length;
        throw new Error(`${left} of ${runIds.length} runs did not finish within ${timeoutMs} ms`);
      }
      await sleep(5);
    }
  }
}
