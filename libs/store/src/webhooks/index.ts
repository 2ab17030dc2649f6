export * from './webhook.address';
export * from './webhook.signature';
export * from './webhook.repository';
export * from './webhook-delivery.repository';
export * from './webhook-subscriptions';
export * from './webhook.queue';
export * from './webhook.store';
export * from './webhook-store.module';
