import { writeEvent } from '@kn/bus';
import { type Actor, notFound } from '@kn/contracts';
import { type Db, type Executor, sql, type Tx } from '@kn/db';
import type { TagRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';

const snapshot = (t: TagRow) => ({ id: t.id, label: t.label, excluded_from_suggestions: t.excluded_from_suggestions });

/** Distinct labels in the order given (first spelling wins, compared case-insensitively). */
export function distinctLabels(labels: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of labels) {
    const label = raw.trim();
    const key = label.toLowerCase();
    if (!label || seen.has(key)) continue;
    seen.add(key);
    out.push(label);
  }
  return out;
}

/**
 * The tags of these labels, creating the missing ones (each with a content.tag.created event).
 * Labels compare case-insensitively: an existing tag keeps its spelling.
 */
export async function ensureTags(tx: Tx<ContentSchema>, labels: readonly string[], actorId: number | null): Promise<TagRow[]> {
  const wanted = distinctLabels(labels);
  if (wanted.length === 0) return [];
  const out: TagRow[] = [];
  for (const label of wanted) {
    let tag = await findTag(tx, label);
    if (!tag) {
      tag = await tx
        .insertInto('tags')
        .values({ label })
        .onConflict((c) => c.doNothing())
        .returningAll()
        .executeTakeFirst();
      if (tag) await writeEvent(tx, 'content.tag.created.v1', { tag: snapshot(tag) }, { actorId });
      else tag = await findTag(tx, label);
    }
    if (tag) out.push(tag);
  }
  return out;
}

export function findTag(db: Executor<ContentSchema>, label: string) {
  return db.selectFrom('tags').selectAll().where(sql`lower(label)`, '=', label.trim().toLowerCase()).executeTakeFirst();
}

async function requireTag(db: Executor<ContentSchema>, label: string) {
  const tag = await findTag(db, label);
  if (!tag) throw notFound('tag');
  return tag;
}

export function tagsDomain(db: Db<ContentSchema>) {
  return {
    async list(query: { query?: string; limit: number; offset: number }, url: string) {
      const q = query.query?.trim().toLowerCase();
      let base = db.selectFrom('tags');
      if (q) base = base.where(sql<boolean>`lower(label) like ${`%${escapeLike(q)}%`}`);
      const [{ total }] = await base.select((eb) => eb.fn.countAll<number>().as('total')).execute();
      let items = base.select('label');
      // Prefix matches first, then alphabetical.
      if (q) items = items.orderBy(sql`lower(label) like ${`${escapeLike(q)}%`}`, 'desc');
      const rows = await items.orderBy(sql`lower(label)`).orderBy('label').limit(query.limit).offset(query.offset).execute();
      return { total, _links: { self: { href: url } }, items: rows.map((r) => r.label) };
    },

    async get(label: string) {
      const tag = await requireTag(db, label);
      return present(db, tag);
    },

    async update(label: string, change: { excluded_from_suggestions: boolean }, actor: Actor) {
      const tag = await db.transaction().execute(async (tx) => {
        const tag = await requireTag(tx, label);
        if (tag.excluded_from_suggestions === change.excluded_from_suggestions) return tag;
        const updated = await tx
          .updateTable('tags')
          .set({ excluded_from_suggestions: change.excluded_from_suggestions })
          .where('id', '=', tag.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeEvent(tx, 'content.tag.updated.v1', { tag: snapshot(updated) }, { actorId: actor.id });
        return updated;
      });
      return present(db, tag);
    },

    async links(label: string) {
      const tag = await requireTag(db, label);
      return linkLabels(db, tag.id);
    },

    async replaceLinks(label: string, labels: string[], actor: Actor) {
      return db.transaction().execute(async (tx) => {
        const tag = await requireTag(tx, label);
        await tx.selectFrom('tags').select('id').where('id', '=', tag.id).forUpdate().execute();
        const linked = (await ensureTags(tx, labels, actor.id)).filter((t) => t.id !== tag.id);
        await tx.deleteFrom('tag_links').where('tag_id', '=', tag.id).execute();
        if (linked.length)
          await tx
            .insertInto('tag_links')
            .values(linked.map((t) => ({ tag_id: tag.id, linked_tag_id: t.id })))
            .execute();
        const result = await linkLabels(tx, tag.id);
        await writeEvent(tx, 'content.tag.links-updated.v1', { tag: snapshot(tag), links: result }, { actorId: actor.id });
        return result;
      });
    },
  };
}

async function linkLabels(db: Executor<ContentSchema>, tagId: string) {
  const rows = await db
    .selectFrom('tag_links')
    .innerJoin('tags', 'tags.id', 'tag_links.linked_tag_id')
    .select('tags.label')
    .where('tag_links.tag_id', '=', tagId)
    .orderBy(sql`lower(tags.label)`)
    .orderBy('tags.label')
    .execute();
  return rows.map((r) => r.label);
}

async function present(db: Executor<ContentSchema>, tag: TagRow) {
  const { count } = await db
    .selectFrom('question_tags')
    .innerJoin('questions', 'questions.id', 'question_tags.question_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('question_tags.tag_id', '=', tag.id)
    .where('questions.is_published', '=', true)
    .where('questions.is_deleted', '=', false)
    .executeTakeFirstOrThrow();
  return { label: tag.label, excluded_from_suggestions: tag.excluded_from_suggestions, image: null, question_count: count };
}

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
