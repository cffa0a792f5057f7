import { z } from 'zod';
import { descriptionAnswers } from './answers.ts';
import { Category } from './categories.ts';
import { Id, Language, Limit, Offset, Page, QueryBoolean, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { TagLabel } from './tags.ts';
import { caseless, commaList, enumList, patternRegex, positiveDecimal, trimmedItem, trimmedPattern, trimmedText } from './text.ts';

export const Concept = z
  .object({
    concept_id: z.string().describe('the tag uuid'),
    primary_label: z.string(),
    label_match: z.string(),
    language: z.string(),
    description: z.null(),
    ontology_id: z.null(),
    is_flat: z.literal(true),
  })
  .meta({ id: 'Concept' });

/** The fields a question is searched in, in the order the search index keeps them. */
export const SearchFieldNames = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const;
export const SearchField = z.enum(SearchFieldNames);
export type SearchField = z.infer<typeof SearchField>;

export const QuestionTranslation = z.object({ language: z.string(), title: z.string(), description: z.string().nullable() });

/** On each item of `GET /questions` when `query` is given (interface: Search metadata). */
export const SearchHighlighting = z
  .object({
    query_field: SearchField,
    id: z
      .number()
      .int()
      .describe('the question for title, description and tags; the best matching solution, comment or attachment otherwise'),
    fragment: z.string().describe('matched words in <em>, everything else HTML-encoded; the whole title for title'),
    start: z.boolean().describe('the fragment starts at the beginning of the text'),
    end: z.boolean().describe('the fragment ends at the end of the text'),
  })
  .meta({ id: 'SearchHighlighting' });
export const SearchMetadata = z
  .object({
    score: z.number().positive(),
    is_relevant: z.boolean().optional().describe('absent on similar-question results'),
    highlighting: SearchHighlighting.optional(),
  })
  .meta({ id: 'SearchMetadata' });

export const Question = z
  .object({
    id: z.number().int(),
    is_published: z.boolean(),
    published: Timestamp.nullable(),
    language: z.string(),
    title: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    solution_count: z.number().int(),
    has_accepted_solution: z.boolean().describe('the poser accepted one of its published solutions (filter accepted)'),
    view_count: z.number().int(),
    upvote_count: z.number().int(),
    image: z.string().describe('deprecated; the same default image for every question'),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
    last_activity: Timestamp,
    is_deleted: z.boolean(),
    attachments: z.string().describe('path of the attachment list'),
    category: Category.nullable(),
    tag_relations: z.array(z.never()).describe('deprecated; always empty'),
    concepts: z.array(Concept),
    knowledge_space_id: z.number().int().nullable(),
    translations: z.array(QuestionTranslation).optional().describe('only in list items'),
    search_metadata: SearchMetadata.optional().describe('only on search results'),
  })
  .meta({
    id: 'Question',
    examples: [
      {
        id: 42,
        is_published: true,
        published: '2026-11-20T09:15:02.123Z',
        language: 'en',
        title: 'Which hops give a citrus aroma?',
        slug: 'which-hops-give-a-citrus-aroma',
        description: '<p>I brew a pale ale and want more citrus.</p>',
        solution_count: 1,
        has_accepted_solution: true,
        view_count: 17,
        upvote_count: 2,
        image: '/api/v1/public/images/question-default.png',
        created: '2026-11-20T09:15:02.123Z',
        updated: '2026-11-21T14:03:55.480Z',
        content_updated: '2026-11-21T14:03:55.480Z',
        last_activity: '2026-11-21T14:03:55.480Z',
        is_deleted: false,
        attachments: '/api/v1/questions/42/attachments',
        category: null,
        tag_relations: [],
        concepts: [
          {
            concept_id: '7d0c3f0e-2b7a-4a5e-9c51-2f7d1b8c9a10',
            primary_label: 'hops',
            label_match: 'hops',
            language: 'en',
            description: null,
            ontology_id: null,
            is_flat: true,
          },
        ],
        knowledge_space_id: null,
      },
    ],
  });
export type Question = z.infer<typeof Question>;

const Title = trimmedText({ max: 100 });
// Unlimited in the interface: the gateway's body limit (10 MiB of JSON) is the practical cap.
const Description = z.string();

export const QuestionFilters = [
  'solved',
  'unsolved',
  'my-questions',
  'my-solutions',
  'following',
  'flagged',
  'trending',
  'accepted',
  'verified',
] as const;
export const QuestionSortCriteria = [
  'last_activity',
  'solution_count',
  'date_published',
  'view_count',
  'views',
  'id',
  'interest',
  'activity_and_interest',
  'trending',
] as const;
const QuestionSort = commaList(
  `(?:${QuestionSortCriteria.join('|')})(?:\\.(?:asc|desc))?`,
  `criteria: ${QuestionSortCriteria.join(', ')}, with .asc or .desc`,
);
const LanguageList = commaList('[a-z]{2}', 'a two-letter language code');
const Operator = z
  .string()
  .regex(/^(?:[Aa][Nn][Dd]|[Oo][Rr])$/u, 'AND or OR, in any case')
  .transform((v) => v.toUpperCase() as 'AND' | 'OR');

const IdParams = z.object({ id: Id });
const tag = 'Questions';

/** Operations on questions (content service). */
export const questionsOperations = {
  createQuestion: operation({
    service: 'content',
    summary: 'Create a question draft (title may be empty; tags are labels, accepted for imports)',
    http: {
      method: 'POST',
      path: '/questions',
      status: 201,
      auth: 'user',
      tag,
      answers: { 404: 'the category or knowledge space does not exist', ...descriptionAnswers },
    },
    body: z.object({
      title: Title.optional(),
      description: Description.nullable().optional(),
      language: Language.optional(),
      category: Id.nullable().optional(),
      knowledge_space: Id.nullable().optional(),
      tags: z.array(TagLabel).max(100).optional(),
    }),
    response: Question,
  }),
  listQuestions: operation({
    service: 'content',
    summary: 'List published questions (default order last_activity desc)',
    http: {
      method: 'GET',
      path: '/questions',
      auth: 'user',
      tag,
      description:
        'With query: full-text search (docs/search.md); results in relevance order unless sort is given, each with search_metadata; relevance considers the best 1,000 matches. interest = view_count + 5·solution_count + 3·upvote_count; trending = interest / (hours since last_activity + 2)^1.5; activity_and_interest = interest / (days since last_activity + 1).',
      answers: {},
    },
    query: z.object({
      query: z.string().max(1000).optional(),
      query_default_operator: Operator.optional(),
      query_fields: z.string().optional(),
      log_query_type: z.enum(['manual', 'autocomplete', 'url', 'tag']).optional(),
      limit: Limit(10, 100),
      offset: Offset,
      filter: enumList(QuestionFilters).optional(),
      // Any label: one longer than a tag may be matches no question.
      tags: commaList(trimmedItem(), 'tag labels').optional(),
      tag_filter_default_operator: Operator.default('AND'),
      sort: QuestionSort.optional(),
      include_deleted: QueryBoolean.default(false),
      category: z
        .string()
        .max(100)
        .regex(
          patternRegex(
            trimmedPattern(`(?:${['uncategorized', 'none', 'all'].map(caseless).join('|')}|${positiveDecimal(999_999_999, 9)})?`),
          ),
          'a category id, all or uncategorized',
        )
        .optional()
        .describe('deprecated: a category id, all, or uncategorized (also none)'),
      categories: commaList(positiveDecimal(2147483647, 10), 'category ids').pipe(z.array(z.coerce.number<string>())).optional(),
      include_uncategorized: QueryBoolean.default(false),
      language_id: LanguageList.optional(),
      knowledge_space: Id.optional(),
      translations: LanguageList.optional(),
      solution_author: Id.optional().describe("only questions with a published solution by this user (a profile's solutions)"),
    }),
    response: Page(Question).extend({
      search_query_id: z.number().int().optional().describe('only when log_query_type is set, offset is 0 and query is given'),
    }),
  }),
  getQuestion: operation({
    service: 'content',
    summary: "Get a question (published, or the caller's own draft); counts a view",
    http: { method: 'GET', path: '/questions/:id', auth: 'user', tag },
    params: IdParams,
    response: Question,
  }),
  updateQuestion: operation({
    service: 'content',
    summary: 'Update a question (author or content_admin)',
    http: {
      method: 'PUT',
      path: '/questions/:id',
      auth: 'user',
      tag,
      description: 'An unknown category id answers 404.',
      answers: { 409: 'the question is deleted', ...descriptionAnswers },
    },
    params: IdParams,
    body: z.object({
      title: trimmedText({ min: 10, max: 100 }).optional(),
      description: Description.nullable().optional(),
      language: Language.optional(),
      category: Id.nullable().optional(),
    }),
    response: Question,
  }),
  publishQuestion: operation({
    service: 'content',
    summary: 'Publish a draft',
    http: {
      method: 'PUT',
      path: '/questions/:id/publish',
      auth: 'user',
      tag,
      answers: {
        409: 'the question is deleted or already published',
        422: 'the draft fails the rules of a published question (PublishValidationError)',
      },
    },
    params: IdParams,
    response: z.object({ number_of_experts: z.number().int() }),
  }),
  deleteQuestion: operation({
    service: 'content',
    summary: 'Soft-delete a question (author or content_admin)',
    http: { method: 'DELETE', path: '/questions/:id', status: 204, auth: 'user', tag },
    params: IdParams,
  }),
  restoreQuestion: operation({
    service: 'content',
    summary: 'Restore a deleted question (author or content_admin)',
    http: { method: 'PUT', path: '/questions/:id/restore', status: 200, auth: 'user', tag },
    params: IdParams,
  }),
  flagQuestion: operation({
    service: 'content',
    summary: 'Flag a question for the content administrators',
    http: { method: 'PUT', path: '/questions/:id/flag', status: 200, auth: 'user', tag },
    params: IdParams,
    body: z.object({ message: z.string().max(10000).nullable().optional() }),
  }),
  followQuestion: operation({
    service: 'content',
    summary: 'Follow a question',
    http: { method: 'PUT', path: '/questions/:id/follow', status: 200, auth: 'user', tag },
    params: IdParams,
  }),
  unfollowQuestion: operation({
    service: 'content',
    summary: 'Stop following a question',
    http: { method: 'DELETE', path: '/questions/:id/follow', status: 200, auth: 'user', tag },
    params: IdParams,
  }),
} as const;

/**
 * The question as every event carries it: its content events the whole snapshot, so that a
 * subscriber (search, notifications, exports) never reads the content schema; events about what
 * hangs off a question (solutions, comments, attachments, shares) its summary, a part of the same
 * shape (the whole one could make them too large for the bus).
 */
export const QuestionSnapshot = z
  .object({
    id: z.number().int(),
    author_id: z.number().int().describe('the poser, who is anonymous in the API'),
    is_published: z.boolean(),
    published: Timestamp.nullable(),
    is_deleted: z.boolean(),
    language: z.string(),
    title: z.string(),
    slug: z.string(),
    description: z.string().nullable().describe('sanitized HTML with mention markup'),
    description_text: z.string().describe('plain text of the description'),
    mentions: z.array(z.number().int()).describe('ids of the live users mentioned in the description'),
    tags: z.array(z.object({ id: z.string().describe('uuid'), label: z.string() })),
    category: z.object({ id: z.number().int(), name: z.string() }).nullable(),
    knowledge_space: z.object({ id: z.number().int(), is_closed: z.boolean() }).nullable(),
    knowledge_space_id: z.number().int().nullable().describe('knowledge_space.id; only members may see questions of a closed space'),
    followers: z.array(z.number().int()).describe('users following the question when the event happened'),
    solution_count: z.number().int(),
    view_count: z.number().int(),
    upvote_count: z.number().int(),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
    last_activity: Timestamp,
  })
  .meta({ id: 'QuestionSnapshot', description: 'a question as the events of its own content carry it' });
export type QuestionSnapshot = z.infer<typeof QuestionSnapshot>;

/** The part of QuestionSnapshot that events about solutions, comments, attachments and shares carry. */
export const QuestionSummary = QuestionSnapshot.pick({
  id: true,
  title: true,
  author_id: true,
  is_published: true,
  knowledge_space_id: true,
  followers: true,
}).meta({
  id: 'QuestionSummary',
  description: 'the part of QuestionSnapshot that events about solutions, comments, attachments, forwards and shares carry',
});
export type QuestionSummary = z.infer<typeof QuestionSummary>;

const UserIds = (description: string) => z.array(z.number().int()).describe(description);

/** Events `content.question.*` of the question itself. */
export const questionsEvents = {
  'content.question.created.v1': z.object({ question: QuestionSnapshot }).describe('a draft was created'),
  'content.question.updated.v1': z
    .object({
      question: QuestionSnapshot,
      changed: z.array(z.string()).describe('the changed fields, of title, description, language, category'),
      new_mentions: UserIds('users mentioned now and not before'),
      followers: UserIds('deprecated: question.followers'),
    })
    .describe('title, description, language or category of a question changed (draft or published)'),
  'content.question.published.v1': z
    .object({ question: QuestionSnapshot, followers: UserIds('deprecated: question.followers') })
    .describe('a draft was published (tags added automatically are in question.tags); notify question.mentions'),
  'content.question.deleted.v1': z.object({ question: QuestionSnapshot }).describe('a question was soft-deleted'),
  'content.question.restored.v1': z.object({ question: QuestionSnapshot }).describe('a deleted question was restored'),
  'content.question.flagged.v1': z
    .object({
      question: QuestionSnapshot,
      flag: z.object({ id: z.number().int(), user_id: z.number().int(), message: z.string().nullable(), created: Timestamp }),
    })
    .describe('a user flagged a question for the content administrators'),
  'content.question.followed.v1': z
    .object({ question_id: z.number().int(), user_id: z.number().int(), author_id: z.number().int() })
    .describe('a user started following a question (not repeated for a second follow)'),
  'content.question.unfollowed.v1': z
    .object({ question_id: z.number().int(), user_id: z.number().int(), author_id: z.number().int() })
    .describe('a user stopped following a question'),
} as const;
