import { z } from 'zod';
import { AGENT_NAME_PATTERN } from './agent.schema';
import { EVENT_TYPES, EventTypeSchema } from './event.schema';
import { EntityIdSchema, SubjectSchema } from './ids.schema';
import { ApprovalDecisionSchema } from './interaction.schema';
import { RunStatusSchema } from './run.schema';

export const LIMITS = {
  taskChars: 20_000,
  answerTextChars: 100_000,
  feedbackChars: 20_000,
  reasonChars: 2_000,
  messageChars: 20_000,
  bodyBytes: 512 * 1024,
  /** Levels of objects and arrays a JSON body, a socket.io message or an agent's YAML may nest. */
  nestingDepth: 32,
} as const;

/**
 * A whole number in a query string: decimal digits only (`z.coerce` alone would take `""` as 0 and
 * `0x10` as 16); `min` and `max` bound it.
 */
export function queryInt(min: number, max = Number.MAX_SAFE_INTEGER) {
  // The message for a value that is not a number only: a range error keeps its own (">= 1").
  const whole = z
    .number({ error: (issue) => (issue.code === 'invalid_type' ? `must be a whole number (decimal digits, at most ${Number.MAX_SAFE_INTEGER})` : undefined) })
    .int()
    .min(min)
    .max(max);
  return z.preprocess((value) => (typeof value === 'string' && /^\d{1,16}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value), whole);
}

export const StartRunBodySchema = z
  .strictObject({
    agent: z.string().regex(AGENT_NAME_PATTERN, 'must be an agent name'),
    task: z.string().trim().min(1, 'must not be empty').max(LIMITS.taskChars),
    /** Nobody watches this run: no human tools, approvals by policy. Webhook-triggered runs always are. */
    unattended: z.boolean().optional(),
    trigger: z.enum(['api', 'chat', 'webhook']).default('api'),
    /** Service tokens only, and required for them: the end user (a `sub`) who owns the run. */
    onBehalfOf: SubjectSchema.optional(),
  })
  .refine((body) => !(body.trigger === 'webhook' && body.unattended === false), {
    path: ['unattended'],
    message: 'cannot be false with trigger webhook: a run a webhook starts is always unattended',
  });

/**
 * The `Idempotency-Key` header of a run start or a message (the `idempotencyKey` of a socket.io
 * message): the same request sent again with the same key by the same caller makes one run, or keeps
 * one message (a retry after a lost response). Printable ASCII, no spaces.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

export const MessageBodySchema = z.strictObject({
  text: z.string().trim().min(1, 'must not be empty').max(LIMITS.messageChars),
});
export type MessageBody = z.infer<typeof MessageBodySchema>;
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

/** An answer as a client sends it; which field is required depends on the interaction's kind. */
export const AnswerBodySchema = z.strictObject({
  text: z.string().max(LIMITS.answerTextChars).optional(),
  choice: z.int().min(0).optional(),
  choices: z.array(z.int().min(0)).max(100).optional(),
  confirmed: z.boolean().optional(),
  approved: z.boolean().optional(),
  feedback: z.string().max(LIMITS.feedbackChars).optional(),
  /** tool_approval: allow_once | allow_stage | allow_run | deny. */
  decision: ApprovalDecisionSchema.optional(),
  /** tool_approval deny: why, shown to the model. */
  reason: z.string().max(LIMITS.reasonChars).optional(),
  /** tool_approval allow: the arguments to run instead of the model's (checked against the tool's schema). */
  input: z.record(z.string(), z.unknown()).optional(),
  /** tool_approval of a file tool, scoped allow: grant this folder instead of the single path ("" = whole workspace). */
  directory: z.string().max(1024).optional(),
});
export type AnswerBody = z.infer<typeof AnswerBodySchema>;

/**
 * Where a listing of runs goes on from: the `next` of the page before (`<created ms>[.<run id>]`, a
 * place in the run index). A run id has 8 characters or more, so a cursor of the releases that
 * counted runs (`<ms>.<count>`) is refused, not misread.
 */
export const RunsCursorSchema = z.string().regex(/^\d{1,16}(\.[A-Za-z0-9_-]{8,64})?$/, 'must be the "next" of a previous page');

export const ListRunsQuerySchema = z.strictObject({
  status: RunStatusSchema.optional(),
  limit: queryInt(1, 500).default(50),
  after: RunsCursorSchema.optional(),
});

/** Where a listing of open interactions or approvals goes on from: the `next` of the page before (`<index score>[.<interaction id>]`). */
const OPEN_CURSOR = /^\d{1,17}(\.[A-Za-z0-9_-]{1,64})?$/;
/** Where a listing of a run's interactions goes on from: the `next` of the page before (a position in the run's log, going back). */
const RUN_CURSOR = /^\d{1,9}$/;
const PREVIOUS_PAGE = 'must be the "next" of a previous page of this listing';

export const ListInteractionsQuerySchema = z
  .strictObject({
    status: z.enum(['open', 'all']).default('open'),
    runId: EntityIdSchema.optional(),
    limit: queryInt(1, 500).default(100),
    after: z.string().optional(),
  })
  .refine((query) => query.after === undefined || (query.runId === undefined ? OPEN_CURSOR : RUN_CURSOR).test(query.after), { path: ['after'], message: PREVIOUS_PAGE });
export type ListInteractionsQuery = z.infer<typeof ListInteractionsQuerySchema>;

export const EventsQuerySchema = z.strictObject({
  since: queryInt(0).default(0),
  limit: queryInt(1, 5000).default(1000),
});

export const ListApprovalsQuerySchema = z.strictObject({
  agent: z.string().regex(AGENT_NAME_PATTERN, 'must be an agent name').optional(),
  tool: z.string().min(1).max(64).optional(),
  runId: EntityIdSchema.optional(),
  limit: queryInt(1, 500).default(100),
  after: z.string().regex(OPEN_CURSOR, PREVIOUS_PAGE).optional(),
});
export type ListApprovalsQuery = z.infer<typeof ListApprovalsQuerySchema>;

export const SafeCommandsQuerySchema = z.strictObject({
  agent: z.string().regex(AGENT_NAME_PATTERN, 'must be an agent name').optional(),
});

/** A safe command in effect and where it came from (`GET /v1/approvals/safe-commands`). */
export const SafeCommandInEffectSchema = z.object({
  /** "cat" or "git status". */
  entry: z.string(),
  source: z.union([z.literal('default'), z.literal('global'), z.templateLiteral(['agent:', z.string()])]),
  /** Why it is safe, for the shipped defaults. */
  note: z.string().optional(),
});
export type SafeCommandInEffect = z.infer<typeof SafeCommandInEffectSchema>;
export type SafeCommandSource = SafeCommandInEffect['source'];

export const SafeCommandsReplySchema = z.object({ agent: z.string().nullable(), safeCommands: z.array(SafeCommandInEffectSchema) });
export type SafeCommandsReply = z.infer<typeof SafeCommandsReplySchema>;

/** "notes", "notes/", "./notes/" → "notes/"; "", ".", "/" → "" (the whole workspace): a folder an approver grants. */
export function grantFolder(raw: string): string {
  const trimmed = raw.trim().replace(/^\.\//, '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' || trimmed === '.' ? '' : `${trimmed}/`;
}

/** One decision on a call that needed approval, as `GET /v1/runs/:id/audit` shows it. */
export const AuditEntrySchema = z.object({
  at: z.string(),
  tool: z.string(),
  effectId: z.string(),
  interactionId: z.string().optional(),
  /** person: an approver chose; deadline / cancelled: denied because nobody answered or the run stopped; safe_command / grant: let through without asking. */
  basis: z.enum(['person', 'deadline', 'cancelled', 'safe_command', 'grant', 'policy']),
  decision: ApprovalDecisionSchema.or(z.literal('allow')),
  scope: z.enum(['once', 'stage', 'run']).nullable(),
  approver: z.object({ tenant: z.string(), kind: z.enum(['user', 'deadline', 'system']), subject: z.string().optional(), role: z.string().optional() }).nullable(),
  grants: z.array(z.string()),
  edited: z.boolean(),
  reason: z.string().optional(),
  argsDigest: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** An agent's cron schedule as `GET /v1/schedules` shows it. */
export const ScheduleInfoSchema = z.object({
  agent: z.string(),
  name: z.string(),
  cron: z.string(),
  timezone: z.string().optional(),
  owner: z.string(),
  task: z.string(),
  /** When it fires next (ISO), or null when the scheduler is not registered (yet). */
  next: z.string().nullable(),
});
export type ScheduleInfo = z.infer<typeof ScheduleInfoSchema>;

/** socket.io (namespace /v1): client → server messages. */
export const SubscribeMessageSchema = z.strictObject({
  since: z.int().min(0).optional(),
  runId: EntityIdSchema.optional(),
  /** Only these event types reach the socket; the subscription's `lastSeq` still covers every event. */
  types: z
    .array(EventTypeSchema)
    .min(1, 'must name at least one event type (leave types out for all)')
    .max(EVENT_TYPES.length * 2)
    .transform((types) => [...new Set(types)])
    .optional(),
});
export type SubscribeMessage = z.infer<typeof SubscribeMessageSchema>;

/** The answer itself is checked against AnswerBodySchema and the interaction, like over HTTP (422). */
export const AnswerMessageSchema = z.strictObject({
  interactionId: EntityIdSchema,
  answer: z.record(z.string(), z.unknown()),
});
export type AnswerMessage = z.infer<typeof AnswerMessageSchema>;

export const ClaimMessageSchema = z.strictObject({
  interactionId: EntityIdSchema,
  /** true to give the claim up. */
  release: z.boolean().default(false),
});
export type ClaimMessage = z.infer<typeof ClaimMessageSchema>;

export const ApprovalsMessageSchema = ListApprovalsQuerySchema.extend({ limit: z.int().min(1).max(500).default(100) });

export const RunMessageSchema = z.strictObject({
  runId: EntityIdSchema,
  text: z.string().trim().min(1, 'must not be empty').max(LIMITS.messageChars),
  idempotencyKey: IdempotencyKeySchema.optional(),
});

export const StopMessageSchema = z.strictObject({ runId: EntityIdSchema });

export const SOCKET = {
  namespace: '/v1',
  message: 'message',
  stop: 'stop',
  subscribe: 'subscribe',
  answer: 'answer',
  claim: 'claim',
  approvals: 'approvals',
  event: 'event',
} as const;
