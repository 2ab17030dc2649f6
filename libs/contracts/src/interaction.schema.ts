import { z } from 'zod';
import { ActorSchema } from './auth.schema';
import { EntityIdSchema, TenantIdSchema } from './ids.schema';

export const InteractionKindSchema = z.enum(['free_text', 'multiple_choice', 'confirm', 'tool_approval', 'edit_text', 'review']);
export type InteractionKind = z.infer<typeof InteractionKindSchema>;

export const WaitReasonSchema = z.enum(['question', 'approval', 'checkpoint', 'child']);
export type WaitReason = z.infer<typeof WaitReasonSchema>;

export const ChoiceOptionSchema = z.object({ label: z.string(), description: z.string().optional() });
export type ChoiceOption = z.infer<typeof ChoiceOptionSchema>;

export const ApprovalDecisionSchema = z.enum(['allow_once', 'allow_stage', 'allow_run', 'deny']);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
export type GrantScope = 'once' | 'stage' | 'run';

/** What a scoped approval of this call would grant, or why it cannot grant anything reusable. */
export const GrantOfferSchema = z.discriminatedUnion('reusable', [
  z.object({
    reusable: z.literal(true),
    /** Grant keys, e.g. "shell:cmd:git status", "write_file:path:notes/a.md". */
    keys: z.array(z.string()),
    /** "`ls` and `git status` (any arguments)". */
    description: z.string(),
    /** File tools: the folders the approver may grant instead of the single path ("" = the whole workspace). */
    directories: z.array(z.string()).optional(),
  }),
  z.object({ reusable: z.literal(false), reason: z.string() }),
]);
export type GrantOffer = z.infer<typeof GrantOfferSchema>;

/** The argument that says what a call does: the command, the path, the host. */
export const TellingArgumentSchema = z.object({ label: z.enum(['command', 'path', 'host']), value: z.string() });
export type TellingArgument = z.infer<typeof TellingArgumentSchema>;

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
  z.object({
    kind: z.literal('tool_approval'),
    prompt: z.string(),
    tool: z.string(),
    input: z.record(z.string(), z.unknown()),
    telling: TellingArgumentSchema,
    /** The stage the run is in: an "allow for this stage" grant lasts while the run is in it. */
    stage: z.string(),
    grant: GrantOfferSchema,
  }),
]);
export type Prompt = z.infer<typeof PromptSchema>;

/** The answer as recorded, after validation against the interaction. */
export const AnswerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('free_text'), text: z.string() }),
  z.object({ kind: z.literal('multiple_choice'), choices: z.array(z.int()), labels: z.array(z.string()) }),
  z.object({ kind: z.literal('confirm'), confirmed: z.boolean() }),
  z.object({ kind: z.literal('edit_text'), text: z.string() }),
  z.object({ kind: z.literal('review'), approved: z.boolean(), feedback: z.string().optional() }),
  z.object({
    kind: z.literal('tool_approval'),
    decision: ApprovalDecisionSchema,
    /** Shown to the model with a deny. */
    reason: z.string().optional(),
    /** The arguments that run (the approver's edit, or the model's own); absent on deny. */
    input: z.record(z.string(), z.unknown()).optional(),
    edited: z.boolean(),
    /** Grant keys written with this decision (empty for allow_once and deny). */
    grants: z.array(z.string()),
    /** SHA-256 (hex) of the canonical JSON of the arguments approved and run (or denied). */
    argsDigest: z.string(),
  }),
]);
export type Answer = z.infer<typeof AnswerSchema>;

export const OutcomeSchema = z.enum(['answered', 'expired', 'cancelled']);
export type Outcome = z.infer<typeof OutcomeSchema>;

export const InteractionStatusSchema = z.enum(['open', 'answered', 'expired', 'cancelled']);

/** Where a checkpoint interaction sits: which stage and point, which round, and what it asks for. */
export const CheckpointRefSchema = z.object({
  stage: z.string(),
  point: z.string(),
  /** 0 for the first time the point is presented at this stage exit; +1 per revise or edit round. */
  round: z.int().min(0),
  /** decide: pick what happens; edit: the person edits the stage's latest output. */
  purpose: z.enum(['decide', 'edit']),
});
export type CheckpointRef = z.infer<typeof CheckpointRefSchema>;

export const InteractionSchema = z.object({
  id: EntityIdSchema,
  tenant: TenantIdSchema,
  runId: EntityIdSchema,
  owner: z.string(),
  agent: z.string(),
  waitReason: WaitReasonSchema,
  prompt: PromptSchema,
  checkpoint: CheckpointRefSchema.optional(),
  status: InteractionStatusSchema,
  createdAt: z.string(),
  /** ISO time, or null when the interaction waits forever. */
  deadline: z.string().nullable(),
  resolvedAt: z.string().optional(),
  resolvedBy: ActorSchema.optional(),
  answer: AnswerSchema.optional(),
  /** Admin claim on an open approval: only the claimant may answer until `until`. */
  claim: z.object({ subject: z.string(), until: z.string() }).optional(),
});
export type Interaction = z.infer<typeof InteractionSchema>;
