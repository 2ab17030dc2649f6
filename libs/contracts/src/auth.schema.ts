import { z } from 'zod';
import { SubjectSchema, TenantIdSchema } from './ids.schema';

/**
 * `operator` is a platform credential, not a tenant's: it reaches only the `/v1/operator` routes
 * (its `tenant` claim is ignored there) and every other route and the socket refuse it.
 */
export const RoleSchema = z.enum(['member', 'admin', 'service', 'operator']);
export type Role = z.infer<typeof RoleSchema>;

/** Claims Parley reads from a bearer JWT. Unknown claims (iat, exp, ...) are allowed. */
export const TokenClaimsSchema = z.object({
  tenant: TenantIdSchema,
  sub: SubjectSchema,
  role: RoleSchema,
});
export type TokenClaims = z.infer<typeof TokenClaimsSchema>;

/** Who did something, as recorded in events and interaction resolutions. */
export const ActorSchema = z.object({
  kind: z.enum(['user', 'deadline', 'system']),
  subject: z.string().optional(),
  role: RoleSchema.optional(),
});
export type Actor = z.infer<typeof ActorSchema>;
