import { z } from 'zod';

const PayloadSchema = z.object({ sub: z.string().min(1) });

/**
 * Who the gateway takes the CLI for: the token's `sub`, read without verifying it (the gateway
 * does that). Undefined when the token is not a JWT this can read.
 */
export function tokenSubject(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) {
    return undefined;
  }
  try {
    const parsed = PayloadSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data.sub : undefined;
  } catch {
    return undefined;
  }
}
