import { type exportsSourceOperations, notFound, type SourceQuestion, validationError } from '@kn/contracts';
import { sql } from '@kn/db';
import type { z } from 'zod';
import type { ContentDeps } from '../handlers/deps.ts';
import { tagsOf } from './question-presenters.ts';
import { iso, isoOrNull } from './solutions-common.ts';

type PageRequest = z.output<typeof exportsSourceOperations.exportSourcePage.body>;
type TextRequest = z.output<typeof exportsSourceOperations.exportSourceText.body>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const cut = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);

/**
 * What the exports service reads of content (packages/contracts/src/exports-source.ts): keyset
 * pages of published questions with everything an export writes, and slices of long texts. The
 * exports service asks, it never reads this schema itself.
 */
export function exportsSourceDomain(deps: ContentDeps) {
  const { db, bus } = deps;

  return {
    async page(body: PageRequest) {
      let query = db
        .selectFrom('questions as q')
        .leftJoin('categories as c', 'c.id', 'q.category_id')
        .select([
          'q.id',
          'q.author_id',
          'q.language',
          'q.title',
          'q.description',
          'q.published',
          'q.created',
          'q.updated',
          'q.is_deleted',
          'q.view_count',
          'q.upvote_count',
          'c.id as category_id',
          'c.name as category_name',
        ])
        .where('q.is_published', '=', true)
        .where('q.id', '>', body.after)
        .orderBy('q.id')
        .limit(body.limit);
      if (!body.include_deleted) query = query.where('q.is_deleted', '=', false);
      if (body.topics) {
        const ids = body.topics.map((t) => t.global_concept_id).filter((id) => UUID.test(id));
        const labels = body.topics.map((t) => t.label.toLowerCase());
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('question_tags as qt')
              .innerJoin('tags as t', 't.id', 'qt.tag_id')
              .select(sql`1`.as('one'))
              .whereRef('qt.question_id', '=', 'q.id')
              .where((eb) =>
                eb.or([
                  ...(ids.length ? [eb('t.id', 'in', ids)] : []),
                  eb(sql<string>`lower(t.label)`, 'in', labels.length ? labels : ['']),
                ]),
              ),
          ),
        );
      }
      const rows = await query.execute();
      if (rows.length === 0) return { questions: [], users: [], next_after: null };
      const questionIds = rows.map((r) => r.id);

      const [tags, solutions, comments] = await Promise.all([
        tagsOf(db, questionIds),
        (() => {
          let q = db
            .selectFrom('solutions')
            .selectAll()
            .where('question_id', 'in', questionIds)
            .where('is_published', '=', true)
            .orderBy('question_id')
            .orderBy('id');
          if (!body.include_deleted) q = q.where('is_deleted', '=', false);
          return q.execute();
        })(),
        (() => {
          if (!body.include_comments) return Promise.resolve([]);
          let q = db.selectFrom('comments').selectAll().where('question_id', 'in', questionIds).orderBy('question_id').orderBy('id');
          if (!body.include_deleted) q = q.where('is_deleted', '=', false);
          return q.execute();
        })(),
      ]);

      const byQuestion = <T extends { question_id: number }>(items: T[]) => {
        const map = new Map<number, T[]>();
        for (const item of items) {
          const list = map.get(item.question_id);
          if (list) list.push(item);
          else map.set(item.question_id, [item]);
        }
        return map;
      };
      const solutionsOf = byQuestion(solutions);
      const commentsOf = byQuestion(comments);
      // A deleted solution's comments go with it.
      const liveSolutionIds = new Set(solutions.map((s) => s.id));

      const present = (row: (typeof rows)[number], inline: number): SourceQuestion => ({
        id: row.id,
        author_id: row.author_id,
        language: row.language,
        title: row.title,
        description: row.description === null ? null : cut(row.description, inline),
        description_length: row.description?.length ?? 0,
        published: isoOrNull(row.published),
        created: iso(row.created),
        updated: iso(row.updated),
        is_deleted: row.is_deleted,
        view_count: row.view_count,
        upvote_count: row.upvote_count,
        category: row.category_id === null ? null : { id: row.category_id, name: row.category_name ?? '' },
        tags: tags.get(row.id) ?? [],
        solutions: (solutionsOf.get(row.id) ?? []).map((s) => ({
          id: s.id,
          author_id: s.author_id,
          language: s.language,
          description: cut(s.description, inline),
          description_length: s.description.length,
          is_deleted: s.is_deleted,
          published: isoOrNull(s.published),
          created: iso(s.created),
          updated: iso(s.updated),
          rating: s.rating === null ? null : Number(s.rating),
          rating_count: s.rating_count,
          upvote_count: s.upvote_count,
          accepted_by_question_poser: isoOrNull(s.accepted_by_question_poser),
          validity_period: s.validity_period,
          expires: isoOrNull(s.expires),
        })),
        comments: (commentsOf.get(row.id) ?? [])
          .filter((c) => c.solution_id === null || liveSolutionIds.has(c.solution_id))
          .map((c) => ({
            id: c.id,
            solution_id: c.solution_id,
            author_id: c.author_id,
            description: cut(c.description, inline),
            description_length: c.description.length,
            upvote_count: c.upvote_count,
            is_deleted: c.is_deleted,
            created: iso(c.created),
            updated: iso(c.updated),
          })),
      });

      // The reply must fit into one NATS message: stop at the size budget (the first question
      // always goes, with its texts cut to nothing if it alone is too large).
      const maxPayload = bus.nc.info?.max_payload ?? 1024 * 1024;
      const budget = Math.min(body.max_bytes, Math.floor(maxPayload / 2));
      const questions: SourceQuestion[] = [];
      let bytes = 0;
      for (const row of rows) {
        let question = present(row, body.inline_chars);
        let size = Buffer.byteLength(JSON.stringify(question));
        if (questions.length === 0 && size > budget) {
          question = present(row, 0);
          size = Buffer.byteLength(JSON.stringify(question));
          if (size > maxPayload - 10_000)
            throw validationError(`question ${row.id} has too many solutions and comments to be sent in one message`);
        } else if (questions.length > 0 && bytes + size > budget) break;
        questions.push(question);
        bytes += size;
      }

      const authorIds = new Set<number>();
      for (const q of questions) {
        authorIds.add(q.author_id);
        for (const s of q.solutions) authorIds.add(s.author_id);
        for (const c of q.comments) authorIds.add(c.author_id);
      }
      const users = await db
        .selectFrom('user_projection')
        .select(['id', 'firstname', 'lastname', 'is_deleted'])
        .where('id', 'in', [...authorIds])
        .orderBy('id')
        .execute();
      const last = questions[questions.length - 1]!.id;
      // Fewer rows than asked for, all of them sent: nothing after them.
      const done = rows.length < body.limit && questions.length === rows.length;
      return { questions, users, next_after: done ? null : last };
    },

    async text(body: TextRequest) {
      let text: string | null | undefined;
      if (body.kind === 'question')
        text = (await db.selectFrom('questions').select('description').where('id', '=', body.id).executeTakeFirst())?.description;
      else if (body.kind === 'solution')
        text = (await db.selectFrom('solutions').select('description').where('id', '=', body.id).executeTakeFirst())?.description;
      else text = (await db.selectFrom('comments').select('description').where('id', '=', body.id).executeTakeFirst())?.description;
      if (text === undefined) throw notFound(body.kind);
      const whole = text ?? '';
      return { text: whole.slice(body.offset, body.offset + body.length), length: whole.length };
    },
  };
}
