import type { Actor, Answer, Interaction } from '@parley/contracts';
import { isoOf } from './stored-time';

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

/** `nowMs`: Redis's clock as the caller reads it, which claims are judged on (a claim past its end is not shown). */
export function toInteraction(tenant: string, id: string, h: Record<string, string>, nowMs: number): Interaction {
  const claimUntil = Number(h.claimUntil ?? 0);
  return {
    ...(h.claimSubject && claimUntil > nowMs ? { claim: { subject: h.claimSubject, until: new Date(claimUntil).toISOString() } } : {}),
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
