import { writeEvent } from '@kn/bus';
import { type Actor, notFound } from '@kn/contracts';
import { type Executor, sql, type Tx } from '@kn/db';
import type { KnowledgeSpaceRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';

async function memberIds(db: Executor<ContentSchema>, id: number) {
  const rows = await db
    .selectFrom('knowledge_space_members')
    .select('user_id')
    .where('knowledge_space_id', '=', id)
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

function present(row: KnowledgeSpaceRow, memberCount: number) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    is_closed: row.is_closed,
    member_count: memberCount,
    automatic_new_user_assignment: row.automatic_new_user_assignment,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  };
}

async function publish(tx: Tx<ContentSchema>, row: KnowledgeSpaceRow, kind: 'created' | 'updated', actor: Pick<Actor, 'id'> | null) {
  const members = await memberIds(tx, row.id);
  const { member_count: _count, ...rest } = present(row, members.length);
  await writeEvent(
    tx,
    `content.knowledge-space.${kind}.v1`,
    { knowledge_space: { ...rest, member_ids: members } },
    { actorId: actor?.id ?? null },
  );
  return present(row, members.length);
}

/** A new user joins every space with automatic_new_user_assignment (called by the users consumer). */
export async function assignNewUser(tx: Tx<ContentSchema>, userId: number) {
  const spaces = await tx.selectFrom('knowledge_spaces').selectAll().where('automatic_new_user_assignment', '=', true).execute();
  for (const space of spaces) {
    const added = await tx
      .insertInto('knowledge_space_members')
      .values({ knowledge_space_id: space.id, user_id: userId })
      .onConflict((c) => c.columns(['knowledge_space_id', 'user_id']).doNothing())
      .returning('user_id')
      .execute();
    if (added.length) await publish(tx, space, 'updated', null);
  }
}

/**
 * Makes the person a member of exactly these spaces by their identity-provider groups (the users
 * service's group_knowledge_spaces), leaving memberships set by hand alone: joining a group adds
 * the group's flag (and the membership, when there was none), leaving it takes the flag away and
 * the membership only where no administrator set it. Idempotent, so a redelivered event changes
 * nothing; each space whose members changed is published. Ids of spaces that do not exist are left out.
 */
export async function applyGroupSpaces(tx: Tx<ContentSchema>, userId: number, spaceIds: readonly number[]) {
  const had = await tx
    .selectFrom('knowledge_space_members')
    .select('knowledge_space_id')
    .where('user_id', '=', userId)
    .where('by_groups', '=', true)
    .execute();
  const before = new Set(had.map((r) => r.knowledge_space_id));
  const joined = spaceIds.filter((id) => !before.has(id));
  const left = [...before].filter((id) => !spaceIds.includes(id));
  if (!joined.length && !left.length) return;
  // Locked as setMembers locks them, so each published member list is the committed one.
  const spaces = await tx
    .selectFrom('knowledge_spaces')
    .selectAll()
    .where('id', 'in', [...joined, ...left])
    .orderBy('id')
    .forUpdate()
    .execute();
  const changed = new Set<number>();
  const known = spaces.map((space) => space.id).filter((id) => joined.includes(id));
  if (known.length) {
    const added = await tx
      .insertInto('knowledge_space_members')
      .values(known.map((knowledge_space_id) => ({ knowledge_space_id, user_id: userId, by_hand: false, by_groups: true })))
      .onConflict((c) => c.columns(['knowledge_space_id', 'user_id']).doUpdateSet({ by_groups: true }))
      .returning(['knowledge_space_id', sql<boolean>`xmax = 0`.as('inserted')])
      .execute();
    for (const row of added) if (row.inserted) changed.add(row.knowledge_space_id);
  }
  if (left.length) {
    await tx
      .updateTable('knowledge_space_members')
      .set({ by_groups: false })
      .where('user_id', '=', userId)
      .where('knowledge_space_id', 'in', left)
      .execute();
    const removed = await tx
      .deleteFrom('knowledge_space_members')
      .where('user_id', '=', userId)
      .where('knowledge_space_id', 'in', left)
      .where('by_hand', '=', false)
      .returning('knowledge_space_id')
      .execute();
    for (const row of removed) changed.add(row.knowledge_space_id);
  }
  for (const space of spaces) if (changed.has(space.id)) await publish(tx, space, 'updated', null);
}

type SpaceInput = { name?: string; description?: string | null; is_closed?: boolean; automatic_new_user_assignment?: boolean };

export function knowledgeSpacesDomain(deps: ContentDeps) {
  const { db } = deps;

  return {
    /** Every space, closed ones included (their questions stay hidden from non-members). */
    async list() {
      const rows = await db
        .selectFrom('knowledge_spaces as k')
        .selectAll('k')
        .select((eb) =>
          eb
            .selectFrom('knowledge_space_members as m')
            .select((e) => e.fn.countAll<number>().as('c'))
            .whereRef('m.knowledge_space_id', '=', 'k.id')
            .as('member_count'),
        )
        .orderBy('k.id')
        .execute();
      return { total: rows.length, items: rows.map((r) => present(r, Number(r.member_count ?? 0))) };
    },
    async create(input: SpaceInput & { name: string }, actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const row = await tx
          .insertInto('knowledge_spaces')
          .values({
            name: input.name,
            description: input.description ?? null,
            is_closed: input.is_closed ?? false,
            automatic_new_user_assignment: input.automatic_new_user_assignment ?? false,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return publish(tx, row, 'created', actor);
      });
    },
    async update(id: number, change: SpaceInput, actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const current = await tx.selectFrom('knowledge_spaces').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('knowledge space');
        const row = await tx
          .updateTable('knowledge_spaces')
          .set({ ...change, updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return publish(tx, row, 'updated', actor);
      });
    },
    async setMembers(id: number, userIds: number[], actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const current = await tx.selectFrom('knowledge_spaces').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('knowledge space');
        // The list is who an administrator makes a member; those the groups make members stay (applyGroupSpaces).
        await tx.updateTable('knowledge_space_members').set({ by_hand: false }).where('knowledge_space_id', '=', id).execute();
        await tx.deleteFrom('knowledge_space_members').where('knowledge_space_id', '=', id).where('by_groups', '=', false).execute();
        const ids = [...new Set(userIds)];
        if (ids.length)
          await tx
            .insertInto('knowledge_space_members')
            .values(ids.map((user_id) => ({ knowledge_space_id: id, user_id, by_hand: true })))
            .onConflict((c) => c.columns(['knowledge_space_id', 'user_id']).doUpdateSet({ by_hand: true }))
            .execute();
        const row = await tx
          .updateTable('knowledge_spaces')
          .set({ updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return publish(tx, row, 'updated', actor);
      });
    },
  };
}
