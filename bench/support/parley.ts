import type { ParleyEvent } from '@parley/contracts';
import type { TestClient } from '../../test/support/stack';
import { nowMs, sleep } from './stats';

/**
 * A scripted agent that asks `questions` free-text questions in a row (one per model turn, no
 * text, so no message deltas), then finishes. `timeoutSecs` 3600 is the agents' default limit: each
 * question then also schedules a deadline job, and each answer cancels it.
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

interface Pending {
  sentAt: number;
}

/**
 * Answers every question of the runs it sees, over socket.io, as soon as `interaction.opened`
 * arrives, and times each answer to the run's resume: the `run.status` event with status
 * `running` that follows. An answer that lands before the worker has parked the run is absorbed
 * without a resume (the worker reads it and goes on): such cycles are counted, not timed.
 */
export class AutoAnswerer {
  readonly resumeMs: number[] = [];
  readonly cycleMs: number[] = [];
  readonly finished = new Map<string, 'finished' | 'failed' | 'cancelled'>();
  answered = 0;
  absorbed = 0;
  ackErrors: string[] = [];
  private readonly pending = new Map<string, Pending>();
  /** When each run's last answer was sent: answer → next question is one whole cycle. */
  private readonly lastSent = new Map<string, number>();

  constructor(private readonly client: TestClient) {
    client.socket.on('event', (event: ParleyEvent) => this.onEvent(event));
  }

  reset(): void {
    this.resumeMs.length = 0;
    this.cycleMs.length = 0;
    this.answered = 0;
    this.absorbed = 0;
    this.ackErrors = [];
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
        const last = this.lastSent.get(event.runId);
        if (last !== undefined) {
          this.cycleMs.push(at - last);
        }
        this.answer(event.runId, event.data.interaction.id);
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
        this.finished.set(event.runId, event.type === 'run.finished' ? 'finished' : event.type === 'run.failed' ? 'failed' : 'cancelled');
        return;
      case 'interaction.resolved':
      case 'interaction.claimed':
      case 'message.delta':
      case 'message':
      case 'run.created':
      case 'tool.call':
      case 'tool.result':
        return;
    }
  }

  private answer(runId: string, interactionId: string): void {
    const sentAt = nowMs();
    this.pending.set(runId, { sentAt });
    this.lastSent.set(runId, sentAt);
    this.answered++;
    this.client.socket
      .timeout(30_000)
      .emitWithAck('answer', { interactionId, answer: { text: `ok ${this.answered}` } })
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
