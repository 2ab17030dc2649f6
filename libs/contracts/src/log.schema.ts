import { z } from 'zod';
import { ActorSchema } from './auth.schema';
import { AnswerSchema, CheckpointRefSchema, OutcomeSchema, PromptSchema } from './interaction.schema';
import { EndReasonSchema } from './run.schema';

/** A model tool call as recorded: the provider's id plus Parley's own physical effect id. */
export const ToolCallSchema = z.object({
  toolUseId: z.string(),
  effectId: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const AutoApprovalSchema = z.object({
  /** policy: an unattended run, where the agent's unattended_approval decided (`denied` when it refused). */
  basis: z.enum(['safe_command', 'grant', 'policy']),
  denied: z.boolean().optional(),
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
  /** A message the person sent mid-run, injected between inference calls. */
  z.object({ type: z.literal('user_message'), messageId: z.string(), text: z.string(), by: ActorSchema, at: z.string() }),
  /** The run moved to another stage (from null: the first stage). */
  z.object({ type: z.literal('stage'), from: z.string().nullable(), to: z.string(), at: z.string() }),
  /** The current text of a pinned document region: the model's output at a stage exit, or a person's edit. */
  z.object({
    type: z.literal('document'),
    region: z.string(),
    text: z.string(),
    source: z.enum(['model', 'person']),
    /** Where the text came from: the exit call's effect id (the model), or the edit checkpoint's interaction id (a person). */
    origin: z.string(),
    at: z.string(),
  }),
  /**
   * A checkpoint presented at a stage exit (the call that tried to move on: effectId). Resolved by an
   * `answer` entry with the same interaction id, or settled on the spot (`auto`) in an unattended run.
   */
  z.object({
    type: z.literal('checkpoint'),
    effectId: z.string(),
    interactionId: z.string(),
    ref: CheckpointRefSchema,
    prompt: PromptSchema,
    auto: z.boolean().optional(),
    at: z.string(),
  }),
  /** A sub-agent started by a delegate call. */
  z.object({ type: z.literal('child'), effectId: z.string(), childRunId: z.string(), agent: z.string(), at: z.string() }),
  /** How a sub-agent ended, written into the parent's log by the step that ended the child. */
  z.object({
    type: z.literal('child_result'),
    childRunId: z.string(),
    status: z.enum(['finished', 'failed', 'cancelled']),
    reason: EndReasonSchema,
    text: z.string(),
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
