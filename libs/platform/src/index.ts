export * from './config';
export * from './logger';
export * from './redis';
export * from './token';
