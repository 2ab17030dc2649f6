import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Deployment-wide figures read from Redis when Prometheus scrapes (see setClusterGaugeSource). */
export interface ClusterGauges {
  parkedRuns: number;
  openInteractions: Record<string, number>;
  /** Job counts per queue and BullMQ state (waiting, active, delayed, failed, ...). */
  queues: Record<string, Record<string, number>>;
}

/** This process's metrics; one registry per process, whatever the number of services in it. */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'parley_process_' });

let clusterSource: (() => Promise<ClusterGauges>) | undefined;
let lastCluster: Promise<ClusterGauges | null> | undefined;
/** A scrape does not wait longer for the Redis read (Prometheus gives up on a scrape after 10 s by default). */
const CLUSTER_READ_MS = 2000;

/**
 * One Redis read serves every cluster gauge of a scrape: undefined when this process does not report
 * them, null when Redis did not answer in time (the gauges are then left out, the rest of the scrape
 * still served).
 */
function clusterGauges(): Promise<ClusterGauges | null> | undefined {
  if (!clusterSource) {
    return undefined;
  }
  if (!lastCluster) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), CLUSTER_READ_MS);
    });
    lastCluster = Promise.race([clusterSource().catch(() => null), late]).finally(() => {
      clearTimeout(timer);
      setImmediate(() => (lastCluster = undefined));
    });
  }
  return lastCluster;
}

/**
 * Sets a cluster gauge from this scrape's read. When the read failed, a labelled gauge is left out of
 * the scrape and one without labels (which prom-client always reports) is NaN: unknown, not 0.
 */
async function collectCluster(gauge: { reset(): void; set(value: number): void }, set: (gauges: ClusterGauges) => void, labelled = true): Promise<void> {
  const read = clusterGauges();
  if (!read) {
    return;
  }
  const gauges = await read;
  gauge.reset();
  if (gauges) {
    set(gauges);
  } else if (!labelled) {
    gauge.set(NaN);
  }
}

/**
 * Makes this process report the deployment-wide gauges (parked runs, open interactions, queue
 * depths). One kind of service does (the interaction-service), so sums across processes stay true.
 * Returns the function that stops it: the gauges are then unknown (NaN), not 0, while the process
 * stops (unless another source took over meanwhile).
 */
export function setClusterGaugeSource(source: () => Promise<ClusterGauges>): () => void {
  clusterSource = source;
  return () => {
    if (clusterSource === source) {
      clusterSource = () => Promise.reject(new Error('stopped'));
    }
  };
}

export const metrics = {
  answerToResume: new Histogram({
    name: 'parley_answer_to_resume_seconds',
    help: 'From an interaction resolved (answer, deadline) to a worker resuming its run',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [metricsRegistry],
  }),
  deadlineLateness: new Histogram({
    name: 'parley_deadline_lateness_seconds',
    help: 'How long after its deadline an unanswered interaction was resolved',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [metricsRegistry],
  }),
  modelLatency: new Histogram({
    name: 'parley_model_request_seconds',
    help: 'Duration of one model call (a whole streamed turn)',
    labelNames: ['provider', 'outcome'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160],
    registers: [metricsRegistry],
  }),
  modelTokens: new Counter({
    name: 'parley_model_tokens_total',
    help: 'Tokens the model provider reported, by direction (input, output, cache_read, cache_write)',
    labelNames: ['provider', 'direction'] as const,
    registers: [metricsRegistry],
  }),
  webhookDeliveriesGivenUp: new Counter({
    name: 'parley_webhook_deliveries_given_up_total',
    help: 'Webhook deliveries recorded as failed without all their tries: their endpoint had more newer deliveries than its log keeps, or their job failed for good before a try was recorded',
    registers: [metricsRegistry],
  }),
  webhookEventsAbandoned: new Counter({
    name: 'parley_webhook_events_abandoned_total',
    help: 'Events given up on their way to webhooks: recording their deliveries failed, with Redis answering, on each of PARLEY_WEBHOOK_ROUTE_TRIES tries',
    registers: [metricsRegistry],
  }),
  socketConnections: new Gauge({
    name: 'parley_socket_connections',
    help: 'socket.io connections open on this gateway',
    registers: [metricsRegistry],
  }),
  parkedRuns: new Gauge({
    name: 'parley_parked_runs',
    help: 'Runs waiting for a person or a sub-agent (deployment-wide; reported by interaction-services)',
    registers: [metricsRegistry],
    async collect() {
      await collectCluster(this, (gauges) => this.set(gauges.parkedRuns), false);
    },
  }),
  openInteractions: new Gauge({
    name: 'parley_open_interactions',
    help: 'Interactions open, by kind (deployment-wide; reported by interaction-services)',
    labelNames: ['kind'] as const,
    registers: [metricsRegistry],
    async collect() {
      await collectCluster(this, (gauges) => Object.entries(gauges.openInteractions).forEach(([kind, count]) => this.set({ kind }, count)));
    },
  }),
  queueJobs: new Gauge({
    name: 'parley_queue_jobs',
    help: 'BullMQ jobs per queue and state (deployment-wide; reported by interaction-services)',
    labelNames: ['queue', 'state'] as const,
    registers: [metricsRegistry],
    async collect() {
      await collectCluster(this, (gauges) =>
        Object.entries(gauges.queues).forEach(([queue, states]) => Object.entries(states).forEach(([state, count]) => this.set({ queue, state }, count))),
      );
    },
  }),
};
