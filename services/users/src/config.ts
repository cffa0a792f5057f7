import { BaseConfig, parseConfig } from '@kn/service';
import { z } from 'zod';

export const UsersConfig = BaseConfig.extend({
  /** The administrator created on first start, when no user exists. */
  ADMIN_EMAIL: z.string().email().default('admin@example.com'),
  ADMIN_PASSWORD: z.string().min(8).default('change-me-now'),
  /** Token lifetime in seconds (default 30 days). */
  TOKEN_TTL: z.coerce
    .number()
    .int()
    .positive()
    .default(30 * 24 * 3600),
  /** scrypt cost N (memory = 128 * N * 8 bytes); 2^15 uses 32 MiB per hash. */
  SCRYPT_COST: z.coerce
    .number()
    .int()
    .min(1024)
    .default(2 ** 15),
  NETWORK_NAME: z.string().default('Knowledge Network'),
});
export type UsersConfig = z.infer<typeof UsersConfig>;

export const loadConfig = (env?: Record<string, string | undefined>) => parseConfig(UsersConfig, env);
