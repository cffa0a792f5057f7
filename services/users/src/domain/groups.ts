import { writeEvent } from '@kn/bus';
import type { IdpGroupMapping } from '@kn/contracts';
import { sql, type Tx } from '@kn/db';
import type { UsersSchema } from '../db/schema.ts';
import { rolesFor, spacesFor, withGroupRoles } from './group-roles.ts';
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
 * Gives the users the roles and knowledge spaces their groups give them now (and takes away those
 * their groups gave before and give no more), publishing each change: the content service makes
 * the space memberships of group_knowledge_spaces. Returns the ids whose roles changed: the
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
  const same = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((r) => b.includes(r));
  const changed: number[] = [];
  for (const row of rows) {
    const held = groups.get(row.id) ?? [];
    const next = withGroupRoles(row, rolesFor(held, mappings));
    const spaces = spacesFor(held, mappings);
    const rolesSame = same(next.roles, row.roles);
    if (rolesSame && same(next.group_roles, row.group_roles) && same(spaces, row.group_spaces)) continue;
    const updated = await tx
      .updateTable('users')
      .set({ roles: next.roles, group_roles: next.group_roles, group_spaces: spaces, updated: new Date() })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (rolesSame && same(spaces, row.group_spaces)) continue;
    if (!row.is_deleted) await writeEvent(tx, 'users.user.updated.v1', { user: toSnapshot(updated) }, { actorId });
    if (!rolesSame) changed.push(row.id);
  }
  return changed;
}

/** Every user in at least one group: whose roles a change of idp_group_mappings may change. */
export async function groupMemberIds(tx: Tx<UsersSchema>) {
  const rows = await tx.selectFrom('group_members').select('user_id').distinct().execute();
  return rows.map((r) => r.user_id);
}
