import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';
import { DeadlineJobSchema, QUEUES, jobIds, parseOrThrow, type DeadlineJob } from '@parley/contracts';
import { ReplyLostError, metrics, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, RunControl, type Expired } from '@parley/store';

/** Interactions expired per script call; their resume jobs go to the queue in one round trip. */
const BATCH = 200;
/** How far before a batch the runs it may have woken are looked for when its reply was lost. */
const IN_FLIGHT_MARGIN_MS = 1000;

export interface DeadlineSweep {
  expired: number;
  /** Index entries whose interaction was no longer open (resolved in a race, or gone after retention). */
  dropped: number;
  /** The due time of the next timer job, or null when the tenant has no deadline left. */
  next: number | null;
}

/**
 * A tenant's deadline timer fired: every interaction of the tenant whose deadline has passed is
 * resolved as expired (silence on a question means "no answer"), in batches, each one script call
 * and one bulk enqueue of the woken runs; then the timer is re-armed at the earliest deadline left.
 * One job per tenant, not one per question.
 */
@Injectable()
export class DeadlineProcessor extends QueueProcessor<DeadlineJob> {
  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    private readonly control: RunControl,
  ) {
    super(QUEUES.deadlines, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 8 });
  }

  async process(job: Job<DeadlineJob>, token?: string): Promise<DeadlineSweep> {
    const { tenant } = parseOrThrow(DeadlineJobSchema, job.data, 'deadline job');
    const sweep: DeadlineSweep = { expired: 0, dropped: 0, next: null };
    // Deadlines are judged by Redis's clock, as expire-due read it last.
    let redisNowMs: number;
    // What fell due while this job swept is swept by it too, not left to a job of its own.
    do {
      redisNowMs = await this.sweepDue(tenant, sweep);
      sweep.next = await this.store.deadlines.rearm(tenant);
    } while (sweep.next !== null && sweep.next <= redisNowMs);
    if (sweep.next !== null) {
      if (job.id === jobIds.deadlineTimer(tenant, sweep.next)) {
        // Promoted by a host clock that runs ahead of Redis's: a new job of this id would be a no-op
        // (it is this job), so this job waits the rest of the time itself.
        await job.moveToDelayed(Date.now() + (sweep.next - redisNowMs), token);
        throw new DelayedError();
      }
      await this.queues.scheduleDeadlineTimer(tenant, sweep.next, redisNowMs);
    }
    return sweep;
  }

  /** Expires what is due, batch after batch; returns Redis's time of the last batch. */
  private async sweepDue(tenant: string, sweep: DeadlineSweep): Promise<number> {
    for (;;) {
      // On the clock the in-flight index is scored by (the scripts' callers'), with a margin for its error.
      const startedAt = this.store.ctx.clock.nowMs() - IN_FLIGHT_MARGIN_MS;
      let batch: Awaited<ReturnType<ParleyStore['deadlines']['expireDue']>>;
      try {
        batch = await this.store.deadlines.expireDue(tenant, BATCH);
      } catch (error) {
        if (!(error instanceof ReplyLostError)) {
          throw error;
        }
        // The batch may have run, its reply lost: the runs it woke would wait queued without a job
        // until the sweeper. Every run that went in flight since gets its job now (a no-op for one
        // that has it), and the next batch is read.
        const runIds = await this.store.inflight.since(tenant, startedAt, BATCH);
        await Promise.all(runIds.map((runId) => this.control.ensureQueued(tenant, runId)));
        continue;
      }
      const { expired, dropped, redisNowMs } = batch;
      // A crash before this enqueue leaves woken runs queued without a job: they are in flight, so
      // the sweeper gives them one.
      await this.queues.enqueueRuns(expired.flatMap(({ runId, wake }) => (wake === null ? [] : [{ tenant, runId, wake }])));
      this.observe(tenant, expired, redisNowMs);
      sweep.expired += expired.length;
      sweep.dropped += dropped;
      if (expired.length + dropped < BATCH) {
        return redisNowMs;
      }
    }
  }

  private observe(tenant: string, expired: Expired[], now: number): void {
    for (const { interactionId, runId, deadlineMs } of expired) {
      const lateMs = Math.max(0, now - deadlineMs);
      metrics.deadlineLateness.observe(lateMs / 1000);
      this.logger.log({ msg: 'deadline resolved an unanswered interaction', tenant, runId, interactionId, lateMs });
    }
  }
}
