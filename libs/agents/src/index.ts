export * from './agent.loader';
export * from './agent.catalog';
export * from './agent.powers';
export * from './agent.digest';
export * from './tenant-agents.upload';
export * from './tenant-agents.resolver';
