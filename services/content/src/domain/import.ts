import { writeEvent } from '@kn/bus';
import { type Actor, AppError, type EventSolution, type ImportedQuestion, type QuestionLink, type QuestionLinkKind } from '@kn/contracts';
import { json, sql, type Tx } from '@kn/db';
import type { ContentSchema } from '../db/schema.ts';
import type { CommentRow, SolutionRow } from '../db/solutions-tables.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { visibleQuestion } from './access.ts';
import type { Sanitized } from './html.ts';
import { tagsOf, toQuestionSnapshot } from './question-presenters.ts';
import { slugify } from './slug.ts';
import { eventComment, eventSolution } from './solutions-common.ts';
import { distinctLabels } from './tags.ts';

/*
 * Imports of content written elsewhere (docs/import.md). Each batch is one transaction: a batch is
 * imported whole or not at all, so an interrupted import resumes by sending the batch again.
 * Rows are matched by external_id; what exists is skipped, never updated.
 */

type Counts = { created: number; skipped: number };
const counts = (): Counts => ({ created: 0, skipped: 0 });

/** Upvotes count as 5 stars and downvotes as 1 star: the rating is the average, votes its count. */
export function ratingOf(up: number, down: number): { rating: number | null; rating_count: number } {
  const n = up + down;
  return { rating: n === 0 ? null : (5 * up + down) / n, rating_count: n };
}

/** Postgres allows 65,535 parameters per statement: inserts of many rows go in slices. */
function slices<T>(items: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const tagSnapshot = (t: { id: string; label: string; excluded_from_suggestions: boolean }) => ({
  id: t.id,
  label: t.label,
  excluded_from_suggestions: t.excluded_from_suggestions,
});

/** Tags of these labels (case-insensitive), creating the missing ones with their event. */
async function ensureTagsBulk(tx: Tx<ContentSchema>, labels: string[]) {
  const wanted = distinctLabels(labels);
  const byLower = new Map<string, { id: string; label: string }>();
  if (wanted.length === 0) return { byLower, created: 0 };
  const inserted = await tx
    .insertInto('tags')
    .values(wanted.map((label) => ({ label })))
    .onConflict((c) => c.doNothing())
    .returningAll()
    .execute();
  for (const tag of inserted) await writeEvent(tx, 'content.tag.created.v1', { tag: tagSnapshot(tag) }, { actorId: null });
  const rows = await tx
    .selectFrom('tags')
    .select(['id', 'label'])
    .where(
      sql`lower(label)`,
      'in',
      wanted.map((l) => l.toLowerCase()),
    )
    .execute();
  for (const r of rows) byLower.set(r.label.toLowerCase(), r);
  return { byLower, created: inserted.length };
}

const date = (s: string | null | undefined) => (s ? new Date(s) : null);

/** Refusals of a description past a limit: the row is reported and skipped, the import goes on. */
const isRefusal = (err: unknown): err is AppError =>
  err instanceof AppError && (err.code === 'ContentTooComplex' || err.code === 'ContentTooLarge');

export function importDomain(deps: ContentDeps) {
  const { db, text } = deps;

  /**
   * The sanitized descriptions of rows, by external id; a row whose description passes a limit is
   * left out and named in `refused`.
   */
  async function sanitizeRows<R extends { external_id: string; description: string }>(
    rows: R[],
    refused: Array<{ external_id: string; reason: string }>,
  ) {
    const clean = new Map<string, Sanitized>();
    for (const row of rows)
      try {
        clean.set(row.external_id, await text.sanitize(row.description));
      } catch (err) {
        if (!isRefusal(err)) throw err;
        refused.push({ external_id: row.external_id, reason: err.errors?.[0]?.message ?? err.message });
      }
    return clean;
  }

  async function listQuestionLinks(query: {
    kind?: QuestionLinkKind;
    question_id?: number;
    limit: number;
    offset: number;
    onlyPublished?: boolean;
  }) {
    let base = db
      .selectFrom('question_links as l')
      .innerJoin('questions as q', 'q.id', 'l.question_id')
      .innerJoin('questions as lq', 'lq.id', 'l.linked_question_id');
    if (query.kind) base = base.where('l.kind', '=', query.kind);
    // Through the API: links to questions a reader can open (imported questions have no knowledge space).
    if (query.onlyPublished)
      for (const q of ['q', 'lq'] as const)
        base = base.where(`${q}.is_published`, '=', true).where(`${q}.is_deleted`, '=', false).where(`${q}.knowledge_space_id`, 'is', null);
    if (query.question_id !== undefined) {
      const id = query.question_id;
      base = base.where((eb) => eb.or([eb('l.question_id', '=', id), eb('l.linked_question_id', '=', id)]));
    }
    const [{ total }] = await base.select((eb) => eb.fn.countAll<string>().as('total')).execute();
    const rows = await base
      .select([
        'l.question_id',
        'l.linked_question_id',
        'l.kind',
        'l.created',
        'q.external_id as question_external_id',
        'lq.external_id as linked_external_id',
      ])
      .orderBy('l.created')
      .orderBy('l.question_id')
      .orderBy('l.linked_question_id')
      .limit(query.limit)
      .offset(query.offset)
      .execute();
    const items: QuestionLink[] = rows.map((r) => ({ ...r, created: r.created.toISOString() }));
    return { total: Number(total), items };
  }

  return {
    async importTags(labels: string[]): Promise<Counts> {
      return db.transaction().execute(async (tx) => {
        const wanted = distinctLabels(labels);
        const { created } = await ensureTagsBulk(tx, wanted);
        return { created, skipped: wanted.length - created };
      });
    },

    async importQuestions(input: ImportedQuestion[]) {
      return db.transaction().execute(async (tx) => {
        const batch = [...new Map(input.map((q) => [q.external_id, q])).values()];
        const result = {
          ids: {} as Record<string, number>,
          questions: counts(),
          solutions: counts(),
          comments: counts(),
          refused: [] as Array<{ external_id: string; reason: string }>,
        };
        const { byLower: tags } = await ensureTagsBulk(
          tx,
          batch.flatMap((q) => q.tags),
        );

        // Questions.
        const known = await tx
          .selectFrom('questions')
          .select(['id', 'external_id'])
          .where(
            'external_id',
            'in',
            batch.map((q) => q.external_id),
          )
          .execute();
        for (const r of known) result.ids[r.external_id!] = r.id;
        const unknown = batch.filter((q) => result.ids[q.external_id] === undefined);
        result.questions.skipped = batch.length - unknown.length;
        const questionHtml = await sanitizeRows(unknown, result.refused);
        const fresh = unknown.filter((q) => questionHtml.has(q.external_id));
        const touched = new Set<number>();
        for (const slice of slices(fresh, 200)) {
          const rows = await tx
            .insertInto('questions')
            .values(
              slice.map((q) => {
                const html = questionHtml.get(q.external_id)!;
                const created = new Date(q.created);
                const updated = date(q.updated) ?? created;
                return {
                  external_id: q.external_id,
                  author_id: q.author_id,
                  is_published: true,
                  published: created,
                  language: q.language,
                  title: q.title,
                  slug: slugify(q.title),
                  description: html.html,
                  description_text: html.text,
                  // Mentions are ids of this network: the source's markup has none.
                  mentions: [],
                  category_id: null,
                  knowledge_space_id: null,
                  view_count: q.view_count,
                  upvote_count: q.upvote_count,
                  translations: json([]),
                  created,
                  updated,
                  content_updated: updated,
                  last_activity: date(q.last_activity) ?? updated,
                };
              }),
            )
            .onConflict((c) => c.column('external_id').doNothing())
            .returning(['id', 'external_id'])
            .execute();
          for (const r of rows) {
            result.ids[r.external_id!] = r.id;
            touched.add(r.id);
          }
          result.questions.created += rows.length;
        }
        const tagRows = fresh.flatMap((q) => {
          const labels = distinctLabels(q.tags);
          return labels.flatMap((label, position) => {
            const tag = tags.get(label.toLowerCase());
            return tag ? [{ question_id: result.ids[q.external_id], tag_id: tag.id, position }] : [];
          });
        });
        for (const slice of slices(tagRows, 1000))
          await tx
            .insertInto('question_tags')
            .values(slice)
            .onConflict((c) => c.doNothing())
            .execute();

        // Solutions, of new and of already imported questions (a newer dump may have more).
        const solutionIds = new Map<string, number>();
        // Those of a refused question are not imported (nor counted).
        const imported = batch.filter((q) => result.ids[q.external_id] !== undefined);
        const allSolutions = imported.flatMap((q) =>
          q.solutions.map((s) => ({ ...s, question_id: result.ids[q.external_id]!, language: q.language })),
        );
        if (allSolutions.length) {
          for (const slice of slices(
            allSolutions.map((s) => s.external_id),
            1000,
          )) {
            const rows = await tx.selectFrom('solutions').select(['id', 'external_id']).where('external_id', 'in', slice).execute();
            for (const r of rows) solutionIds.set(r.external_id!, r.id);
          }
        }
        const unknownSolutions = [
          ...new Map(allSolutions.filter((s) => !solutionIds.has(s.external_id)).map((s) => [s.external_id, s])).values(),
        ];
        result.solutions.skipped = allSolutions.length - unknownSolutions.length;
        const solutionHtml = await sanitizeRows(unknownSolutions, result.refused);
        const newSolutions = unknownSolutions.filter((s) => solutionHtml.has(s.external_id));
        for (const slice of slices(newSolutions, 300)) {
          const rows = await tx
            .insertInto('solutions')
            .values(
              slice.map((s) => {
                const html = solutionHtml.get(s.external_id)!;
                const created = new Date(s.created);
                const updated = date(s.updated) ?? created;
                return {
                  external_id: s.external_id,
                  question_id: s.question_id,
                  author_id: s.author_id,
                  description: html.html,
                  text: html.text,
                  language: s.language,
                  is_published: true,
                  published: created,
                  ...ratingOf(s.upvote_count, s.downvote_count),
                  upvote_count: s.upvote_count,
                  accepted_by_question_poser: date(s.accepted),
                  validity_period: null,
                  expires: null,
                  deleted: null,
                  expired: null,
                  created,
                  updated,
                  content_updated: updated,
                };
              }),
            )
            .onConflict((c) => c.column('external_id').doNothing())
            .returning(['id', 'external_id', 'question_id'])
            .execute();
          for (const r of rows) {
            solutionIds.set(r.external_id!, r.id);
            touched.add(r.question_id);
          }
          result.solutions.created += rows.length;
        }

        // Comments, on the question or on one of its solutions.
        const allComments = imported.flatMap((q) =>
          q.comments.map((c) => ({ ...c, question_id: result.ids[q.external_id]!, language: q.language })),
        );
        const commentIds = new Set<string>();
        for (const slice of slices(
          allComments.map((c) => c.external_id),
          1000,
        )) {
          const rows = await tx.selectFrom('comments').select('external_id').where('external_id', 'in', slice).execute();
          for (const r of rows) commentIds.add(r.external_id!);
        }
        const unknownComments = [
          ...new Map(
            allComments
              .filter((c) => !commentIds.has(c.external_id))
              .filter((c) => c.solution_external_id === null || solutionIds.has(c.solution_external_id))
              .map((c) => [c.external_id, c]),
          ).values(),
        ];
        result.comments.skipped = allComments.length - unknownComments.length;
        const commentHtml = await sanitizeRows(unknownComments, result.refused);
        const newComments = unknownComments.filter((c) => commentHtml.has(c.external_id));
        for (const slice of slices(newComments, 300)) {
          const rows = await tx
            .insertInto('comments')
            .values(
              slice.map((c) => {
                const html = commentHtml.get(c.external_id)!;
                const created = new Date(c.created);
                return {
                  external_id: c.external_id,
                  question_id: c.question_id,
                  solution_id: c.solution_external_id === null ? null : (solutionIds.get(c.solution_external_id) ?? null),
                  author_id: c.author_id,
                  description: html.html,
                  text: html.text,
                  language: c.language,
                  upvote_count: c.upvote_count,
                  converted_solution_id: null,
                  created,
                  updated: created,
                  content_updated: created,
                };
              }),
            )
            .onConflict((c) => c.column('external_id').doNothing())
            .returning(['question_id'])
            .execute();
          for (const r of rows) touched.add(r.question_id);
          result.comments.created += rows.length;
        }

        if (touched.size === 0) return result;
        const ids = [...touched];
        await tx
          .updateTable('questions')
          .set({
            solution_count: sql<number>`(select count(*) from solutions s where s.question_id = questions.id and s.is_published and not s.is_deleted)`,
          })
          .where('id', 'in', ids)
          .execute();
        await publishImported(tx, ids);
        return result;
      });
    },

    async importTagLinks(links: Array<{ label: string; linked_label: string }>): Promise<Counts> {
      return db.transaction().execute(async (tx) => {
        const labels = distinctLabels(links.flatMap((l) => [l.label, l.linked_label]));
        const rows = await tx
          .selectFrom('tags')
          .selectAll()
          .where(
            sql`lower(label)`,
            'in',
            labels.map((l) => l.toLowerCase()),
          )
          .execute();
        const byLower = new Map(rows.map((r) => [r.label.toLowerCase(), r]));
        const pairs = new Map<string, { tag_id: string; linked_tag_id: string }>();
        let skipped = 0;
        for (const link of links) {
          const a = byLower.get(link.label.trim().toLowerCase());
          const b = byLower.get(link.linked_label.trim().toLowerCase());
          if (!a || !b || a.id === b.id) {
            skipped++;
            continue;
          }
          pairs.set(`${a.id}:${b.id}`, { tag_id: a.id, linked_tag_id: b.id });
          pairs.set(`${b.id}:${a.id}`, { tag_id: b.id, linked_tag_id: a.id });
        }
        if (pairs.size === 0) return { created: 0, skipped: links.length };
        const inserted = await tx
          .insertInto('tag_links')
          .values([...pairs.values()])
          .onConflict((c) => c.doNothing())
          .returning(['tag_id'])
          .execute();
        const changed = new Set(inserted.map((r) => r.tag_id));
        for (const tag of rows.filter((r) => changed.has(r.id))) {
          const linked = await tx
            .selectFrom('tag_links')
            .innerJoin('tags', 'tags.id', 'tag_links.linked_tag_id')
            .select('tags.label')
            .where('tag_links.tag_id', '=', tag.id)
            .orderBy(sql`lower(tags.label)`)
            .execute();
          await writeEvent(
            tx,
            'content.tag.links-updated.v1',
            { tag: tagSnapshot(tag), links: linked.map((l) => l.label) },
            { actorId: null },
          );
        }
        // A link is one pair of labels however many directions were written.
        const created = Math.min(links.length - skipped, Math.ceil(inserted.length / 2));
        return { created, skipped: links.length - created };
      });
    },

    async importQuestionLinks(links: Array<{ question_external_id: string; linked_external_id: string; kind: QuestionLinkKind }>) {
      return db.transaction().execute(async (tx) => {
        const externals = [...new Set(links.flatMap((l) => [l.question_external_id, l.linked_external_id]))];
        const rows = await tx.selectFrom('questions').select(['id', 'external_id']).where('external_id', 'in', externals).execute();
        const ids = new Map(rows.map((r) => [r.external_id!, r.id]));
        const values: Array<{ question_id: number; linked_question_id: number; kind: QuestionLinkKind }> = [];
        let unresolved = 0;
        for (const l of links) {
          const a = ids.get(l.question_external_id);
          const b = ids.get(l.linked_external_id);
          if (a === undefined || b === undefined || a === b) unresolved++;
          else values.push({ question_id: a, linked_question_id: b, kind: l.kind });
        }
        const inserted = values.length
          ? await tx
              .insertInto('question_links')
              .values(values)
              .onConflict((c) => c.doNothing())
              .returning('question_id')
              .execute()
          : [];
        return { created: inserted.length, skipped: links.length - inserted.length - unresolved, unresolved };
      });
    },

    listQuestionLinks,

    /** The links of a question the caller may see, to and from questions a reader can open. */
    async questionLinks(actor: Actor, questionId: number) {
      const question = await visibleQuestion(db, questionId, actor);
      return listQuestionLinks({ question_id: question.id, limit: 1000, offset: 0, onlyPublished: true });
    },
  };
}

/** One content.question.imported.v1 per question: the question with its solutions and comments. */
async function publishImported(tx: Tx<ContentSchema>, ids: number[]) {
  const [questions, tags, solutions, comments] = await Promise.all([
    tx.selectFrom('questions').selectAll().where('id', 'in', ids).orderBy('id').execute(),
    tagsOf(tx, ids),
    tx
      .selectFrom('solutions')
      .selectAll()
      .where('question_id', 'in', ids)
      .where('is_published', '=', true)
      .where('is_deleted', '=', false)
      .orderBy('id')
      .execute(),
    tx.selectFrom('comments').selectAll().where('question_id', 'in', ids).where('is_deleted', '=', false).orderBy('id').execute(),
  ]);
  const group = <T extends { question_id: number }>(rows: T[]) => {
    const map = new Map<number, T[]>();
    for (const r of rows) map.set(r.question_id, [...(map.get(r.question_id) ?? []), r]);
    return map;
  };
  const solutionsBy = group<SolutionRow>(solutions);
  const commentsBy = group<CommentRow>(comments);
  const authorOf = new Map(solutions.map((s) => [s.id, s.author_id]));
  for (const q of questions) {
    const eventSolutions: EventSolution[] = (solutionsBy.get(q.id) ?? []).map(eventSolution);
    await writeEvent(
      tx,
      'content.question.imported.v1',
      {
        // Imported questions have no category, no knowledge space and no followers.
        question: toQuestionSnapshot(q, { tags: tags.get(q.id) ?? [], category: null, knowledgeSpace: null, followers: [] }),
        solutions: eventSolutions,
        comments: (commentsBy.get(q.id) ?? []).map((c) =>
          eventComment(c, c.solution_id === null ? null : (authorOf.get(c.solution_id) ?? null)),
        ),
        external_id: q.external_id ?? '',
      },
      { actorId: null },
    );
  }
}
