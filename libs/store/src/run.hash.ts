import type { Actor, EndReason, Run, RunStatus, WaitReason } from '@parley/contracts';
import { isoOf } from './stored-time';

/**
 * A run as its Redis hash holds it (every field a string; absent fields are left out). The id and
 * tenant are in the key, not in the hash: every byte of a parked run's hash counts.
 */
export function toRun(tenant: string, id: string, h: Record<string, string>): Run {
  return {
    id,
    tenant,
    owner: h.owner,
    agent: h.agent,
    task: h.task,
    trigger: h.trigger as Run['trigger'],
    unattended: h.unattended === '1',
    ...(h.stage ? { stage: h.stage } : {}),
    ...(h.parentRunId ? { parentRunId: h.parentRunId } : {}),
    ...(h.agentDigest ? { agentSource: 'tenant' as const, agentDigest: h.agentDigest } : {}),
    status: h.status as RunStatus,
    ...(h.waitReason ? { waitReason: h.waitReason as WaitReason } : {}),
    ...(h.pendingInteractionId ? { pendingInteractionId: h.pendingInteractionId } : {}),
    ...(h.endReason ? { endReason: h.endReason as EndReason } : {}),
    ...(h.summary ? { summary: h.summary } : {}),
    ...(h.error ? { error: h.error } : {}),
    ...(h.stoppedBy ? { stoppedBy: JSON.parse(h.stoppedBy) as Actor } : {}),
    createdAt: isoOf(h.createdAt),
    updatedAt: isoOf(h.updatedAt),
  };
}
