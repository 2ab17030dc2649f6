export * from './keys';
export * from './store.context';
export * from './store';
export * from './run.repository';
export * from './interaction.repository';
export * from './event.repository';
export * from './workspace.repository';
export * from './queues';
