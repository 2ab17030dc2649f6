import { Inject, Injectable, Logger } from '@nestjs/common';
import { TenantAgents } from '@parley/agents';
import {
  ConflictError,
  InvalidAnswerError,
  NotFoundError,
  validateAnswer,
  type Actor,
  type Answer,
  type AnswerBody,
  type Interaction,
  type ListApprovalsQuery,
  type ListInteractionsQuery,
  type TokenClaims,
} from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { InteractionResolver, PARLEY_CONFIG, ParleyQueues, ParleyStore, type InteractionPage } from '@parley/store';
import { answerApproval } from '@parley/tools';
import { AuthService } from '../auth/auth.service';
import { requireRole } from '../auth/roles';
import { OpenInteractionCache } from './open-interaction.cache';

export interface ApprovalPage {
  approvals: Interaction[];
  next: string | null;
}

@Injectable()
export class InteractionsService {
  private readonly logger = new Logger(InteractionsService.name);

  private readonly resolver: InteractionResolver;

  constructor(
    private readonly store: ParleyStore,
    queues: ParleyQueues,
    private readonly auth: AuthService,
    private readonly agents: TenantAgents,
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly openCache: OpenInteractionCache,
  ) {
    this.resolver = new InteractionResolver(store, queues);
  }

  async get(user: TokenClaims, interactionId: string): Promise<Interaction> {
    const interaction = await this.store.interactions.get(user.tenant, interactionId);
    if (!interaction || !this.auth.canSee(user, interaction)) {
      throw new NotFoundError('interaction', interactionId);
    }
    return interaction;
  }

  async list(user: TokenClaims, filter: ListInteractionsQuery): Promise<InteractionPage> {
    const { limit, after } = filter;
    if (!filter.runId) {
      return this.store.interactions.listOpen(user.tenant, { keep: (i) => this.auth.canSee(user, i), limit, after });
    }
    // A run the caller cannot see is not read at all (its log can be long), and lists nothing, like a missing one.
    const run = await this.store.runs.get(user.tenant, filter.runId);
    if (!run || !this.auth.canSee(user, run)) {
      return { interactions: [], next: null };
    }
    const keep = (i: Interaction): boolean => this.auth.canSee(user, i) && (filter.status === 'all' || i.status === 'open');
    return this.store.interactions.listForRun(user.tenant, filter.runId, { keep, limit, after });
  }

  /** The approval queue: open approvals the caller may see (admins: the whole tenant), oldest deadline first. */
  async listApprovals(user: TokenClaims, filter: ListApprovalsQuery): Promise<ApprovalPage> {
    const { interactions, next } = await this.store.interactions.listOpenApprovals(user.tenant, {
      keep: (i) =>
        this.auth.canSee(user, i) &&
        (filter.agent === undefined || i.agent === filter.agent) &&
        (filter.runId === undefined || i.runId === filter.runId) &&
        (filter.tool === undefined || (i.prompt.kind === 'tool_approval' && i.prompt.tool === filter.tool)),
      limit: filter.limit,
      after: filter.after,
    });
    return { approvals: interactions, next };
  }

  /**
   * Validates the answer against the interaction, then lets the one atomic step decide. An
   * interaction this gateway saw open is not read back: the step itself refuses a closed or claimed one.
   * Only an answer that does not fit a cached copy reads it back, so that a closed one still gets its 409.
   */
  async answer(user: TokenClaims, interactionId: string, body: AnswerBody): Promise<Interaction> {
    const seen = this.openCache.get(user.tenant, interactionId);
    const cached = seen && this.auth.canSee(user, seen.interaction) ? seen.interaction : undefined;
    const interaction = cached ?? (await this.get(user, interactionId));
    refuseUnlessAnswerable(user, interaction);
    let answer: Answer;
    try {
      answer = await this.validated(interaction, body);
    } catch (error) {
      // The resolve step never runs for an answer that does not fit, so it cannot tell a stale
      // cached copy from the truth: Redis does, and a closed or claimed interaction is a 409 first.
      if (cached && error instanceof InvalidAnswerError) {
        refuseUnlessAnswerable(user, await this.get(user, interactionId));
      }
      throw error;
    }
    const by: Actor = { kind: 'user', subject: user.sub, role: user.role };
    // The run's job goes out right behind the resolve when the gateway knows its number (see InteractionResolver).
    const result = await this.resolver.resolve({ interaction, outcome: 'answered', answer, by }, cached ? seen?.parkedWake : undefined);
    switch (result.status) {
      case 'resolved':
        this.logger.log({ msg: 'interaction answered', tenant: user.tenant, runId: interaction.runId, interactionId, by: user.sub });
        return result.interaction;
      case 'conflict':
        throw alreadyResolved(result.interaction);
      case 'claimed':
        throw claimedBy(result.claim);
      case 'missing':
        throw new NotFoundError('interaction', interactionId);
    }
  }

  /** The answer as recorded, or an InvalidAnswerError (422) naming what does not fit the prompt. */
  private async validated(interaction: Interaction, body: AnswerBody): Promise<Answer> {
    const allowedHosts = interaction.prompt.kind === 'tool_approval' ? await this.allowedHostsOf(interaction) : [];
    return validateAnswer(interaction.prompt, body, (prompt, b, issues) => answerApproval(prompt, b, issues, { allowedHosts }));
  }

  /** The hosts an approver may allow for the run's agent (only approvals of http_request use them). */
  private async allowedHostsOf(interaction: Interaction): Promise<string[]> {
    const run = await this.store.runs.agentOf(interaction.tenant, interaction.runId);
    return (run ? await this.agents.definitionOf(run) : undefined)?.http.allowed_hosts ?? [];
  }

  /** An admin takes an open approval for the configured time (or gives it up) so colleagues see who is on it. */
  async claim(user: TokenClaims, interactionId: string, release: boolean): Promise<Interaction> {
    requireClaimer(user);
    const interaction = await this.get(user, interactionId);
    if (interaction.waitReason !== 'approval') {
      throw new ConflictError(`interaction ${interactionId} is not an approval; only approvals are claimed`, { waitReason: interaction.waitReason });
    }
    const by = { kind: 'user' as const, subject: user.sub, role: user.role };
    const result = await this.store.interactions.claim(interaction, by, release ? null : this.store.ctx.clock.nowMs() + this.config.approvalClaimSecs * 1000);
    switch (result.status) {
      // not_claimed: nothing to release (never claimed, released already, or the claim ended): a repeated release changes nothing.
      case 'claimed':
      case 'released':
      case 'not_claimed':
        return this.get(user, interactionId);
      case 'held':
        throw claimedBy(result.claim);
      case 'closed':
        throw alreadyResolved((await this.store.interactions.get(user.tenant, interactionId)) ?? interaction);
      case 'missing':
        throw new NotFoundError('interaction', interactionId);
    }
  }
}

/** Only admins claim approvals (over a socket; the HTTP routes say so with @Roles, before they read the id). */
export function requireClaimer(user: TokenClaims): void {
  requireRole(user, ['admin'], 'claim approvals');
}

/** A closed interaction, or one someone else holds a claim on, takes no answer from `user` (409). */
function refuseUnlessAnswerable(user: TokenClaims, interaction: Interaction): void {
  if (interaction.status !== 'open') {
    throw alreadyResolved(interaction);
  }
  if (interaction.claim && interaction.claim.subject !== user.sub) {
    throw claimedBy(interaction.claim);
  }
}

function claimedBy(claim: { subject: string; until: string }): ConflictError {
  return new ConflictError(`claimed by ${claim.subject} until ${claim.until}; only they may answer until then`, { claim });
}

function alreadyResolved(interaction: Interaction): ConflictError {
  const by = interaction.resolvedBy;
  const who = !by ? 'someone' : by.kind === 'deadline' ? 'the deadline' : by.kind === 'system' ? 'the system' : `${by.subject ?? 'a user'}`;
  return new ConflictError(`interaction ${interaction.id} was already ${interaction.status} by ${who} at ${interaction.resolvedAt ?? 'an earlier time'}`, {
    status: interaction.status,
    resolvedBy: interaction.resolvedBy,
    resolvedAt: interaction.resolvedAt,
  });
}
