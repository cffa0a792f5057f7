import { z } from 'zod';

/** Database ids travel as positive integers; path and query strings are coerced. */
const MAX_ID = 2147483647;
/**
 * A row id: a JSON integer, or its decimal digits (path and query parameters are strings). Not a
 * bare `z.coerce`: that turned `true`, `[5]`, `"0x10"` or `"1e3"` in a body into ids.
 */
export const Id = z
  .union([z.number().int().positive().max(MAX_ID), z.string().regex(/^0*[1-9][0-9]{0,9}$/, 'a positive integer')])
  .pipe(z.coerce.number<string | number>().int().positive().max(MAX_ID));
export const Timestamp = z.string().meta({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const Language = z.string().regex(/^[a-z]{2}$/, 'a two-letter language code');
export const Email = z.string().trim().max(191).email();

/** Query booleans: only the literal strings `true` and `false` (and real booleans from JSON). */
export const QueryBoolean = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).describe('true or false');

export const Limit = (fallback: number, max = 1000) => z.coerce.number().int().min(0).max(max).default(fallback);
export const Offset = z.coerce.number().int().min(0).default(0);

/** The most items a comma-separated query list takes (docs/api.md; commaList in text.ts): a request's cost stays bounded. */
export const MAX_LIST_ITEMS = 100;

export const Links = z.object({ self: z.object({ href: z.string() }) });

export const Page = <T extends z.ZodType>(item: T) => z.object({ total: z.number().int(), _links: Links, items: z.array(item) });
/** A list that is not paged: all of it, with its count. */
export const List = <T extends z.ZodType>(item: T) => z.object({ total: z.number().int(), items: z.array(item) });

/** The body of a solution or a comment: HTML with mention markup, sanitized by the content service. */
export const DescriptionBody = z.object({ description: z.string().min(1, 'description must not be empty') });
/** Users mentioned in a description (`<span data-mention-user-id="…">`), live users only, after sanitizing. */
export const Mentions = z.array(z.number().int()).describe('ids of the live users mentioned in the description');

export const Roles = [
  'user',
  'manager',
  'api_user',
  'on_behalf_user',
  'super_admin',
  'user_admin',
  'content_admin',
  'settings_admin',
] as const;
export const Role = z.enum(Roles);
export type Role = z.infer<typeof Role>;

/** The authenticated caller as the gateway resolved it; services trust it. */
export const Actor = z.object({
  id: z.number().int(),
  roles: z.array(Role),
  /** The token the request came with (its database id), so it can be revoked. */
  token_id: z.string().nullable(),
});
export type Actor = z.infer<typeof Actor>;
