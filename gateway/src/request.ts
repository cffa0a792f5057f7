import { type Actor, fieldErrors, forbidden, type Operation, unsupportedMediaType, validationError } from '@kn/contracts';
import express, { type Request, type RequestHandler } from 'express';
import type { z } from 'zod';

const JSON_CHARSETS = /^utf-?(8|16(le|be)?|32(le|be)?)$/i;

export const hasBody = (req: Request) => Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;

/**
 * Parses a JSON body of up to `limit`, for the API and POST /session alike. JSON is UTF-8 (or,
 * per RFC 7159, UTF-16/32); body-parser would also decode any other `utf-*` iconv knows, UTF-7
 * included, and hand the result on as if it were what the client meant: 415 instead.
 */
export function jsonBody(limit: string): RequestHandler {
  const parse = express.json({ limit, strict: true });
  return (req, res, next) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.get('content-type') ?? '')?.[1];
    if (hasBody(req) && charset !== undefined && !JSON_CHARSETS.test(charset))
      return next(unsupportedMediaType('JSON bodies must be UTF-8 (or UTF-16/32)'));
    parse(req, res, next);
  };
}

/** A body sent as anything but JSON is 415 (jsonBody leaves it unread). */
export function requireJson(req: Request) {
  if (hasBody(req) && !req.is('application/json')) throw unsupportedMediaType();
}

/**
 * The JSON Schema pattern of unstorableText's rule, which the OpenAPI document puts on every string
 * of a request (json-schema.ts, storableText). It can name NUL only: ECMA-262 validators and
 * Python's `re` read `[^\u0000]` alike, but a pattern naming surrogates is one neither Rust nor
 * Python validators of UTF-8 text can compile, and their strings cannot hold an unpaired one anyway.
 */
export const STORABLE_TEXT_PATTERN = '^[^\\u0000]*$';

/**
 * Where in a decoded request part a string (or key) holds text Postgres cannot store: NUL, or an
 * unpaired UTF-16 surrogate (JSON allows both as escapes; text columns refuse the first, jsonb
 * both). Undefined when there is none. Iterative: bodies may nest thousands of levels deep.
 */
export function unstorableText(value: unknown): string | undefined {
  const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (bad(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k;
        if (bad(k)) return at;
        stack.push([item, at]);
      }
    }
  }
  return undefined;
}

/**
 * Validates one part of a request (params, query, body) with the operation's schema, then the text
 * it keeps: what the schema leaves out (JSON fields it does not name) is ignored, whatever it holds.
 */
export function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, part: string): z.output<S> | undefined {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    const errors = fieldErrors(result.error.issues, part === 'body' ? undefined : part);
    throw validationError(errors.map((e) => `${e.path || part}: ${e.message}`).join('; '), errors);
  }
  const unstorable = unstorableText(result.data);
  if (unstorable !== undefined) {
    const path = part === 'body' ? unstorable : unstorable ? `${part}.${unstorable}` : part;
    const message = 'must not contain NUL characters or unpaired UTF-16 surrogates';
    throw validationError(`${path || part}: ${message}`, [{ path, code: 'invalid_format', message }]);
  }
  return result.data;
}

export type Authenticate = (req: Request, requestId: string) => Promise<Actor>;

/** The caller of an operation: null for public ones; otherwise authenticated and holding one of its roles. */
export async function authorize(authenticate: Authenticate, req: Request, op: Operation): Promise<Actor | null> {
  if (op.http?.auth !== 'user') return null;
  const actor = await authenticate(req, req.id);
  const roles = op.http.roles;
  if (roles && !roles.some((r) => actor.roles.includes(r))) throw forbidden(`needs the role ${roles.join(' or ')}`);
  return actor;
}
