import { StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { Bus } from './connection.ts';

export type { KV } from '@nats-io/kv';

/**
 * A JetStream key-value bucket shared by every instance (rate limits, idempotency keys), created on
 * first use with the namespace in its name. Entries expire after `ttlMs`. A failed open is not
 * remembered: the next call tries again.
 */
export function keyValue(bus: Bus, name: string, options: { ttlMs: number; memory?: boolean }): () => Promise<KV> {
  let bucket: Promise<KV> | undefined;
  return () => {
    bucket ??= new Kvm(bus.js)
      .create(bus.bucketName(name), {
        history: 1,
        ttl: options.ttlMs,
        replicas: bus.replicas,
        storage: options.memory ? StorageType.Memory : StorageType.File,
      })
      .catch((err) => {
        bucket = undefined;
        throw err;
      });
    return bucket;
  };
}
