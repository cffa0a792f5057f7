import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

// Each setting's description is its documentation: docs/operations.md is generated from it (pnpm config-reference).
export const GatewayConfig = BaseConfig.omit({ DATABASE_URL: true, DATABASE_POOL_SIZE: true }).extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe('Where the REST API listens (0: any free port).'),
  HOST: z.string().default('0.0.0.0').describe('The address the REST API listens on.'),
  BODY_LIMIT: z.string().default('1mb').describe('Largest JSON body accepted; larger ones get 413.'),
  RPC_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe('How long a service may take to answer before the gateway gives up (ms; the client gets 503 ServiceUnavailable).'),
  ATTACHMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024)
    .describe("Largest attachment upload (bytes), the same setting as the content service's; larger ones get 413 FileTooLarge."),
  AUTH_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10_000)
    .describe(
      'How long a resolved token is reused before the users service is asked again (ms; 0: ask every time). Revocations reach every gateway at once over NATS; this bounds a missed one.',
    ),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(GatewayConfig, env);
