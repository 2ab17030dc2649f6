import { z } from 'zod';
import { AGENT_NAME_PATTERN } from './agent.schema';
import { EntityIdSchema } from './ids.schema';
import { RunStatusSchema } from './run.schema';

export const LIMITS = {
  taskChars: 20_000,
  answerTextChars: 100_000,
  feedbackChars: 20_000,
  bodyBytes: 512 * 1024,
} as const;

export const StartRunBodySchema = z.strictObject({
  agent: z.string().regex(AGENT_NAME_PATTERN, 'must be an agent name'),
  task: z.string().trim().min(1, 'must not be empty').max(LIMITS.taskChars),
});
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

/** An answer as a client sends it; which field is required depends on the interaction's kind. */
export const AnswerBodySchema = z.strictObject({
  text: z.string().max(LIMITS.answerTextChars).optional(),
  choice: z.int().min(0).optional(),
  choices: z.array(z.int().min(0)).max(100).optional(),
  confirmed: z.boolean().optional(),
  approved: z.boolean().optional(),
  feedback: z.string().max(LIMITS.feedbackChars).optional(),
});
export type AnswerBody = z.infer<typeof AnswerBodySchema>;

export const ListRunsQuerySchema = z.strictObject({
  status: RunStatusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const ListInteractionsQuerySchema = z.strictObject({
  status: z.enum(['open', 'all']).default('open'),
  runId: EntityIdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const EventsQuerySchema = z.strictObject({
  since: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(5000).default(1000),
});

/** socket.io (namespace /v1): client → server messages. */
export const SubscribeMessageSchema = z.strictObject({
  since: z.int().min(0).optional(),
  runId: EntityIdSchema.optional(),
});
export type SubscribeMessage = z.infer<typeof SubscribeMessageSchema>;

/** The answer itself is checked against AnswerBodySchema and the interaction, like over HTTP (422). */
export const AnswerMessageSchema = z.strictObject({
  interactionId: EntityIdSchema,
  answer: z.record(z.string(), z.unknown()),
});
export type AnswerMessage = z.infer<typeof AnswerMessageSchema>;

export const SOCKET = {
  namespace: '/v1',
  subscribe: 'subscribe',
  answer: 'answer',
  event: 'event',
} as const;
