import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { AuthedRequest } from '../auth/auth.guard';
import { AuthService } from '../auth/auth.service';

/**
 * The `/v1/operator` routes: operator tokens only. Their controller is @Public() so the tenant
 * AuthGuard (which refuses operator tokens) lets the request through to this guard.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const header = request.headers.authorization;
    request.user = await this.auth.authenticateOperator(Array.isArray(header) ? header[0] : header);
    return true;
  }
}
