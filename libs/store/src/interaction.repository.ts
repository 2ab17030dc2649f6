import type { Actor, Answer, EventDraft, Interaction, InteractionRequest, LogEntry, Outcome } from '@parley/contracts';
import type { StoreContext } from './store.context';
import { isoOf } from './stored-time';

export type ResolveResult =
  | { status: 'resolved'; interaction: Interaction; wake: number | null }
  | { status: 'conflict'; interaction: Interaction }
  | { status: 'claimed'; claim: { subject: string; until: string } }
  | { status: 'missing' };

export type ClaimResult =
  | { status: 'claimed'; claim: { subject: string; until: string } }
  | { status: 'released' }
  | { status: 'held'; claim: { subject: string; until: string } }
  | { status: 'not_claimed' }
  | { status: 'closed'; interactionStatus: string }
  | { status: 'missing' };

/** Sorts after every real deadline: approvals that wait forever come last in the queue. */
export const NO_DEADLINE_SCORE = 8_640_000_000_000_000;

/** The interaction a parking run opens, as stored and as `interaction.opened` carries it. */
export function interactionFor(request: InteractionRequest, now: Date): Interaction {
  return {
    id: request.interactionId,
    tenant: request.tenant,
    runId: request.runId,
    owner: request.owner,
    agent: request.agent,
    waitReason: request.waitReason,
    prompt: request.prompt,
    ...(request.checkpoint ? { checkpoint: request.checkpoint } : {}),
    status: 'open',
    createdAt: now.toISOString(),
    deadline: request.timeoutSecs > 0 ? new Date(Date.parse(request.requestedAt) + request.timeoutSecs * 1000).toISOString() : null,
  };
}

/** Entries a filtered listing looks at, at most (of an index of open interactions, or of a run's log). */
export const LISTING_SCAN_LIMIT = 10_000;
/** Log entries read at a time when listing a run's interactions. */
const LOG_PAGE = 500;

export class InteractionRepository {
  constructor(private readonly ctx: StoreContext) {}

  async get(tenant: string, interactionId: string): Promise<Interaction | null> {
    const hash = await this.ctx.redis.hgetall(this.ctx.keys.interaction(tenant, interactionId));
    return hash.runId ? toInteraction(tenant, interactionId, hash) : null;
  }

  /** The one atomic decision of an interaction; the loser gets `conflict` with the winner's record. */
  async resolve(input: { interaction: Interaction; outcome: Outcome; answer?: Answer; by: Actor }): Promise<ResolveResult> {
    const { interaction, outcome, answer, by } = input;
    const now = new Date();
    const { keys, args } = this.ctx.prologue(interaction.tenant, interaction.runId, interaction.owner, now);
    const k = this.ctx.keys;
    const at = now.toISOString();
    const entry: LogEntry = { type: 'answer', interactionId: interaction.id, outcome, ...(answer ? { answer } : {}), by, at };
    const decision = answer?.kind === 'tool_approval' ? answer.decision : interaction.prompt.kind === 'tool_approval' ? 'deny' : undefined;
    const resolved: EventDraft = {
      type: 'interaction.resolved',
      data: { interactionId: interaction.id, outcome, by, at, ...(decision ? { decision } : {}) },
    };
    const grants = answer?.kind === 'tool_approval' ? answer.grants : [];
    const reply = (await this.ctx.scripts.run(
      'resolveInteraction',
      [
        ...keys,
        k.interaction(interaction.tenant, interaction.id),
        k.openInteractions(interaction.tenant),
        k.run(interaction.tenant, interaction.runId),
        k.runLog(interaction.tenant, interaction.runId),
        k.runInbox(interaction.tenant, interaction.runId),
        k.openApprovals(interaction.tenant),
        k.runGrants(interaction.tenant, interaction.runId),
      ],
      [
        ...args,
        outcome,
        answer ? JSON.stringify(answer) : '',
        JSON.stringify(by),
        JSON.stringify(entry),
        JSON.stringify(resolved.data),
        this.ctx.options.retentionSecs,
        by.kind === 'user' ? (by.subject ?? '') : '',
        ...grants,
      ],
    )) as [string, ...Array<string | number>];
    switch (reply[0]) {
      case 'resolved': {
        const wake = Number(reply[1]);
        // The script dropped any claim with the resolution.
        const { claim: _claim, ...unclaimed } = interaction;
        const done: Interaction = { ...unclaimed, status: outcome, resolvedAt: at, resolvedBy: by, ...(answer ? { answer } : {}) };
        return { status: 'resolved', interaction: done, wake: wake >= 0 ? wake : null };
      }
      case 'conflict': {
        const current = await this.get(interaction.tenant, interaction.id);
        return { status: 'conflict', interaction: current ?? interaction };
      }
      case 'claimed':
        return { status: 'claimed', claim: { subject: String(reply[1]), until: new Date(Number(reply[2])).toISOString() } };
      default:
        return { status: 'missing' };
    }
  }

  /** Takes an open interaction for `by` until `untilMs`, or gives it up (`untilMs` null). */
  async claim(interaction: Interaction, by: Actor & { subject: string }, untilMs: number | null, now = new Date()): Promise<ClaimResult> {
    const { keys, args } = this.ctx.prologue(interaction.tenant, interaction.runId, interaction.owner, now);
    const claim = untilMs === null ? null : { subject: by.subject, until: new Date(untilMs).toISOString() };
    const claimed: EventDraft = { type: 'interaction.claimed', data: { interactionId: interaction.id, claim, by } };
    const reply = (await this.ctx.scripts.run(
      'claimInteraction',
      [...keys, this.ctx.keys.interaction(interaction.tenant, interaction.id)],
      [...args, by.subject, untilMs === null ? '' : String(untilMs), JSON.stringify(claimed.data)],
    )) as [string, string?, string?];
    switch (reply[0]) {
      case 'claimed':
      case 'released':
        return claim ? { status: 'claimed', claim } : { status: 'released' };
      case 'held':
        return { status: 'held', claim: { subject: reply[1] ?? '', until: new Date(Number(reply[2])).toISOString() } };
      case 'not_claimed':
        return { status: 'not_claimed' };
      case 'closed':
        return { status: 'closed', interactionStatus: reply[1] ?? '' };
      default:
        return { status: 'missing' };
    }
  }

  /**
   * Open approvals of a tenant, oldest deadline first, kept when `keep` says so (see {@link listIndexed}).
   */
  listOpenApprovals(tenant: string, keep: (interaction: Interaction) => boolean, limit: number): Promise<Interaction[]> {
    return this.listIndexed(tenant, this.ctx.keys.openApprovals(tenant), (key) => key.slice(key.lastIndexOf(':') + 1), keep, limit);
  }

  /** Open interactions of a tenant, soonest deadline first (none last, oldest first), kept when `keep` says so. */
  listOpen(tenant: string, keep: (interaction: Interaction) => boolean, limit: number): Promise<Interaction[]> {
    return this.listIndexed(tenant, this.ctx.keys.openInteractions(tenant), (id) => id, keep, limit);
  }

  /**
   * Reads an index of open interactions in pages until `limit` are kept, so a filter (a member's own,
   * an agent) never shortens a page it could have filled. It looks at the first
   * {@link LISTING_SCAN_LIMIT} entries at most: a member of a tenant with more open interactions
   * than that may not find theirs past them.
   */
  private async listIndexed(tenant: string, index: string, idOf: (member: string) => string, keep: (interaction: Interaction) => boolean, limit: number): Promise<Interaction[]> {
    const found: Interaction[] = [];
    const page = Math.max(limit, 100);
    for (let start = 0; found.length < limit && start < LISTING_SCAN_LIMIT; start += page) {
      const members = await this.ctx.redis.zrange(index, String(start), String(Math.min(start + page, LISTING_SCAN_LIMIT) - 1));
      if (members.length === 0) {
        break;
      }
      found.push(...(await this.load(tenant, members.map(idOf))).filter((interaction) => interaction.status === 'open' && keep(interaction)));
    }
    return found.slice(0, limit);
  }

  /**
   * The run's latest `limit` interactions kept by `keep`, in the order they were asked. The run's log
   * names each one (a question or checkpoint entry), so no index is kept: it is read newest first, a
   * page at a time, until `limit` are kept, over its last {@link LISTING_SCAN_LIMIT} entries at most.
   */
  async listForRun(tenant: string, runId: string, keep: (interaction: Interaction) => boolean, limit: number): Promise<Interaction[]> {
    const found: Interaction[] = [];
    const logKey = this.ctx.keys.runLog(tenant, runId);
    // From the end as it stands now: the log only grows, so entries appended meanwhile shift nothing.
    const length = await this.ctx.redis.llen(logKey);
    const oldest = Math.max(0, length - LISTING_SCAN_LIMIT);
    for (let end = length - 1; found.length < limit && end >= oldest; end -= LOG_PAGE) {
      const lines = await this.ctx.redis.lrange(logKey, Math.max(oldest, end - LOG_PAGE + 1), end);
      const ids: string[] = [];
      for (const line of lines.reverse()) {
        const entry = JSON.parse(line) as LogEntry;
        // An automatic checkpoint has an entry but no interaction: load() leaves it out.
        if (entry.type === 'question' || entry.type === 'checkpoint') {
          ids.push(entry.interactionId);
        }
      }
      found.push(...(await this.load(tenant, ids)).filter(keep));
    }
    return found.slice(0, limit).reverse();
  }

  private async load(tenant: string, ids: string[]): Promise<Interaction[]> {
    if (ids.length === 0) {
      return [];
    }
    const pipeline = this.ctx.redis.pipeline();
    ids.forEach((id) => pipeline.hgetall(this.ctx.keys.interaction(tenant, id)));
    const replies = (await pipeline.exec()) ?? [];
    return replies.flatMap(([, hash], i) => {
      const fields = hash as Record<string, string>;
      return fields.runId ? [toInteraction(tenant, ids[i], fields)] : [];
    });
  }
}

/**
 * An interaction is kept as a flat hash of short fields (the prompt as JSON), so that Redis keeps a
 * short question as a compact listpack; one value over 64 bytes makes it a larger hashtable.
 */
export function interactionFields(interaction: Interaction): string[] {
  return [
    'runId',
    interaction.runId,
    'owner',
    interaction.owner,
    'agent',
    interaction.agent,
    'waitReason',
    interaction.waitReason,
    'kind',
    interaction.prompt.kind,
    'prompt',
    JSON.stringify(interaction.prompt),
    ...(interaction.checkpoint ? ['checkpoint', JSON.stringify(interaction.checkpoint)] : []),
    'createdAt',
    String(Date.parse(interaction.createdAt)),
    ...(interaction.deadline ? ['deadline', String(Date.parse(interaction.deadline))] : []),
    'status',
    interaction.status,
  ];
}

function toInteraction(tenant: string, id: string, h: Record<string, string>): Interaction {
  const claimUntil = Number(h.claimUntil ?? 0);
  return {
    ...(h.claimSubject && claimUntil > Date.now() ? { claim: { subject: h.claimSubject, until: new Date(claimUntil).toISOString() } } : {}),
    id,
    tenant,
    runId: h.runId,
    owner: h.owner,
    agent: h.agent,
    waitReason: h.waitReason as Interaction['waitReason'],
    prompt: JSON.parse(h.prompt) as Interaction['prompt'],
    ...(h.checkpoint ? { checkpoint: JSON.parse(h.checkpoint) as NonNullable<Interaction['checkpoint']> } : {}),
    status: h.status as Interaction['status'],
    createdAt: isoOf(h.createdAt),
    deadline: h.deadline ? isoOf(h.deadline) : null,
    ...(h.resolvedAt ? { resolvedAt: isoOf(h.resolvedAt) } : {}),
    ...(h.resolvedBy ? { resolvedBy: JSON.parse(h.resolvedBy) as Actor } : {}),
    ...(h.answer ? { answer: JSON.parse(h.answer) as Answer } : {}),
  };
}
