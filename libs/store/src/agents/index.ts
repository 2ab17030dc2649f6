export * from './agent.repository';
