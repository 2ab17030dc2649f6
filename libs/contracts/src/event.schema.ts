import { z } from 'zod';
import { ActorSchema } from './auth.schema';
import { ApprovalDecisionSchema, InteractionSchema, OutcomeSchema, WaitReasonSchema } from './interaction.schema';
import { EndReasonSchema, RunStatusSchema, TriggerSchema } from './run.schema';

/** Event payloads by type. Every state change emits one, in the same atomic step. */
export const EventDataSchemas = {
  'run.created': z.object({ agent: z.string(), task: z.string(), trigger: TriggerSchema }),
  'run.status': z.object({ status: RunStatusSchema, waitReason: WaitReasonSchema.optional(), stage: z.string().optional() }),
  'stage.entered': z.object({ stage: z.string(), from: z.string().nullable() }),
  /** A checkpoint let the stage move on without a person's approval, and why. */
  'checkpoint.proceeded': z.object({ stage: z.string(), point: z.string(), why: z.enum(['round_limit', 'deadline', 'unattended', 'not_required']) }),
  /** A stage's output was recorded: the model's at a stage exit, or a person's edit at a checkpoint. */
  'document.updated': z.object({ region: z.string(), source: z.enum(['model', 'person']) }),
  'message.received': z.object({ messageId: z.string(), text: z.string(), by: ActorSchema }),
  'message.injected': z.object({ messageIds: z.array(z.string()) }),
  /** The run ended before it read these messages: they were dropped (emitted before the run's terminal events). */
  'message.discarded': z.object({ messageIds: z.array(z.string()) }),
  'child.started': z.object({ childRunId: z.string(), agent: z.string() }),
  /** A sub-agent ended; its result is in the parent's log (emitted on the parent's run). */
  'child.ended': z.object({ childRunId: z.string(), status: RunStatusSchema, reason: EndReasonSchema }),
  'message.delta': z.object({ text: z.string() }),
  message: z.object({ text: z.string() }),
  'tool.call': z.object({ toolUseId: z.string(), effectId: z.string(), name: z.string(), input: z.unknown() }),
  'tool.result': z.object({
    toolUseId: z.string(),
    effectId: z.string(),
    name: z.string(),
    isError: z.boolean(),
    content: z.string(),
  }),
  'interaction.opened': z.object({ interaction: InteractionSchema }),
  'interaction.resolved': z.object({
    interactionId: z.string(),
    outcome: OutcomeSchema,
    by: ActorSchema,
    at: z.string(),
    /** Approvals: what the approver chose, so every open card can say who resolved it and how. */
    decision: ApprovalDecisionSchema.optional(),
  }),
  'interaction.claimed': z.object({
    interactionId: z.string(),
    /** null when the claim was released. */
    claim: z.object({ subject: z.string(), until: z.string() }).nullable(),
    by: ActorSchema,
  }),
  'run.finished': z.object({ reason: EndReasonSchema, summary: z.string().optional() }),
  'run.failed': z.object({ reason: EndReasonSchema, error: z.string() }),
  'run.cancelled': z.object({ reason: EndReasonSchema, by: ActorSchema }),
  /** A stop was asked while a worker held the run: it ends at that worker's next step (`run.cancelled`, or `run.failed` should its job give up first). */
  'run.stop_requested': z.object({ by: ActorSchema }),
} as const;

export type EventType = keyof typeof EventDataSchemas;
export const EVENT_TYPES = Object.keys(EventDataSchemas) as EventType[];
export const EventTypeSchema = z.enum(EVENT_TYPES as [EventType, ...EventType[]]);
export type EventData<T extends EventType> = z.infer<(typeof EventDataSchemas)[T]>;

/** What the state-changing code hands to the store; the store adds the sequence number. */
export type EventDraft = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

const envelope = {
  seq: z.int().min(1),
  tenant: z.string(),
  runId: z.string(),
  owner: z.string(),
  at: z.string(),
};

export const ParleyEventSchema = z.discriminatedUnion(
  'type',
  EVENT_TYPES.map((type) => z.object({ ...envelope, type: z.literal(type), data: EventDataSchemas[type] })) as unknown as [
    z.ZodObject,
    ...z.ZodObject[],
  ],
);
export type ParleyEvent = { [T in EventType]: { seq: number; tenant: string; runId: string; owner: string; at: string; type: T; data: EventData<T> } }[EventType];

/**
 * An event as the scripts publish it on the fan-out channel (internal to Parley): the envelope plus
 * `prev`, the tenant's seq before this one (seqs are not consecutive), so a subscriber knows when it
 * missed a message. Messages of releases before it had none (their seqs were consecutive).
 * `wake`, on an `interaction.opened` that parked its run: the run's wake counter as it parked (the
 * answer's job is numbered one past it, unless another wake came first).
 */
export type PublishedEvent = ParleyEvent & { prev?: number; wake?: number };

/**
 * One message on the fan-out channel: the events one script wrote, in seq order, all of one tenant
 * (a single event object from releases before batching).
 */
export type PublishedMessage = PublishedEvent[] | PublishedEvent;
