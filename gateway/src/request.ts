import { type Actor, fieldErrors, forbidden, type Operation, validationError } from '@kn/contracts';
import type { Request } from 'express';
import type { z } from 'zod';

/** Validates one part of a request (params, query, body) with the operation's schema. */
export function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, part: string): z.output<S> | undefined {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    const errors = fieldErrors(result.error.issues, part === 'body' ? undefined : part);
    throw validationError(errors.map((e) => `${e.path || part}: ${e.message}`).join('; '), errors);
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
