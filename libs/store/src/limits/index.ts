export * from './limits.repository';
