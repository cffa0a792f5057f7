import { type Bus, call } from '@kn/bus';
import { type Actor, AppError, type User, usersOperations } from '@kn/contracts';

/** The most ids the users service takes in one getUsers request. */
const PAGE = 1000;

/**
 * Users as the users service shows them to the caller (email disguise included), deleted ones
 * too; unknown ones are left out. One request for each thousand users, not one for each user.
 */
export async function fetchUsers(bus: Bus, actor: Actor, ids: number[], requestId: string): Promise<Map<number, User>> {
  const distinct = [...new Set(ids)];
  const pages: number[][] = [];
  for (let i = 0; i < distinct.length; i += PAGE) pages.push(distinct.slice(i, i + PAGE));
  const answers = await Promise.all(
    pages.map((page) =>
      call(bus, 'getUsers', usersOperations.getUsers, {
        actor,
        params: undefined,
        query: undefined,
        body: { ids: page },
        requestId,
        url: '',
      }),
    ),
  );
  return new Map(answers.flatMap(({ items }) => items.map((user) => [user.id, user] as const)));
}

/**
 * `fetchUsers` for recipients of a forward or share: they must exist and not be deleted, unknown
 * ones are 404 NotFound naming `field` (a well-formed request whose user is not there, as an
 * unknown category of a question is).
 */
export async function requireUsers(bus: Bus, actor: Actor, ids: number[], requestId: string, field: string): Promise<Map<number, User>> {
  const found = await fetchUsers(bus, actor, ids, requestId);
  const missing = [...new Set(ids)].filter((id) => found.get(id)?.is_deleted !== false).sort((a, b) => a - b);
  if (missing.length)
    throw new AppError(404, 'NotFound', `unknown users: ${missing.join(', ')}`, {
      errors: [{ path: field, code: 'invalid_value', message: `no such user: ${missing.join(', ')}` }],
    });
  return found;
}
