import { writeEvent } from '@kn/bus';
import { type Actor, notFound } from '@kn/contracts';
import { type Executor, sql, type Tx } from '@kn/db';
import type { RawBuilder } from 'kysely';
import type { TagRow } from '../db/questions-tables.ts';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { hiddenSpaces } from './access.ts';

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

/** A question that is outside the hidden spaces (`q`: its alias). */
const outside = (hidden: readonly number[]) =>
  sql<boolean>`(q.knowledge_space_id is null or q.knowledge_space_id <> all(${hidden}::int[]))`;

/**
 * Whether the tag of `tags.id` exists for a caller who may not read the `hidden` spaces: a tag is
 * the network's unless every question that carries it (drafts and deleted ones too: they are its
 * uses) is in one of those spaces; a tag no question carries (made by a link) is everyone's.
 * Everything about a closed space, its tags too, is visible only to those who may read it.
 */
const visibleTag = (hidden: readonly number[]): RawBuilder<boolean> =>
  sql<boolean>`(not exists (select 1 from question_tags qt where qt.tag_id = tags.id)
    or exists (select 1 from question_tags qt join questions q on q.id = qt.question_id where qt.tag_id = tags.id and ${outside(hidden)}))`;

/** The tag unless it is used only in spaces the caller may not read (then it does not exist for them: 404). */
async function requireVisibleTag(db: Executor<ContentSchema>, label: string, hidden: readonly number[]) {
  const tag = await requireTag(db, label);
  if (!hidden.length) return tag;
  const visible = await db.selectFrom('tags').select('id').where('id', '=', tag.id).where(visibleTag(hidden)).executeTakeFirst();
  if (!visible) throw notFound('tag');
  return tag;
}

export function tagsDomain(deps: ContentDeps) {
  const { db } = deps;

  return {
    /** The tags the caller may see (not those used only in closed spaces they may not read). */
    async list(query: { query?: string; limit: number; offset: number }, url: string, actor: Actor) {
      const q = query.query?.trim().toLowerCase();
      const hidden = await hiddenSpaces(db, actor);
      let base = db.selectFrom('tags');
      if (q) base = base.where(sql<boolean>`lower(label) like ${`%${escapeLike(q)}%`}`);
      if (hidden.length) base = base.where(visibleTag(hidden));
      const [{ total }] = await base.select((eb) => eb.fn.countAll<number>().as('total')).execute();
      let items = base.select('label');
      // Prefix matches first, then alphabetical.
      if (q) items = items.orderBy(sql`lower(label) like ${`${escapeLike(q)}%`}`, 'desc');
      const rows = await items.orderBy(sql`lower(label)`).orderBy('label').limit(query.limit).offset(query.offset).execute();
      return { total, _links: { self: { href: url } }, items: rows.map((r) => r.label) };
    },

    async get(label: string, actor: Actor) {
      const hidden = await hiddenSpaces(db, actor);
      return present(db, await requireVisibleTag(db, label, hidden), hidden);
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
      return present(db, tag, await hiddenSpaces(db, actor));
    },

    async links(label: string, actor: Actor) {
      const hidden = await hiddenSpaces(db, actor);
      const tag = await requireVisibleTag(db, label, hidden);
      return linkLabels(db, tag.id, hidden);
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

/** The labels a tag links to (those the caller may see, when `hidden` spaces are given). */
async function linkLabels(db: Executor<ContentSchema>, tagId: string, hidden: readonly number[] = []) {
  let query = db
    .selectFrom('tag_links')
    .innerJoin('tags', 'tags.id', 'tag_links.linked_tag_id')
    .select('tags.label')
    .where('tag_links.tag_id', '=', tagId);
  if (hidden.length) query = query.where(visibleTag(hidden));
  const rows = await query.orderBy(sql`lower(tags.label)`).orderBy('tags.label').execute();
  return rows.map((r) => r.label);
}

/** The tag with the number of published, live questions that carry it and that the caller may read (none of the `hidden` spaces). */
async function present(db: Executor<ContentSchema>, tag: TagRow, hidden: readonly number[]) {
  let query = db
    .selectFrom('question_tags')
    .innerJoin('questions as q', 'q.id', 'question_tags.question_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('question_tags.tag_id', '=', tag.id)
    .where('q.is_published', '=', true)
    .where('q.is_deleted', '=', false);
  if (hidden.length) query = query.where(outside(hidden));
  const { count } = await query.executeTakeFirstOrThrow();
  return { label: tag.label, excluded_from_suggestions: tag.excluded_from_suggestions, image: null, question_count: count };
}

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
