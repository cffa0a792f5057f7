import { writeEvent } from '@kn/bus';
import { type Actor, notFound } from '@kn/contracts';
import type { Executor, Tx } from '@kn/db';
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
        await tx.deleteFrom('knowledge_space_members').where('knowledge_space_id', '=', id).execute();
        const ids = [...new Set(userIds)];
        if (ids.length)
          await tx
            .insertInto('knowledge_space_members')
            .values(ids.map((user_id) => ({ knowledge_space_id: id, user_id })))
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
