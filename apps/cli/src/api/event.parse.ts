import { z } from 'zod';
import { ParleyEventSchema, TERMINAL_STATUSES, type ParleyEvent, type RunStatus } from '@parley/contracts';

/**
 * Only the envelope is checked on the wire: sequence tracking must keep working even for an event
 * type this CLI does not know yet (a newer gateway); consumers parse the payload with parseEvent.
 */
export const RawEventSchema = z.looseObject({
  seq: z.int().min(1),
  type: z.string(),
  runId: z.string(),
});
export type RawEvent = z.infer<typeof RawEventSchema>;

export function parseEvent(raw: RawEvent): ParleyEvent | undefined {
  const result = ParleyEventSchema.safeParse(raw);
  return result.success ? (result.data as unknown as ParleyEvent) : undefined;
}

const TERMINAL_EVENT_TYPES = new Set<string>(['run.finished', 'run.failed', 'run.cancelled']);

export function isTerminalEvent(event: RawEvent): boolean {
  return TERMINAL_EVENT_TYPES.has(event.type);
}

export function isTerminalStatus(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
