import type { Actor, Answer, EventDraft, Interaction, InteractionRequest, LogEntry, Outcome } from '@parley/contracts';
import { toInteraction } from './interaction.hash';
import { listForRun, listIndexed, type InteractionListing, type InteractionPage } from './interaction.listing';
import type { StoreContext } from './store.context';

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

export class InteractionRepository {
  constructor(private readonly ctx: StoreContext) {}

  async get(tenant: string, interactionId: string): Promise<Interaction | null> {
    const hash = await this.ctx.redis.hgetall(this.ctx.keys.interaction(tenant, interactionId));
    return hash.runId ? toInteraction(tenant, interactionId, hash, this.ctx.clock.nowMs()) : null;
  }

  /** The one atomic decision of an interaction; the loser gets `conflict` with the winner's record. */
  async resolve(input: { interaction: Interaction; outcome: Outcome; answer?: Answer; by: Actor }): Promise<ResolveResult> {
    const { interaction, outcome, answer, by } = input;
    const now = this.ctx.clock.now();
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
  async claim(interaction: Interaction, by: Actor & { subject: string }, untilMs: number | null, now = this.ctx.clock.now()): Promise<ClaimResult> {
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

  /** Open approvals of a tenant, oldest deadline first (none last, oldest first). */
  listOpenApprovals(tenant: string, listing: InteractionListing): Promise<InteractionPage> {
    const key = (id: string) => this.ctx.keys.interaction(tenant, id);
    return listIndexed(this.ctx, tenant, { key: this.ctx.keys.openApprovals(tenant), order: 'ascending', idOf: (member) => member.slice(member.lastIndexOf(':') + 1), memberOf: key }, listing);
  }

  /** Open interactions of a tenant, soonest deadline first (none last, oldest first). */
  listOpen(tenant: string, listing: InteractionListing): Promise<InteractionPage> {
    return listIndexed(this.ctx, tenant, { key: this.ctx.keys.openInteractions(tenant), order: 'ascending', idOf: (id) => id, memberOf: (id) => id }, listing);
  }

  listForRun(tenant: string, runId: string, listing: InteractionListing): Promise<InteractionPage> {
    return listForRun(this.ctx, tenant, runId, listing);
  }
}
