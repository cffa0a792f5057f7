import { z } from 'zod';
import { Id, Timestamp } from './common.ts';
import { operation } from './endpoint.ts';
import { trimmedText } from './text.ts';

/**
 * Knowledge spaces (content service): questions of a closed space are visible, searchable and
 * notifiable only to its members.
 */

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
  .meta({
    id: 'KnowledgeSpace',
    examples: [
      {
        id: 1,
        name: 'Quality lab',
        description: null,
        is_closed: true,
        member_count: 4,
        automatic_new_user_assignment: false,
        created: '2026-11-20T09:15:02.123Z',
        updated: '2026-11-20T09:15:02.123Z',
      },
    ],
  });

const KnowledgeSpaceInput = z.object({
  name: trimmedText({ min: 1, max: 191 }),
  description: z.string().max(10000).nullable().optional(),
  is_closed: z.boolean().default(false),
  automatic_new_user_assignment: z.boolean().default(false),
});

const IdParams = z.object({ id: Id });
const tag = 'Knowledge spaces';
const admins = ['content_admin', 'super_admin'] as const;

export const knowledgeSpacesOperations = {
  listKnowledgeSpaces: operation({
    service: 'content',
    summary: 'Knowledge spaces',
    http: { method: 'GET', path: '/knowledge-spaces', auth: 'user', tag },
    response: z.object({ total: z.number().int(), items: z.array(KnowledgeSpace) }),
  }),
  createKnowledgeSpace: operation({
    service: 'content',
    summary: 'Create a knowledge space',
    http: { method: 'POST', path: '/knowledge-spaces', status: 201, auth: 'user', roles: admins, tag },
    body: KnowledgeSpaceInput,
    response: KnowledgeSpace,
  }),
  updateKnowledgeSpace: operation({
    service: 'content',
    summary: 'Change a knowledge space',
    http: { method: 'PUT', path: '/knowledge-spaces/:id', auth: 'user', roles: admins, tag },
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
    http: { method: 'PUT', path: '/knowledge-spaces/:id/members', auth: 'user', roles: admins, tag },
    params: IdParams,
    body: z.object({ user_ids: z.array(Id).max(100000) }),
    response: KnowledgeSpace,
  }),
} as const;

const KnowledgeSpaceSnapshot = KnowledgeSpace.omit({ member_count: true }).extend({
  member_ids: z.array(z.number().int()).describe('the full member list'),
});

/** Events `content.knowledge-space.*`. */
export const knowledgeSpacesEvents = {
  'content.knowledge-space.created.v1': z.object({ knowledge_space: KnowledgeSpaceSnapshot }).describe('a knowledge space was created'),
  'content.knowledge-space.updated.v1': z
    .object({ knowledge_space: KnowledgeSpaceSnapshot })
    .describe('fields or members of a knowledge space changed (member_ids is the full new list)'),
} as const;
