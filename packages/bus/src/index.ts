export * from './connection.ts';
export * from './consumer.ts';
export * from './key-value.ts';
export * from './object-store.ts';
export * from './outbox.ts';
export * from './request-keys.ts';
export * from './rpc.ts';
export * from './tables.ts';
