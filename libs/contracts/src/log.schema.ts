import { z } from 'zod';
import { ActorSchema } from './auth.schema';
import { AnswerSchema, OutcomeSchema, PromptSchema } from './interaction.schema';

/** A model tool call as recorded: the provider's id plus Parley's own physical effect id. */
export const ToolCallSchema = z.object({
  toolUseId: z.string(),
  effectId: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const AutoApprovalSchema = z.object({
  basis: z.enum(['safe_command', 'grant']),
  /** The safe-command entries or grant keys that covered the call. */
  covered: z.array(z.string()),
  argsDigest: z.string(),
});
export type AutoApproval = z.infer<typeof AutoApprovalSchema>;

/** One entry of a run's append-only durable log. The model's context is rebuilt from these. */
export const LogEntrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task'), text: z.string(), at: z.string() }),
  z.object({ type: z.literal('assistant'), text: z.string(), toolCalls: z.array(ToolCallSchema), at: z.string() }),
  z.object({
    type: z.literal('tool_result'),
    toolUseId: z.string(),
    effectId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean(),
    /** Set when a tool needing approval ran without asking: what let it through. */
    approval: AutoApprovalSchema.optional(),
    at: z.string(),
  }),
  z.object({
    type: z.literal('question'),
    toolUseId: z.string(),
    effectId: z.string(),
    interactionId: z.string(),
    prompt: PromptSchema,
    at: z.string(),
  }),
  z.object({
    type: z.literal('answer'),
    interactionId: z.string(),
    outcome: OutcomeSchema,
    answer: AnswerSchema.optional(),
    by: ActorSchema,
    at: z.string(),
  }),
]);
export type LogEntry = z.infer<typeof LogEntrySchema>;
export type LogEntryOf<T extends LogEntry['type']> = Extract<LogEntry, { type: T }>;
