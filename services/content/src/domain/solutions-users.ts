import { type Bus, call } from '@kn/bus';
import { type Actor, AppError, type User, usersOperations, validationError } from '@kn/contracts';

/**
 * Users as the users service shows them to the caller (email disguise included). Recipients of a
 * forward or share must exist and not be deleted: unknown ones are a validation error on `field`.
 */
export async function fetchUsers(bus: Bus, actor: Actor, ids: number[], requestId: string, field: string): Promise<Map<number, User>> {
  const distinct = [...new Set(ids)];
  const found = new Map<number, User>();
  const missing: number[] = [];
  await Promise.all(
    distinct.map(async (id) => {
      try {
        const user = await call(bus, 'getUser', usersOperations.getUser, {
          actor,
          params: { id },
          query: undefined,
          body: undefined,
          requestId,
          url: `/api/v1/users/${id}`,
        });
        if (user.is_deleted) missing.push(id);
        else found.set(id, user);
      } catch (err) {
        if (err instanceof AppError && err.status === 404) missing.push(id);
        else throw err;
      }
    }),
  );
  if (missing.length)
    throw validationError(`unknown users: ${missing.sort((a, b) => a - b).join(', ')}`, [
      { path: field, code: 'invalid_value', message: `no such user: ${missing.join(', ')}` },
    ]);
  return found;
}

/** Users for display; those that vanished are left out rather than failing the listing. */
export async function fetchUsersLenient(bus: Bus, actor: Actor, ids: number[], requestId: string): Promise<Map<number, User>> {
  const found = new Map<number, User>();
  await Promise.all(
    [...new Set(ids)].map(async (id) => {
      try {
        found.set(
          id,
          await call(bus, 'getUser', usersOperations.getUser, {
            actor,
            params: { id },
            query: undefined,
            body: undefined,
            requestId,
            url: `/api/v1/users/${id}`,
          }),
        );
      } catch (err) {
        if (!(err instanceof AppError && err.status === 404)) throw err;
      }
    }),
  );
  return found;
}
