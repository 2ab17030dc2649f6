import { z } from 'zod';

/** Tenant ids appear inside Redis keys and BullMQ job ids, so they are kept to a safe alphabet. */
export const TenantIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be lowercase letters, digits, "_" or "-"');

/** Run and interaction ids are minted by Parley (UUIDs); clients only ever echo them back. */
export const EntityIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, "_" or "-"');

/** Owners of runs that no user starts (scheduled runs) begin with this, so that no token speaks for them. */
export const RESERVED_SUBJECT_PREFIX = 'parley:';

export const SubjectSchema = z
  .string()
  .min(1)
  .max(200)
  .refine((sub) => !sub.startsWith(RESERVED_SUBJECT_PREFIX), `must not begin with "${RESERVED_SUBJECT_PREFIX}" (reserved for owners no user is, such as that of scheduled runs)`);

export type TenantId = z.infer<typeof TenantIdSchema>;
