import { type Bus, call } from '@kn/bus';
import { type Actor, multipleOnBehalfHeaders, unauthorized, usersOperations, validationError } from '@kn/contracts';
import type { Request } from 'express';

const ON_BEHALF_ID = 'x-on-behalf-of-user-id';
const ON_BEHALF_EMAIL = 'x-on-behalf-of-email';

/** Reads the act-on-behalf header; a second one (the same name twice, or both names) is refused. */
export function onBehalfOf(req: Request): { user_id: number } | { email: string } | null {
  const sent: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name === ON_BEHALF_ID || name === ON_BEHALF_EMAIL) sent.push([name, req.rawHeaders[i + 1].trim()]);
  }
  if (sent.length === 0) return null;
  if (sent.length > 1) throw multipleOnBehalfHeaders();
  const [name, value] = sent[0];
  if (name === ON_BEHALF_EMAIL) {
    if (!value || value.length > 191) throw validationError(`${ON_BEHALF_EMAIL} must be an email address`);
    return { email: value };
  }
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2147483647)
    throw validationError(`${ON_BEHALF_ID} must be a user id`, [{ path: ON_BEHALF_ID, code: 'invalid_type', message: 'expected a positive integer' }]);
  return { user_id: Number(value) };
}

/** Resolves the caller from `Authorization: Bearer <token>` through the users service. */
export async function authenticate(bus: Bus, req: Request, requestId: string): Promise<Actor> {
  const onBehalf = onBehalfOf(req);
  const header = req.get('authorization') ?? '';
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
  if (!match) throw unauthorized(header ? 'the Authorization header must be "Bearer <token>"' : 'missing token');
  return call(bus, 'authenticate', usersOperations.authenticate, {
    actor: null,
    params: undefined,
    query: undefined,
    body: { token: match[1], on_behalf_of: onBehalf },
    requestId,
    url: req.originalUrl,
  });
}
