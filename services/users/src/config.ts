import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const UsersConfig = BaseConfig.extend({
  ADMIN_EMAIL: z.string().email().default('admin@example.com').describe('The administrator created on first start, when no user exists.'),
  ADMIN_PASSWORD: z.string().min(8).default('change-me-now').describe("That administrator's first password (at least 8 characters)."),
  TOKEN_TTL: z.coerce
    .number()
    .int()
    .positive()
    .default(30 * 24 * 3600)
    .describe('Token lifetime in seconds (30 days).'),
  SCRYPT_COST: z.coerce
    .number()
    .int()
    .min(1024)
    .default(2 ** 15)
    .describe('scrypt cost N of password hashes (memory = 128 × N × 8 bytes; 2^15 uses 32 MiB per hash).'),
  NETWORK_NAME: z.string().default('Knowledge Network').describe("The network's name until an administrator sets it (settings)."),
  WEBHOOK_ALLOW_INTERNAL: z
    .enum(['true', 'false'])
    .default('false')
    .describe(
      '`true` lets PUT /settings set a `webhook_url` on loopback, private, link-local and other non-public addresses (or a name resolving to one): only for a receiver inside your own network. Set it for the notifications service too.',
    ),
});
export type UsersConfig = z.infer<typeof UsersConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(UsersConfig, env);
