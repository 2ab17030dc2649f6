import { createHash } from 'node:crypto';
/**
 * The Redis key layout. Every key of a tenant carries the tenant's hash tag, so a run's keys, its
 * interactions and the tenant's event stream share one Redis Cluster slot and one script can touch
 * them all atomically.
 */
export class RedisKeys {
  /** `cluster`: the layout for Redis Cluster, where BullMQ's keys need a hash tag too (see bullPrefix). */
  constructor(
    readonly prefix: string,
    readonly options: { cluster?: boolean } = {},
  ) {}

  private tenant(tenant: string): string {
    return `${this.prefix}:{t:${tenant}}`;
  }

  seq(tenant: string): string {
    return `${this.tenant(tenant)}:seq`;
  }
  tenantEvents(tenant: string): string {
    return `${this.tenant(tenant)}:events`;
  }
  /** The seq of the newest event trimmed from the tenant stream (a string, kept by emit.lua, named after seq() there). */
  trimmedEvents(tenant: string): string {
    return `${this.tenant(tenant)}:trimmed`;
  }
  runIndex(tenant: string): string {
    return `${this.tenant(tenant)}:runs`;
  }
  /** Open interaction ids by deadline (epoch ms); those without one after every deadline, by open time. */
  openInteractions(tenant: string): string {
    return `${this.tenant(tenant)}:open-ix`;
  }
  /** Open approvals of the tenant, scored by deadline (epoch ms): the admin approval queue. */
  openApprovals(tenant: string): string {
    return `${this.tenant(tenant)}:approval-ix`;
  }
  /** Queued and running runs, scored by when they became so: what the sweeper watches. */
  inflightRuns(tenant: string): string {
    return `${this.tenant(tenant)}:inflight`;
  }
  /** Runs that ended with sub-agents not yet stopped, scored by when (epoch ms): the sweeper finishes a cascade that died. */
  cascades(tenant: string): string {
    return `${this.tenant(tenant)}:cascades`;
  }
  /** Under a concurrent-run limit: the run ids the gateway admitted that have not ended, scored by start (epoch ms). */
  activeRuns(tenant: string): string {
    return `${this.tenant(tenant)}:active-runs`;
  }
  /** Under a per-owner concurrent-run limit: the run ids admitted for one owner that have not ended, scored by start (epoch ms); named as emit.lua names it. */
  ownerActiveRuns(tenant: string, owner: string): string {
    return `${this.activeRuns(tenant)}:user:${userDigest(owner)}`;
  }
  /** A fixed-window counter of one per-tenant rate limit (e.g. "runs", "messages"); expires with its window. */
  rateWindow(tenant: string, name: string): string {
    return `${this.tenant(tenant)}:rate:${name}`;
  }
  /** The same counter for one user of the tenant, named by a digest of the user (any characters, any length). */
  userRateWindow(tenant: string, name: string, user: string): string {
    return `${this.rateWindow(tenant, name)}:user:${userDigest(user)}`;
  }
  /** The seqs of one owner's events (packed as a run's; named by the owner's digest, as emit.lua names it). */
  ownerEventSeqs(tenant: string, owner: string): string {
    return `${this.tenant(tenant)}:owner:${userDigest(owner)}:seqs`;
  }
  /** The newest seq cut from each owner's seqs, by the owner's digest (a hash, kept by emit.lua). */
  ownerSeqCuts(tenant: string): string {
    return `${this.tenant(tenant)}:owner-cuts`;
  }
  /** Owners by digest, each scored at or below the newest seq in its seqs: what trimming sweeps for owners gone quiet (emit.lua). */
  ownerLast(tenant: string): string {
    return `${this.tenant(tenant)}:owner-last`;
  }
  /** The first seq filed in an owner's seqs in the tenant: older events are found only in the tenant stream. */
  ownerSeqsFrom(tenant: string): string {
    return `${this.tenant(tenant)}:owner-seqs-from`;
  }
  /** The tenant's socket.io connections across gateways ("<gateway>:<socket>"), scored by expiry (epoch ms). */
  tenantSockets(tenant: string): string {
    return `${this.tenant(tenant)}:sockets`;
  }
  /**
   * A start's idempotency key → the id of the run it made (a string, named by a digest of the caller
   * and the key). It lives while that run does and expires with it (create-run.lua, closeRun).
   */
  startKey(tenant: string, caller: string, key: string): string {
    return `${this.tenant(tenant)}:start-key:${createHash('sha256').update(JSON.stringify([caller, key])).digest('hex')}`;
  }
  /** Set from before a start with that key is admitted until it has its answer (at most 20 s): the id it gives its run. */
  startKeyPending(tenant: string, caller: string, key: string): string {
    return `${this.startKey(tenant, caller, key)}:starting`;
  }
  /** Prefix of the tenant's run hashes: scripts that prune by run status append the run id. */
  runPrefix(tenant: string): string {
    return `${this.tenant(tenant)}:run:`;
  }
  interaction(tenant: string, interactionId: string): string {
    return `${this.tenant(tenant)}:ix:${interactionId}`;
  }

  run(tenant: string, runId: string): string {
    return `${this.tenant(tenant)}:run:${runId}`;
  }
  runLog(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:log`;
  }
  runInbox(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:inbox`;
  }
  /** Messages sent with an idempotency key: message id (derived from the key) → SHA-256 of the text. */
  runMessageKeys(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:msg-keys`;
  }
  /** The sequence numbers of the run's events, oldest first (a packed string, 6 bytes each): the events themselves are in the tenant stream. */
  runEventSeqs(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:seqs`;
  }
  workspace(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:ws`;
  }
  effects(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:fx`;
  }
  /** Grant-set members ("run|<key>", "stage|<stage>|<key>") given by scoped approvals; deleted when the run ends. */
  runGrants(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:grants`;
  }
  /** Messages a person sent that wait to be injected between inference calls. */
  runMessages(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:msgs`;
  }
  /** Sub-agent run ids started by this run. */
  runChildren(tenant: string, runId: string): string {
    return `${this.run(tenant, runId)}:children`;
  }
  /** What a sub-agent's last step touches of its parent: hash, log, inbox, event seqs. */
  parentKeys(tenant: string, parentRunId: string): string[] {
    return [this.run(tenant, parentRunId), this.runLog(tenant, parentRunId), this.runInbox(tenant, parentRunId), this.runEventSeqs(tenant, parentRunId)];
  }
  /** Keys that live and expire with the run. The order is read by end-run and cancel-run (emit.lua's OWNED_MESSAGES). */
  runOwned(tenant: string, runId: string): string[] {
    return [
      this.runLog(tenant, runId),
      this.runInbox(tenant, runId),
      this.workspace(tenant, runId),
      this.effects(tenant, runId),
      this.runMessages(tenant, runId),
      this.runChildren(tenant, runId),
      this.runMessageKeys(tenant, runId),
    ];
  }

  /** Every tenant that ever started a run here (a set; for deployment-wide gauges). */
  tenants(): string {
    return `${this.prefix}:tenants`;
  }
  /** Due time (epoch ms) of the earliest deadline timer job scheduled for the tenant; named after seq() in emit.lua. */
  deadlineTimer(tenant: string): string {
    return `${this.tenant(tenant)}:deadline-timer`;
  }
  /** The tenant's gauges hash (parked, open:<kind>), kept by the scripts; named after seq() in emit.lua. */
  gauges(tenant: string): string {
    return `${this.tenant(tenant)}:gauges`;
  }
  /** Tenant agents: name → JSON { digest, uploadedAt, uploadedBy, sizeBytes } of the current version. */
  tenantAgents(tenant: string): string {
    return `${this.tenant(tenant)}:agents`;
  }
  /** Prefix of the version keys of tenant agents (scripts append the digest). */
  agentVersionPrefix(tenant: string): string {
    return `${this.tenant(tenant)}:agent:`;
  }
  /** One version of a tenant agent: its canonical JSON, never changed (the key names its digest). */
  agentVersion(tenant: string, digest: string): string {
    return `${this.agentVersionPrefix(tenant)}${digest}`;
  }
  /** Run ids started with a version that may not have ended: a superseded version is kept while one has not. */
  agentVersionRuns(tenant: string, digest: string): string {
    return `${this.agentVersion(tenant, digest)}:runs`;
  }
  /** Versions no longer current (replaced or deleted), scored by when (epoch ms); dropped once no run needs them. */
  agentSuperseded(tenant: string): string {
    return `${this.tenant(tenant)}:agents:superseded`;
  }
  /** Versions whose powers a platform operator enabled: digest → JSON { agent, enabledBy, enabledAt }. */
  agentPowers(tenant: string): string {
    return `${this.tenant(tenant)}:agents:powers`;
  }

  /** Pub/sub channel of live events (one per deployment; gateways filter by tenant). */
  eventsChannel(): string {
    return `${this.prefix}:events`;
  }
  /**
   * BullMQ prefix of this deployment's queues. A BullMQ script touches many keys of its queue, so on
   * a cluster they need one hash tag: one for all queues of the deployment (they share a slot, and so
   * a node). Keys still start with the prefix, so a scan by prefix finds them. A single Redis keeps
   * the untagged prefix, so switching needs no migration there (moving to a cluster moves the data anyway).
   */
  bullPrefix(): string {
    return this.options.cluster ? `${this.prefix}:{${this.prefix}:bull}` : `${this.prefix}:bull`;
  }

  /** The tenant's webhook endpoints: id → endpoint JSON (with its secret). */
  webhooks(tenant: string): string {
    return `${this.tenant(tenant)}:webhooks`;
  }
  /** An endpoint's delivery log: delivery ids scored by creation (epoch ms), capped. */
  webhookDeliveries(tenant: string, webhookId: string): string {
    return `${this.tenant(tenant)}:webhook:${webhookId}:deliveries`;
  }
  /** An endpoint's deliveries being sent now: delivery id scored by when its slot lapses (epoch ms). */
  webhookInflight(tenant: string, webhookId: string): string {
    return `${this.tenant(tenant)}:webhook:${webhookId}:inflight`;
  }
  /** The tenant's deliveries being sent now, to any of its endpoints: delivery id scored by when its slot lapses (epoch ms). */
  webhookTenantInflight(tenant: string): string {
    return `${this.tenant(tenant)}:webhooks:inflight`;
  }
  /** An endpoint's deliveries waiting for a slot: delivery id scored by when it last looked (epoch ms). */
  webhookWaiting(tenant: string, webhookId: string): string {
    return `${this.tenant(tenant)}:webhook:${webhookId}:waiting`;
  }
  /** An endpoint's health: failures in a row, paused until, average duration of a try. */
  webhookHealth(tenant: string, webhookId: string): string {
    return `${this.tenant(tenant)}:webhook:${webhookId}:health`;
  }
  /** One delivery: its payload, status and counters. */
  webhookDelivery(tenant: string, deliveryId: string): string {
    return `${this.tenant(tenant)}:whd:${deliveryId}`;
  }
  /** One delivery's attempts (JSON each), oldest first. */
  webhookDeliveryAttempts(tenant: string, deliveryId: string): string {
    return `${this.webhookDelivery(tenant, deliveryId)}:attempts`;
  }
  /** Tenants with webhook endpoints (deployment-wide): the webhook dispatcher reads their event streams. */
  webhookTenants(): string {
    return `${this.prefix}:webhooks:tenants`;
  }
  /** Deployment-wide stream that wakes the webhook dispatchers when a tenant's endpoints change. */
  webhookControl(): string {
    return `${this.prefix}:webhooks:control`;
  }
}

/** The hex SHA-1 of a user (or owner) id, as keys name them: any characters, a fixed length. */
export function userDigest(user: string): string {
  return createHash('sha1').update(user).digest('hex');
}
