export * from './model.types';
export * from './model.errors';
export * from './scripted.template';
export * from './scripted.adapter';
export * from './anthropic.adapter';
export * from './model.factory';
