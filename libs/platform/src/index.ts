export * from './config';
export * from './logger';
export * from './redis';
export * from './token';
export * from './ops/metrics';
export * from './ops/ops.server';
export * from './nest-logger';
export * from './net/unanswered';
