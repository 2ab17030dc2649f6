import { z } from 'zod';
import { ActorSchema } from './auth.schema';
import { EntityIdSchema, TenantIdSchema } from './ids.schema';

export const InteractionKindSchema = z.enum(['free_text', 'multiple_choice', 'confirm', 'tool_approval', 'edit_text', 'review']);
export type InteractionKind = z.infer<typeof InteractionKindSchema>;

export const WaitReasonSchema = z.enum(['question', 'approval', 'checkpoint']);
export type WaitReason = z.infer<typeof WaitReasonSchema>;

export const ChoiceOptionSchema = z.object({ label: z.string(), description: z.string().optional() });
export type ChoiceOption = z.infer<typeof ChoiceOptionSchema>;

/** What the person is shown; already normalised (trimmed and bounded) by the tool that asked. */
export const PromptSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('free_text'), prompt: z.string() }),
  z.object({
    kind: z.literal('multiple_choice'),
    prompt: z.string(),
    options: z.array(ChoiceOptionSchema).min(2),
    multi: z.boolean(),
  }),
  z.object({ kind: z.literal('confirm'), prompt: z.string() }),
  z.object({ kind: z.literal('edit_text'), prompt: z.string(), document: z.string() }),
  z.object({ kind: z.literal('review'), prompt: z.string(), markdown: z.string() }),
]);
export type Prompt = z.infer<typeof PromptSchema>;

/** The answer as recorded, after validation against the interaction. */
export const AnswerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('free_text'), text: z.string() }),
  z.object({ kind: z.literal('multiple_choice'), choices: z.array(z.int()), labels: z.array(z.string()) }),
  z.object({ kind: z.literal('confirm'), confirmed: z.boolean() }),
  z.object({ kind: z.literal('edit_text'), text: z.string() }),
  z.object({ kind: z.literal('review'), approved: z.boolean(), feedback: z.string().optional() }),
]);
export type Answer = z.infer<typeof AnswerSchema>;

export const OutcomeSchema = z.enum(['answered', 'expired', 'cancelled']);
export type Outcome = z.infer<typeof OutcomeSchema>;

export const InteractionStatusSchema = z.enum(['open', 'answered', 'expired', 'cancelled']);

export const InteractionSchema = z.object({
  id: EntityIdSchema,
  tenant: TenantIdSchema,
  runId: EntityIdSchema,
  owner: z.string(),
  waitReason: WaitReasonSchema,
  prompt: PromptSchema,
  status: InteractionStatusSchema,
  createdAt: z.string(),
  /** ISO time, or null when the interaction waits forever. */
  deadline: z.string().nullable(),
  resolvedAt: z.string().optional(),
  resolvedBy: ActorSchema.optional(),
  answer: AnswerSchema.optional(),
});
export type Interaction = z.infer<typeof InteractionSchema>;
