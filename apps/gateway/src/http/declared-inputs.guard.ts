import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { z } from 'zod';
import { parseOrThrow } from '@parley/contracts';
import { isPublic } from '../auth/auth.guard';

const NOTHING = z.strictObject({});

/**
 * Query parameters and body fields are strict on every route, not only on those that read them: a
 * route that takes no query refuses any parameter, and one that takes no body refuses a body with
 * fields (an empty `{}` passes), naming them (400 `validation_failed`), as a route's own schema
 * refuses an unknown one. A caller's typo (`?limt=10`, `{"reason":...}` on a stop) is told, not
 * silently dropped. Runs after the auth guard (an unknown caller learns nothing of the routes) and
 * the route's role check (a caller the route is not for is told that, 403). Public routes (health,
 * operator routes with their own guard) are left alone.
 */
@Injectable()
export class DeclaredInputsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http' || isPublic(this.reflector, context)) {
      return true;
    }
    const request = context.switchToHttp().getRequest<Request>();
    const reads = readInputs(context);
    if (!reads.has(RouteParamtypes.QUERY) && Object.keys(request.query).length > 0) {
      parseOrThrow(NOTHING, request.query, 'query');
    }
    const body: unknown = request.body;
    if (!reads.has(RouteParamtypes.BODY) && body !== undefined && !isEmptyObject(body)) {
      parseOrThrow(NOTHING, body, 'body');
    }
    return true;
  }
}

/** The kinds of request input the route's handler takes as parameters (@Query, @Body, ...). */
function readInputs(context: ExecutionContext): Set<number> {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), context.getHandler().name) ?? {}) as Record<string, unknown>;
  return new Set(Object.keys(args).map((key) => Number(key.split(':')[0])));
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
