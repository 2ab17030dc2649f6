import { Injectable } from '@nestjs/common';
import {
  ConflictError,
  NotFoundError,
  validateAnswer,
  type Actor,
  type AnswerBody,
  type Interaction,
  type TokenClaims,
} from '@parley/contracts';
import { InteractionResolver, ParleyQueues, ParleyStore } from '@parley/store';
import { AuthService } from '../auth/auth.service';

@Injectable()
export class InteractionsService {
  private readonly resolver: InteractionResolver;

  constructor(
    private readonly store: ParleyStore,
    queues: ParleyQueues,
    private readonly auth: AuthService,
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

  async list(user: TokenClaims, filter: { status: 'open' | 'all'; runId?: string; limit: number }): Promise<Interaction[]> {
    const found = filter.runId
      ? await this.store.interactions.listForRun(user.tenant, filter.runId, filter.limit)
      : await this.store.interactions.listOpen(user.tenant, filter.limit);
    return found.filter((i) => this.auth.canSee(user, i) && (filter.status === 'all' || i.status === 'open'));
  }

  /** Validates the answer against the interaction, then lets the one atomic step decide. */
  async answer(user: TokenClaims, interactionId: string, body: AnswerBody): Promise<Interaction> {
    const interaction = await this.get(user, interactionId);
    if (interaction.status !== 'open') {
      throw alreadyResolved(interaction);
    }
    const answer = validateAnswer(interaction.prompt, body);
    const by: Actor = { kind: 'user', subject: user.sub, role: user.role };
    const result = await this.resolver.resolve({ interaction, outcome: 'answered', answer, by });
    switch (result.status) {
      case 'resolved':
        return result.interaction;
      case 'conflict':
        throw alreadyResolved(result.interaction);
      case 'missing':
        throw new NotFoundError('interaction', interactionId);
    }
  }
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
