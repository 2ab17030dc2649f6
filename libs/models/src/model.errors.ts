import type { ModelUsage } from './model.types';

/** Why a model call failed, for logs and metrics; `retryable` is what callers branch on. */
export type ModelErrorKind =
  | 'config'
  | 'aborted'
  | 'timeout'
  | 'connection'
  | 'rate_limited'
  | 'overloaded'
  | 'server'
  | 'rejected'
  | 'protocol';

export interface ModelErrorOptions {
  kind: ModelErrorKind;
  retryable: boolean;
  /** HTTP status of the provider's answer, when there was one. */
  status?: number;
  cause?: unknown;
  /** Tokens the provider counted before the call failed (a stream cut short is billed too). */
  usage?: ModelUsage;
  /** How long the provider asked to wait before the next try (its retry-after). */
  retryAfterMs?: number;
}

/**
 * A model call that failed. `retryable` says whether trying the same step again later may succeed
 * (rate limits, overload, 5xx, dropped connections); the adapter has already spent its own retries.
 */
export class ModelError extends Error {
  readonly code = 'model_error' as const;
  readonly kind: ModelErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  usage: ModelUsage | undefined;

  constructor(message: string, options: ModelErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelError';
    this.kind = options.kind;
    this.retryable = options.retryable;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.usage = options.usage;
  }
}

export function isModelError(error: unknown): error is ModelError {
  return error instanceof ModelError;
}

/** The error both adapters throw when `request.signal` is aborted. */
export function abortedError(signal: AbortSignal | undefined): ModelError {
  return new ModelError('model call aborted', { kind: 'aborted', retryable: false, cause: signal?.reason });
}
