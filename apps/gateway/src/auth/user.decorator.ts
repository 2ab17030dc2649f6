import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { TokenClaims } from '@parley/contracts';
import type { AuthedRequest } from './auth.guard';

/** The authenticated caller's claims (set by AuthGuard). */
export const User = createParamDecorator((_: unknown, context: ExecutionContext): TokenClaims => {
  const user = context.switchToHttp().getRequest<AuthedRequest>().user;
  if (!user) {
    throw new Error('User used on a route without AuthGuard');
  }
  return user;
});
