import { writeEvent } from '@kn/bus';
import type { IdpGroupMapping } from '@kn/contracts';
import { sql, type Tx } from '@kn/db';
import type { UsersSchema } from '../db/schema.ts';
import { rolesFor, withGroupRoles } from './group-roles.ts';
import { toSnapshot } from './present.ts';

/** The names of the groups each of the users is in. */
export async function groupNamesOf(tx: Tx<UsersSchema>, userIds: readonly number[]) {
  const names = new Map<number, string[]>(userIds.map((id) => [id, []]));
  if (!userIds.length) return names;
  const rows = await tx
    .selectFrom('group_members')
    .innerJoin('groups', 'groups.id', 'group_members.group_id')
    .select(['group_members.user_id', 'groups.display_name'])
    .where('group_members.user_id', '=', sql<number>`any(${[...userIds]}::int[])`)
    .execute();
  for (const row of rows) names.get(row.user_id)?.push(row.display_name);
  return names;
}

/**
 * Gives the users the roles their groups give them now (and takes away those their groups gave
 * before and give no more), publishing each change. Returns the ids whose roles changed: the
 * gateways must forget what they cached about them.
 */
export async function applyGroupRoles(
  tx: Tx<UsersSchema>,
  userIds: readonly number[],
  mappings: readonly IdpGroupMapping[],
  actorId: number | null,
  /** Their groups as the identity provider just named them (an ID token's claim); else those SCIM provisioned. */
  named?: ReadonlyMap<number, readonly string[]>,
): Promise<number[]> {
  if (!userIds.length) return [];
  const rows = await tx
    .selectFrom('users')
    .selectAll()
    .where('id', '=', sql<number>`any(${[...new Set(userIds)]}::int[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
  const groups =
    named ??
    (await groupNamesOf(
      tx,
      rows.map((r) => r.id),
    ));
  const changed: number[] = [];
  for (const row of rows) {
    const next = withGroupRoles(row, rolesFor(groups.get(row.id) ?? [], mappings));
    const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((r) => b.includes(r));
    if (same(next.roles, row.roles) && same(next.group_roles, row.group_roles)) continue;
    const updated = await tx
      .updateTable('users')
      .set({ roles: next.roles, group_roles: next.group_roles, updated: new Date() })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (!same(next.roles, row.roles)) {
      if (!row.is_deleted) await writeEvent(tx, 'users.user.updated.v1', { user: toSnapshot(updated) }, { actorId });
      changed.push(row.id);
    }
  }
  return changed;
}

/** Every user in at least one group: whose roles a change of idp_group_mappings may change. */
export async function groupMemberIds(tx: Tx<UsersSchema>) {
  const rows = await tx.selectFrom('group_members').select('user_id').distinct().execute();
  return rows.map((r) => r.user_id);
}
