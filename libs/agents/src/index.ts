export * from './agent.loader';
export * from './agent.catalog';
