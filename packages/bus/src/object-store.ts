import { type ObjectStore, Objm } from '@nats-io/obj';
import type { Bus } from './connection.ts';

/**
 * A JetStream object-store bucket, created on first use (every instance reads and writes the same
 * one). A failed open is not remembered: the next call tries again.
 */
export function objectStore(bus: Bus, bucket: string): () => Promise<ObjectStore> {
  let store: Promise<ObjectStore> | undefined;
  return () => {
    store ??= new Objm(bus.js).create(bucket, { replicas: bus.replicas }).catch((err) => {
      store = undefined;
      throw err;
    });
    return store;
  };
}
