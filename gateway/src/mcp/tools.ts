import { AppError, DescriptionBody, operations } from '@kn/contracts';
import { escapeHtml } from '@kn/service';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Invoke } from './invoke.ts';
import { clip, nextCursor, offsetOf, plainText } from './text.ts';

/*
 * The tools: each one existing operations of the API done as the caller (invoke.ts), with input
 * schemas taken from the operations' own (packages/contracts), so that a tool accepts what the
 * REST request accepts. Results are text for the model and the same facts as structuredContent.
 */

/** How much of a text a result shows: enough to judge and cite, little enough for a model's context. */
export const LIMITS = { excerpt: 300, description: 4000, solution: 2000, comment: 500, solutions: 10, comments: 20 } as const;

export interface ToolContext {
  invoke: Invoke;
  /** What a failure that is not the caller's becomes (logged with an id). */
  internal: (err: unknown) => AppError;
  /** The web app's address of a path (`/questions/12`). */
  link: (path: string) => string;
  now: () => Date;
}

const listQuery = operations.listQuestions.query.shape;
const similarQuery = operations.similarToText.query.shape;
const description = DescriptionBody.shape.description.describe('plain text (paragraphs separated by blank lines) or HTML');
const paging = (max: number) => ({
  limit: z.number().int().min(1).max(max).default(10).describe(`results per page, at most ${max}`),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
});
const READ = { readOnlyHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

type Question = {
  id: number;
  title: string;
  description: string | null;
  solution_count: number;
  concepts: Array<{ primary_label: string }>;
};
type Solution =
  (typeof operations.getCompleteQuestion)['response'] extends z.ZodType<infer T>
    ? T extends { solutions: Array<infer S> }
      ? S
      : never
    : never;

/** Plain text from an assistant becomes paragraphs of HTML (what the web app's editor sends); HTML stays as it is. */
export const toHtml = (text: string) =>
  /<[a-z][^>]*>/i.test(text)
    ? text
    : text
        .split(/\n\s*\n/)
        .map((p) => `<p>${escapeHtml(p.trim()).replace(/\n/g, '<br>')}</p>`)
        .join('');

const userId = (path: string) => Number(path.split('/').pop());

export function registerTools(server: McpServer, ctx: ToolContext) {
  const { invoke, link } = ctx;
  // Every tool answers a failed operation as a tool error naming its code (the SDK would pass on the bare message).
  const register = ((name: string, config: never, cb: (...args: never[]) => Promise<CallToolResult>) =>
    server.registerTool(name, config, (async (...args: never[]) => {
      try {
        return await cb(...args);
      } catch (err) {
        return toolError(err instanceof AppError ? err : ctx.internal(err));
      }
    }) as never)) as McpServer['registerTool'];
  const summary = (q: Question) => ({
    id: q.id,
    title: q.title,
    link: link(`/questions/${q.id}`),
    solution_count: q.solution_count,
    tags: q.concepts.map((c) => c.primary_label),
    excerpt: clip(plainText(q.description), LIMITS.excerpt),
  });
  const listed = (items: ReturnType<typeof summary>[]) =>
    items.map(
      (q) =>
        `#${q.id} ${q.title}\n${q.link}\n${q.solution_count} solution(s)${q.tags.length ? ` · tags: ${q.tags.join(', ')}` : ''}${q.excerpt ? `\n${q.excerpt}` : ''}`,
    );
  const page = async (
    run: (offset: number) => Promise<{ total: number; items: Question[] }>,
    cursor: string | undefined,
    empty: string,
  ) => {
    const offset = offsetOf(cursor);
    const { total, items } = await run(offset);
    const questions = items.map(summary);
    const next_cursor = nextCursor(offset, items.length, total);
    const head = questions.length ? `${total} question(s); ${offset + 1}–${offset + questions.length} shown.` : empty;
    return result([head, ...listed(questions), next_cursor ? `More: pass cursor "${next_cursor}".` : ''], {
      total,
      next_cursor,
      questions,
    });
  };
  const solutionOf = (s: Solution, max: number) => ({
    id: s.id,
    text: clip(plainText(s.description), max),
    rating: s.rating,
    rating_count: s.rating_count,
    upvote_count: s.upvote_count,
    accepted: s.accepted_by_question_poser !== null,
    expires: s.expires,
    expired: s.expires !== null && Date.parse(s.expires) <= ctx.now().getTime(),
    author_id: userId(s.user),
  });
  const solutionLine = (s: ReturnType<typeof solutionOf>) =>
    `Solution #${s.id}${s.accepted ? ' (accepted)' : ''} · rating ${s.rating ?? 'none'} (${s.rating_count}) · ${s.expired ? `EXPIRED since ${s.expires}` : s.expires ? `valid until ${s.expires}` : 'valid'}\n${s.text}`;
  /** The best published solutions first: accepted, then by rating, then by upvotes. */
  const best = (solutions: Solution[]) =>
    solutions
      .filter((s) => s.is_published && !s.is_deleted)
      .sort(
        (a, b) =>
          Number(b.accepted_by_question_poser !== null) - Number(a.accepted_by_question_poser !== null) ||
          (b.rating ?? 0) - (a.rating ?? 0) ||
          b.upvote_count - a.upvote_count,
      );

  register(
    'search_questions',
    {
      title: 'Search questions',
      description:
        "Full-text search of the network's published questions (those the caller may see), with filters; best matches first. Each result has its link in the web app.",
      inputSchema: {
        query: listQuery.query.describe('words to search for; omit to list the latest questions'),
        filter: listQuery.filter.describe(
          'comma-separated: solved, unsolved, my-questions, my-solutions, following, trending, accepted, verified',
        ),
        tags: listQuery.tags.describe('comma-separated tag labels'),
        tag_filter_default_operator: listQuery.tag_filter_default_operator.describe('AND: every tag; OR: any'),
        sort: listQuery.sort,
        knowledge_space: listQuery.knowledge_space.describe('only this knowledge space (id)'),
        language_id: listQuery.language_id.describe('comma-separated two-letter language codes'),
        ...paging(25),
      },
      annotations: READ,
    },
    ({ cursor, limit, ...filters }) =>
      page(
        (offset) => invoke('listQuestions', { query: { ...operations.listQuestions.query.parse({}), ...filters, limit, offset } }),
        cursor,
        'No question matches.',
      ),
  );

  register(
    'similar_questions',
    {
      title: 'Similar questions',
      description:
        'Published questions like a text (a draft question, say): the most similar first, with links. Use before asking a new question.',
      inputSchema: { text: similarQuery.query.describe('the text to compare with, up to 10,000 characters'), ...paging(25) },
      annotations: READ,
    },
    ({ text, limit, cursor }) =>
      page((offset) => invoke('similarToText', { query: { query: text, limit, offset } }), cursor, 'No similar question.'),
  );

  register(
    'get_question',
    {
      title: 'Get a question',
      description: 'A question with its solutions (best first, each with rating and validity) and comments, as text, with its link.',
      inputSchema: operations.getCompleteQuestion.params.shape,
      annotations: READ,
    },
    async ({ id }) => {
      const q = await invoke('getCompleteQuestion', { params: { id } });
      return questionResult(q);
    },
  );

  register(
    'answer_from_knowledge',
    {
      title: 'Answer from the knowledge of the network',
      description:
        'For a question in words: the best solutions of the most similar published questions, each with its question, link, validity (expired or not) and rating, to answer from and cite.',
      inputSchema: {
        text: similarQuery.query.describe('the question to answer, up to 10,000 characters'),
        questions: z.number().int().min(1).max(5).default(3).describe('how many similar questions to draw from'),
      },
      annotations: READ,
    },
    async ({ text, questions }) => {
      const similar = await invoke('similarToText', { query: { query: text, limit: questions, offset: 0 } });
      const complete = await Promise.all(similar.items.map((q) => invoke('getCompleteQuestion', { params: { id: q.id } })));
      const sources = complete.map((q, i) => ({
        question: {
          id: q.id,
          title: q.title,
          link: link(`/questions/${q.id}`),
          similarity: similar.items[i]!.search_metadata?.score ?? null,
        },
        solutions: best(q.solutions)
          .slice(0, 2)
          .map((s) => solutionOf(s, LIMITS.solution)),
      }));
      const lines = sources.flatMap(({ question: q, solutions }) => [
        `Question #${q.id}: ${q.title}\n${q.link}${q.similarity === null ? '' : ` (similarity ${q.similarity.toFixed(2)})`}`,
        ...(solutions.length ? solutions.map(solutionLine) : ['No solution yet.']),
      ]);
      return result(lines.length ? lines : ['The network has no similar question: consider asking it (draft_question).'], { sources });
    },
  );

  register(
    'find_experts',
    {
      title: 'Find experts',
      description:
        'People who know about what a text is about, best first, with the reasons: their tags and similar questions they answered.',
      inputSchema: {
        query: operations.findExperts.body.shape.query.describe('what the expertise is about'),
        limit: operations.findExperts.body.shape.limit,
      },
      annotations: READ,
    },
    async (body) => {
      const found = await invoke('findExperts', { body });
      const experts = found.experts.map(({ user, details }) => ({
        id: user.id,
        name: `${user.firstname} ${user.lastname}`.trim(),
        solution_count: details.solution_count,
        average_rating: details.average_rating,
        tags: details.reasons.tags.map((t) => t.label),
        similar_questions: details.reasons.similar_questions.map((q) => ({ id: q.id, title: q.title, link: link(`/questions/${q.id}`) })),
      }));
      const lines = experts.map(
        (e) =>
          `${e.name} (user id ${e.id}): ${e.solution_count} solution(s), average rating ${e.average_rating ?? 'none'}${e.tags.length ? `; tags: ${e.tags.join(', ')}` : ''}${e.similar_questions.map((q) => `\n  answered #${q.id} ${q.title} ${q.link}`).join('')}`,
      );
      return result([experts.length ? `Tags used: ${found.tags.join(', ')}` : 'Nobody found: no existing tag fits the text.', ...lines], {
        tags: found.tags,
        experts,
      });
    },
  );

  const create = operations.createQuestion.body.shape;
  register(
    'draft_question',
    {
      title: 'Draft a question',
      description:
        'Creates a draft question of the caller (visible to them only) and answers its id and link; publish_question then sends it to the experts.',
      inputSchema: {
        title: create.title.describe('the question in one line, 10 to 100 characters to publish'),
        description: create.description.describe('details: plain text (paragraphs separated by blank lines) or HTML'),
        tags: create.tags,
        language: create.language,
        knowledge_space: create.knowledge_space.describe('the knowledge space (id) it belongs to; omit for the open network'),
      },
      annotations: WRITE,
    },
    async ({ description: text, ...fields }) => {
      const q = await invoke('createQuestion', { body: { ...fields, ...(typeof text === 'string' ? { description: toHtml(text) } : {}) } });
      const url = link(`/questions/${q.id}`);
      return result([`Draft #${q.id} created: ${url}`, 'Call publish_question with its id to publish it.'], { id: q.id, link: url });
    },
  );

  register(
    'publish_question',
    {
      title: 'Publish a question',
      description:
        "Publishes one of the caller's draft questions: the network sends it to its experts; answers how many were asked and who.",
      inputSchema: operations.publishQuestion.params.shape,
      annotations: WRITE,
    },
    async ({ id }) => {
      const { number_of_experts } = await invoke('publishQuestion', { params: { id } });
      // Who: the experts of the question in the order routing ranked them, as the web app shows them.
      const experts =
        number_of_experts > 0
          ? (await invoke('getQuestionExperts', { params: { id }, query: { limit: Math.min(number_of_experts, 100) } })).items.map((e) => ({
              id: e.user.id,
              name: `${e.user.firstname} ${e.user.lastname}`.trim(),
            }))
          : [];
      const url = link(`/questions/${id}`);
      return result(
        [
          `Question #${id} is published: ${url}`,
          `${number_of_experts} expert(s) asked${experts.length ? `: ${experts.map((e) => e.name).join(', ')}` : '.'}`,
        ],
        { id, link: url, number_of_experts, experts },
      );
    },
  );

  register(
    'add_solution',
    {
      title: 'Add a solution',
      description: "Publishes a solution to a published question as the caller (replacing the caller's unpublished draft for it, if any).",
      inputSchema: { question_id: operations.createSolution.params.shape.id, description },
      annotations: WRITE,
    },
    async ({ question_id, description: text }) => {
      const draft = await invoke('createSolution', { params: { id: question_id }, body: { description: toHtml(text) } });
      const s = await invoke('publishSolution', { params: { id: draft.id } });
      const url = link(`/questions/${question_id}#solution-${s.id}`);
      return result([`Solution #${s.id} published: ${url}`], { id: s.id, question_id, link: url });
    },
  );

  register(
    'add_comment',
    {
      title: 'Add a comment',
      description: 'Comments on a published question or on one of its solutions, as the caller.',
      inputSchema: {
        on: z.enum(['question', 'solution']).describe('what the comment is on'),
        id: operations.createQuestionComment.params.shape.id.describe('the id of the question or of the solution'),
        description,
      },
      annotations: WRITE,
    },
    async ({ on, id, description: text }) => {
      const body = { description: toHtml(text) };
      const c = await invoke(on === 'question' ? 'createQuestionComment' : 'createSolutionComment', { params: { id }, body });
      const url = link(`/questions/${c.question_id}#comment-${c.id}`);
      return result([`Comment #${c.id} added: ${url}`], { id: c.id, question_id: c.question_id, link: url });
    },
  );

  const forward = operations.forwardQuestion;
  register(
    'forward_question',
    {
      title: 'Forward a question',
      description: 'Recommends a published question to a person who might answer it (a user id, from find_experts say); they are notified.',
      inputSchema: {
        question_id: forward.params.shape.id,
        recipient: forward.body.shape.recipient.unwrap().describe('the user id of the person'),
        message: forward.body.shape.message.describe('a note to them'),
      },
      annotations: WRITE,
    },
    async ({ question_id, recipient, message }) => {
      await invoke('forwardQuestion', { params: { id: question_id }, body: { recipient, message } });
      return result([`Question #${question_id} forwarded to user ${recipient}.`], { question_id, recipient });
    },
  );

  const notifications = operations.listNotifications.query.shape;
  register(
    'list_notifications',
    {
      title: 'List notifications',
      description: "The caller's notifications, newest first: what happened, on which question (with its link), read or not.",
      inputSchema: { ignore_read: notifications.ignore_read.describe('true: unread ones only'), ...paging(50) },
      annotations: READ,
    },
    async ({ ignore_read, limit, cursor }) => {
      const offset = offsetOf(cursor);
      const { total, items } = await invoke('listNotifications', { query: { ignore_read, limit, offset } });
      const list = items.map((n) => ({
        id: n.id,
        type: n.type,
        text: clip(plainText(n.content), LIMITS.excerpt),
        question_id: n.question_id,
        link: link(n.url),
        is_read: n.is_read,
        created: n.created,
      }));
      const next_cursor = nextCursor(offset, items.length, total);
      return result(
        [
          list.length ? `${total} notification(s).` : 'No notifications.',
          ...list.map((n) => `#${n.id} ${n.is_read ? '' : '[unread] '}${n.created} ${n.text}\n${n.link}`),
          next_cursor ? `More: pass cursor "${next_cursor}".` : '',
        ],
        { total, next_cursor, notifications: list },
      );
    },
  );

  register(
    'mark_notifications_read',
    {
      title: 'Mark notifications read',
      description: "Marks one of the caller's notifications read (id), or all of them (no id).",
      inputSchema: { id: operations.markNotificationRead.params.shape.id.optional().describe('the notification; omit for all') },
      annotations: { ...WRITE, idempotentHint: true },
    },
    async ({ id }) => {
      if (id !== undefined) {
        await invoke('markNotificationRead', { params: { id }, query: {} });
        return result([`Notification #${id} is read.`], { updated: 1 });
      }
      const { updated } = await invoke('markAllNotificationsRead', { query: {} });
      return result([`${updated} notification(s) marked read.`], { updated });
    },
  );

  /** A question as text: what get_question answers and the question resource holds. */
  function questionText(q: Awaited<ReturnType<typeof fetchQuestion>>) {
    const published = best(q.solutions);
    const live = q.comments.filter((c) => !c.is_deleted);
    const solutions = published.slice(0, LIMITS.solutions).map((s) => solutionOf(s, LIMITS.solution));
    const comments = live
      .slice(0, LIMITS.comments)
      .map((c) => ({ id: c.id, solution_id: c.solution_id, text: clip(plainText(c.description), LIMITS.comment) }));
    // The model is told what the bound left out, and where the rest is, rather than taking a part for the whole.
    const counted = (shown: number, all: number, which: string) =>
      shown < all ? `${shown} of ${all}: ${which}; all at the link` : `${shown}`;
    const facts = {
      id: q.id,
      title: q.title,
      link: link(`/questions/${q.id}`),
      is_published: q.is_published,
      language: q.language,
      tags: q.concepts.map((c) => c.primary_label),
      description: clip(plainText(q.description), LIMITS.description),
      solution_count: q.solution_count,
      solutions,
      solutions_total: published.length,
      comments,
      comments_total: live.length,
    };
    const text = [
      `# ${q.title}`,
      facts.link,
      facts.tags.length ? `Tags: ${facts.tags.join(', ')}` : '',
      facts.description,
      `## Solutions (${counted(solutions.length, published.length, 'the best')})`,
      ...solutions.map(solutionLine),
      comments.length ? `## Comments (${counted(comments.length, live.length, 'the first')})` : '',
      ...comments.map((c) => `Comment #${c.id}${c.solution_id ? ` on solution #${c.solution_id}` : ''}: ${c.text}`),
    ];
    return { text: text.filter(Boolean).join('\n\n'), facts };
  }
  const fetchQuestion = (id: number) => invoke('getCompleteQuestion', { params: { id } });
  function questionResult(q: Awaited<ReturnType<typeof fetchQuestion>>): CallToolResult {
    const { text, facts } = questionText(q);
    return { content: [{ type: 'text', text }], structuredContent: facts };
  }
  return { fetchQuestion, questionText };
}

/** A tool's answer: the lines as text, the facts as structured content. */
function result(lines: string[], facts: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: lines.filter(Boolean).join('\n\n') }], structuredContent: facts };
}

/** A failed operation as a tool's error: its code and message, so that the model can correct itself. */
export function toolError(err: AppError): CallToolResult {
  const fields = err.errors?.length ? ` (${err.errors.map((e) => `${e.path}: ${e.message}`).join('; ')})` : '';
  return { content: [{ type: 'text', text: `${err.code}: ${err.message}${fields}` }], isError: true };
}
