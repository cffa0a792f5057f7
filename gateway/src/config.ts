import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const GatewayConfig = BaseConfig.omit({ DATABASE_URL: true, DATABASE_POOL_SIZE: true }).extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  /** Largest JSON body accepted. */
  BODY_LIMIT: z.string().default('1mb'),
  /** How long a service may take to answer before the gateway gives up (ms). */
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Largest attachment upload (bytes), the same setting as the content service's; larger ones get 413 FileTooLarge. */
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  /** How long a resolved token is reused before the users service is asked again (ms; 0: ask every time). Revocations reach every gateway at once over NATS; this bounds a missed one. */
  AUTH_CACHE_MS: z.coerce.number().int().min(0).default(10_000),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(GatewayConfig, env);
