import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { TokenClaims } from '@parley/contracts';
import { AuthService } from './auth.service';

const PUBLIC = 'parley:public';
/** Marks a route that needs no token (health checks), or that checks its caller its own way (operator routes). */
export const Public = () => SetMetadata(PUBLIC, true);

export function isPublic(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()]) === true;
}

export interface AuthedRequest {
  headers: Record<string, string | string[] | undefined>;
  user?: TokenClaims;
}

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isPublic(this.reflector, context)) {
      return true;
    }
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const header = request.headers.authorization;
    request.user = await this.auth.authenticate(Array.isArray(header) ? header[0] : header);
    return true;
  }
}
