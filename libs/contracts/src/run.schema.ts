import { z } from 'zod';
import { EntityIdSchema, TenantIdSchema } from './ids.schema';
import { ActorSchema } from './auth.schema';
import { WaitReasonSchema } from './interaction.schema';

export const RunStatusSchema = z.enum(['queued', 'running', 'waiting', 'finished', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** The stage of a run whose agent declares none: "allow for this stage" grants are kept under it. */
export const DEFAULT_STAGE = 'main';

export const TERMINAL_STATUSES: readonly RunStatus[] = ['finished', 'failed', 'cancelled'];

/** Why a run ended; each loop ending is distinct and visible. */
export const EndReasonSchema = z.enum([
  'finish',
  'no_tool_calls',
  'max_iterations',
  'cancelled',
  'model_error',
  'internal_error',
  /** A sub-agent lacked information only a person can give; its parent decides whether to ask. */
  'needs_input',
  /** A checkpoint that demanded a person expired in an unattended run. */
  'checkpoint_expired',
]);
export type EndReason = z.infer<typeof EndReasonSchema>;

export const TriggerSchema = z.enum(['chat', 'api', 'schedule', 'webhook', 'delegate']);
export type Trigger = z.infer<typeof TriggerSchema>;

/** Runs nobody is watching: the human tools are not offered and approvals resolve by policy. */
export function isUnattendedTrigger(trigger: Trigger): boolean {
  return trigger === 'schedule' || trigger === 'webhook' || trigger === 'delegate';
}

export const RunSchema = z.object({
  id: EntityIdSchema,
  tenant: TenantIdSchema,
  owner: z.string(),
  agent: z.string(),
  task: z.string(),
  trigger: TriggerSchema,
  status: RunStatusSchema,
  unattended: z.boolean(),
  /** The stage the run is in (agents with stages). */
  stage: z.string().optional(),
  /** The run that started this one with the delegate tool. */
  parentRunId: z.string().optional(),
  /** A run of a tenant agent: `tenant`, and the version (digest) it keeps whatever happens to the agent. */
  agentSource: z.literal('tenant').optional(),
  agentDigest: z.string().optional(),
  waitReason: WaitReasonSchema.optional(),
  pendingInteractionId: z.string().optional(),
  endReason: EndReasonSchema.optional(),
  summary: z.string().optional(),
  error: z.string().optional(),
  /** Who stopped a cancelled run. */
  stoppedBy: ActorSchema.optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Run = z.infer<typeof RunSchema>;
