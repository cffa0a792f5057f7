import { z } from 'zod';
import { Limit, Offset, Page } from './common.ts';
import { operation } from './endpoint.ts';
import { trimmedText } from './text.ts';

/** Tags (content service): identified by their label; tag links widen the pool of experts. */

/** Tag labels: at most 191 characters (interface limit), no commas (lists of labels are comma-separated). */
export const TagLabel = trimmedText({ min: 1, max: 191, without: ',', message: 'a tag label cannot contain a comma' });

export const TagInfo = z
  .object({ label: z.string(), excluded_from_suggestions: z.boolean(), image: z.null(), question_count: z.number().int() })
  .meta({ id: 'Tag', examples: [{ label: 'hops', excluded_from_suggestions: false, image: null, question_count: 113 }] });

const LabelParams = z.object({ label: TagLabel });
const tag = 'Tags';
const admins = ['content_admin', 'super_admin'] as const;

export const tagsOperations = {
  listTags: operation({
    service: 'content',
    summary: 'Tag labels, optionally those starting with or containing query',
    http: { method: 'GET', path: '/tags', auth: 'user', tag },
    query: z.object({ query: z.string().max(191).optional(), limit: Limit(10, 1000), offset: Offset }),
    response: Page(z.string()),
  }),
  getTagLinks: operation({
    service: 'content',
    summary: 'Labels of the tags linked to a tag',
    http: { method: 'GET', path: '/tag-labels/:label/links', auth: 'user', tag },
    params: LabelParams,
    response: z.array(z.string()),
  }),
  putTagLinks: operation({
    service: 'content',
    summary: 'Replace the links of a tag (missing tags are created)',
    http: { method: 'PUT', path: '/tag-labels/:label/links', auth: 'user', roles: admins, tag },
    params: LabelParams,
    body: z.array(TagLabel).max(1000),
    response: z.array(z.string()),
  }),
  getTagLabel: operation({
    service: 'content',
    summary: 'A tag',
    http: { method: 'GET', path: '/tag-labels/:label', auth: 'user', tag },
    params: LabelParams,
    response: TagInfo,
  }),
  updateTagLabel: operation({
    service: 'content',
    summary: 'Change whether a tag is suggested',
    http: { method: 'PUT', path: '/tag-labels/:label', auth: 'user', roles: admins, tag },
    params: LabelParams,
    body: z.object({ excluded_from_suggestions: z.boolean() }),
    response: TagInfo,
  }),
} as const;

const TagSnapshot = z.object({ id: z.string().describe('uuid'), label: z.string(), excluded_from_suggestions: z.boolean() });

/** Events `content.tag.*`. */
export const tagsEvents = {
  'content.tag.created.v1': z
    .object({ tag: TagSnapshot })
    .describe("a tag was created (by a question's tags, an import, or PUT /tag-labels/:label/links)"),
  'content.tag.updated.v1': z.object({ tag: TagSnapshot }).describe('excluded_from_suggestions changed'),
  'content.tag.links-updated.v1': z
    .object({ tag: TagSnapshot, links: z.array(z.string()).describe('labels of the linked tags: the full new set') })
    .describe('the links of a tag were replaced'),
} as const;
