import { z } from 'zod';
import { CommaList, Id, Language, Limit, Offset, Page, QueryBoolean, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';

/** Tag labels: at most 191 characters (interface limit), no commas (lists of labels are comma-separated). */
export const TagLabel = z
  .string()
  .trim()
  .min(1)
  .max(191)
  .refine((s) => !s.includes(','), 'a tag label cannot contain a comma');

export const CategoryTranslation = z.object({ language: Language, name: z.string(), description: z.string() });

export const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    color: z.string(),
    translations: z.array(CategoryTranslation),
  })
  .meta({ id: 'Category' });
export type Category = z.infer<typeof Category>;

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

export const QuestionTranslation = z.object({ language: z.string(), title: z.string(), description: z.string().nullable() });

/** On each item of `GET /questions` when `query` is given (interface: Search metadata). */
export const SearchHighlighting = z
  .object({
    query_field: z.enum(['title', 'description', 'tags', 'solutions', 'comments', 'attachments']),
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
  .meta({ id: 'Question' });
export type Question = z.infer<typeof Question>;

export const KnowledgeSpace = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    is_closed: z.boolean(),
    member_count: z.number().int(),
    automatic_new_user_assignment: z.boolean(),
    created: Timestamp,
    updated: Timestamp,
  })
  .meta({ id: 'KnowledgeSpace' });

export const TagInfo = z
  .object({ label: z.string(), excluded_from_suggestions: z.boolean(), image: z.null(), question_count: z.number().int() })
  .meta({ id: 'Tag' });

const Title = z.string().trim().max(100);
const Description = z.string().max(5_000_000);
const Color = z.string().regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a hex colour such as #1a2b3c');

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
const QuestionSort = CommaList.pipe(
  z.array(
    z
      .string()
      .regex(
        new RegExp(`^(${QuestionSortCriteria.join('|')})(\\.(asc|desc))?$`),
        `criteria: ${QuestionSortCriteria.join(', ')}, with .asc or .desc`,
      ),
  ),
);
const LanguageList = CommaList.pipe(z.array(Language));
const Operator = z
  .string()
  .transform((v) => v.toUpperCase())
  .pipe(z.enum(['AND', 'OR']));

const IdParams = z.object({ id: Id });
const LabelParams = z.object({ label: TagLabel });
const tag = 'Questions';

const CategoryInput = z.object({
  name: z.string().trim().min(1).max(191),
  description: z.string().max(10000).default(''),
  color: Color.default('#808080'),
  translations: z
    .array(z.object({ language: Language, name: z.string().trim().min(1).max(191), description: z.string().max(10000).default('') }))
    .max(50)
    .default([]),
});

const KnowledgeSpaceInput = z.object({
  name: z.string().trim().min(1).max(191),
  description: z.string().max(10000).nullable().optional(),
  is_closed: z.boolean().default(false),
  automatic_new_user_assignment: z.boolean().default(false),
});

/** Operations on questions, categories, tags, tag links and knowledge spaces (content service). */
export const questionsOperations = {
  createQuestion: operation({
    service: 'content',
    summary: 'Create a question draft (title may be empty; tags are labels, accepted for imports)',
    http: { method: 'POST', path: '/questions', status: 201, auth: 'user', tag },
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
    },
    query: z.object({
      query: z.string().max(1000).optional(),
      query_default_operator: Operator.optional(),
      query_fields: z.string().optional(),
      log_query_type: z.enum(['manual', 'autocomplete', 'url', 'tag']).optional(),
      limit: Limit(10, 100),
      offset: Offset,
      filter: CommaList.pipe(z.array(z.enum(QuestionFilters))).optional(),
      tags: CommaList.pipe(z.array(TagLabel)).optional(),
      tag_filter_default_operator: Operator.default('AND'),
      sort: QuestionSort.optional(),
      include_deleted: QueryBoolean.default(false),
      category: z.string().max(100).optional().describe('deprecated: a category id, or "uncategorized"'),
      categories: CommaList.pipe(
        z.array(
          z
            .string()
            .regex(/^\d{1,10}$/, 'category ids')
            .transform(Number)
            .pipe(z.number().int().positive().max(2147483647)),
        ),
      ).optional(),
      include_uncategorized: QueryBoolean.default(false),
      language_id: LanguageList.optional(),
      knowledge_space: Id.optional(),
      translations: LanguageList.optional(),
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
    http: { method: 'PUT', path: '/questions/:id', auth: 'user', tag, description: 'An unknown category id answers 404.' },
    params: IdParams,
    body: z.object({
      title: Title.min(10).optional(),
      description: Description.nullable().optional(),
      language: Language.optional(),
      category: Id.nullable().optional(),
    }),
    response: Question,
  }),
  publishQuestion: operation({
    service: 'content',
    summary: 'Publish a draft',
    http: { method: 'PUT', path: '/questions/:id/publish', auth: 'user', tag },
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
  listCategories: operation({
    service: 'content',
    summary: 'All categories',
    http: { method: 'GET', path: '/categories', auth: 'user', tag: 'Categories' },
    response: z.array(Category),
  }),
  createCategory: operation({
    service: 'content',
    summary: 'Create a category',
    http: { method: 'POST', path: '/categories', status: 201, auth: 'user', roles: ['settings_admin', 'super_admin'], tag: 'Categories' },
    body: CategoryInput,
    response: Category,
  }),
  updateCategory: operation({
    service: 'content',
    summary: 'Change a category',
    http: { method: 'PUT', path: '/categories/:id', auth: 'user', roles: ['settings_admin', 'super_admin'], tag: 'Categories' },
    params: IdParams,
    body: z.object({
      name: CategoryInput.shape.name.optional(),
      description: z.string().max(10000).optional(),
      color: Color.optional(),
      translations: CategoryInput.shape.translations.unwrap().optional(),
    }),
    response: Category,
  }),
  deleteCategory: operation({
    service: 'content',
    summary: 'Delete a category; its questions become uncategorized',
    http: {
      method: 'DELETE',
      path: '/categories/:id',
      status: 204,
      auth: 'user',
      roles: ['settings_admin', 'super_admin'],
      tag: 'Categories',
    },
    params: IdParams,
  }),

  listTags: operation({
    service: 'content',
    summary: 'Tag labels, optionally those starting with or containing query',
    http: { method: 'GET', path: '/tags', auth: 'user', tag: 'Tags' },
    query: z.object({ query: z.string().max(191).optional(), limit: Limit(10, 1000), offset: Offset }),
    response: Page(z.string()),
  }),
  getTagLinks: operation({
    service: 'content',
    summary: 'Labels of the tags linked to a tag',
    http: { method: 'GET', path: '/tag-labels/:label/links', auth: 'user', tag: 'Tags' },
    params: LabelParams,
    response: z.array(z.string()),
  }),
  putTagLinks: operation({
    service: 'content',
    summary: 'Replace the links of a tag (missing tags are created)',
    http: { method: 'PUT', path: '/tag-labels/:label/links', auth: 'user', roles: ['content_admin', 'super_admin'], tag: 'Tags' },
    params: LabelParams,
    body: z.array(TagLabel).max(1000),
    response: z.array(z.string()),
  }),
  getTagLabel: operation({
    service: 'content',
    summary: 'A tag',
    http: { method: 'GET', path: '/tag-labels/:label', auth: 'user', tag: 'Tags' },
    params: LabelParams,
    response: TagInfo,
  }),
  updateTagLabel: operation({
    service: 'content',
    summary: 'Change whether a tag is suggested',
    http: { method: 'PUT', path: '/tag-labels/:label', auth: 'user', roles: ['content_admin', 'super_admin'], tag: 'Tags' },
    params: LabelParams,
    body: z.object({ excluded_from_suggestions: z.boolean() }),
    response: TagInfo,
  }),

  listKnowledgeSpaces: operation({
    service: 'content',
    summary: 'Knowledge spaces',
    http: { method: 'GET', path: '/knowledge-spaces', auth: 'user', tag: 'Knowledge spaces' },
    response: z.object({ total: z.number().int(), items: z.array(KnowledgeSpace) }),
  }),
  createKnowledgeSpace: operation({
    service: 'content',
    summary: 'Create a knowledge space',
    http: {
      method: 'POST',
      path: '/knowledge-spaces',
      status: 201,
      auth: 'user',
      roles: ['content_admin', 'super_admin'],
      tag: 'Knowledge spaces',
    },
    body: KnowledgeSpaceInput,
    response: KnowledgeSpace,
  }),
  updateKnowledgeSpace: operation({
    service: 'content',
    summary: 'Change a knowledge space',
    http: { method: 'PUT', path: '/knowledge-spaces/:id', auth: 'user', roles: ['content_admin', 'super_admin'], tag: 'Knowledge spaces' },
    params: IdParams,
    body: z.object({
      name: KnowledgeSpaceInput.shape.name.optional(),
      description: z.string().max(10000).nullable().optional(),
      is_closed: z.boolean().optional(),
      automatic_new_user_assignment: z.boolean().optional(),
    }),
    response: KnowledgeSpace,
  }),
  setKnowledgeSpaceMembers: operation({
    service: 'content',
    summary: 'Replace the members of a knowledge space',
    http: {
      method: 'PUT',
      path: '/knowledge-spaces/:id/members',
      auth: 'user',
      roles: ['content_admin', 'super_admin'],
      tag: 'Knowledge spaces',
    },
    params: IdParams,
    body: z.object({ user_ids: z.array(Id).max(100000) }),
    response: KnowledgeSpace,
  }),
} as const;

/** A question as events carry it: everything a subscriber (search, notifications, exports) needs. */
export const QuestionSnapshot = z
  .object({
    id: z.number().int(),
    author_id: z.number().int(),
    is_published: z.boolean(),
    published: Timestamp.nullable(),
    is_deleted: z.boolean(),
    language: z.string(),
    title: z.string(),
    slug: z.string(),
    description: z.string().nullable().describe('sanitized HTML with mention markup'),
    description_text: z.string().describe('plain text of the description'),
    mentions: z.array(z.number().int()).describe('ids of the users mentioned in the description'),
    tags: z.array(z.object({ id: z.string(), label: z.string() })),
    category: z.object({ id: z.number().int(), name: z.string() }).nullable(),
    knowledge_space: z.object({ id: z.number().int(), is_closed: z.boolean() }).nullable(),
    solution_count: z.number().int(),
    view_count: z.number().int(),
    upvote_count: z.number().int(),
    created: Timestamp,
    updated: Timestamp,
    content_updated: Timestamp,
    last_activity: Timestamp,
  })
  .meta({ id: 'QuestionSnapshot' });
export type QuestionSnapshot = z.infer<typeof QuestionSnapshot>;

const CategorySnapshot = Category;
const TagSnapshot = z.object({ id: z.string(), label: z.string(), excluded_from_suggestions: z.boolean() });
const KnowledgeSpaceSnapshot = KnowledgeSpace.omit({ member_count: true }).extend({ member_ids: z.array(z.number().int()) });

/** Events `content.question.*`, `content.category.*`, `content.tag.*`, `content.knowledge-space.*`. */
export const questionsEvents = {
  'content.question.created.v1': z.object({ question: QuestionSnapshot }),
  'content.question.updated.v1': z.object({
    question: QuestionSnapshot,
    changed: z.array(z.string()).describe('names of the changed fields'),
    new_mentions: z.array(z.number().int()).describe('users mentioned now and not before'),
    followers: z.array(z.number().int()),
  }),
  'content.question.published.v1': z.object({ question: QuestionSnapshot, followers: z.array(z.number().int()) }),
  'content.question.deleted.v1': z.object({ question: QuestionSnapshot }),
  'content.question.restored.v1': z.object({ question: QuestionSnapshot }),
  'content.question.flagged.v1': z.object({
    question: QuestionSnapshot,
    flag: z.object({ id: z.number().int(), user_id: z.number().int(), message: z.string().nullable(), created: Timestamp }),
  }),
  'content.question.followed.v1': z.object({ question_id: z.number().int(), user_id: z.number().int(), author_id: z.number().int() }),
  'content.question.unfollowed.v1': z.object({ question_id: z.number().int(), user_id: z.number().int(), author_id: z.number().int() }),
  'content.category.created.v1': z.object({ category: CategorySnapshot }),
  'content.category.updated.v1': z.object({ category: CategorySnapshot }),
  'content.category.deleted.v1': z.object({ category: CategorySnapshot, question_ids: z.array(z.number().int()) }),
  'content.tag.created.v1': z.object({ tag: TagSnapshot }),
  'content.tag.updated.v1': z.object({ tag: TagSnapshot }),
  'content.tag.links-updated.v1': z.object({ tag: TagSnapshot, links: z.array(z.string()) }),
  'content.knowledge-space.created.v1': z.object({ knowledge_space: KnowledgeSpaceSnapshot }),
  'content.knowledge-space.updated.v1': z.object({ knowledge_space: KnowledgeSpaceSnapshot }),
} as const;
