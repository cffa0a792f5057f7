import { writeEvent } from '@kn/bus';
import { type Actor, type Category, notFound } from '@kn/contracts';
import { type Executor, json } from '@kn/db';
import type { CategoryRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';

export function presentCategory(row: CategoryRow): Category {
  return { id: row.id, name: row.name, description: row.description, color: row.color, translations: row.translations ?? [] };
}

export async function findCategory(db: Executor<ContentSchema>, id: number) {
  return db.selectFrom('categories').selectAll().where('id', '=', id).executeTakeFirst();
}

type Translation = { language: string; name: string; description: string };
/** One translation per language: the last one given wins. */
const byLanguage = (ts: Translation[]) => [...new Map(ts.map((t) => [t.language, t])).values()];

export function categoriesDomain(deps: ContentDeps) {
  const { db } = deps;

  return {
    async list() {
      const rows = await db.selectFrom('categories').selectAll().orderBy('name').orderBy('id').execute();
      return rows.map(presentCategory);
    },
    async create(input: { name: string; description: string; color: string; translations: Translation[] }, actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const row = await tx
          .insertInto('categories')
          .values({ ...input, translations: json(byLanguage(input.translations)) })
          .returningAll()
          .executeTakeFirstOrThrow();
        const category = presentCategory(row);
        await writeEvent(tx, 'content.category.created.v1', { category }, { actorId: actor.id });
        return category;
      });
    },
    async update(id: number, change: { name?: string; description?: string; color?: string; translations?: Translation[] }, actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const current = await tx.selectFrom('categories').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('category');
        const { translations, ...rest } = change;
        const row = await tx
          .updateTable('categories')
          .set({ ...rest, ...(translations ? { translations: json(byLanguage(translations)) } : {}), updated: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const category = presentCategory(row);
        await writeEvent(tx, 'content.category.updated.v1', { category }, { actorId: actor.id });
        return category;
      });
    },
    async remove(id: number, actor: Actor) {
      await db.transaction().execute(async (tx) => {
        const current = await tx.selectFrom('categories').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('category');
        const affected = await tx
          .updateTable('questions')
          .set({ category_id: null, updated: new Date() })
          .where('category_id', '=', id)
          .returning('id')
          .execute();
        await tx.deleteFrom('categories').where('id', '=', id).execute();
        await writeEvent(
          tx,
          'content.category.deleted.v1',
          { category: presentCategory(current), question_ids: affected.map((r) => r.id) },
          { actorId: actor.id },
        );
      });
    },
  };
}
