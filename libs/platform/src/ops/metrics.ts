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
let lastCluster: Promise<ClusterGauges> | undefined;

/** One Redis read serves every cluster gauge of a scrape. */
function clusterGauges(): Promise<ClusterGauges> | undefined {
  if (!clusterSource) {
    return undefined;
  }
  lastCluster ??= clusterSource().finally(() => {
    setImmediate(() => (lastCluster = undefined));
  });
  return lastCluster;
}

/**
 * Makes this process report the deployment-wide gauges (parked runs, open interactions, queue
 * depths). One kind of service does (the interaction-service), so sums across processes stay true.
 * Returns the function that stops it.
 */
export function setClusterGaugeSource(source: () => Promise<ClusterGauges>): () => void {
  clusterSource = source;
  return () => {
    if (clusterSource === source) {
      clusterSource = undefined;
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
      const gauges = await clusterGauges();
      if (gauges) {
        this.set(gauges.parkedRuns);
      }
    },
  }),
  openInteractions: new Gauge({
    name: 'parley_open_interactions',
    help: 'Interactions open, by kind (deployment-wide; reported by interaction-services)',
    labelNames: ['kind'] as const,
    registers: [metricsRegistry],
    async collect() {
      const gauges = await clusterGauges();
      if (gauges) {
        this.reset();
        for (const [kind, count] of Object.entries(gauges.openInteractions)) {
          this.set({ kind }, count);
        }
      }
    },
  }),
  queueJobs: new Gauge({
    name: 'parley_queue_jobs',
    help: 'BullMQ jobs per queue and state (deployment-wide; reported by interaction-services)',
    labelNames: ['queue', 'state'] as const,
    registers: [metricsRegistry],
    async collect() {
      const gauges = await clusterGauges();
      if (gauges) {
        this.reset();
        for (const [queue, states] of Object.entries(gauges.queues)) {
          for (const [state, count] of Object.entries(states)) {
            this.set({ queue, state }, count);
          }
        }
      }
    },
  }),
};
