import { z } from 'zod';
import { Id, Language } from './common.ts';
import { operation } from './endpoint.ts';
import { trimmedText } from './text.ts';

/** Categories (content service): a question has at most one. */

export const CategoryTranslation = z.object({ language: Language, name: z.string(), description: z.string() });

export const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    color: z.string(),
    translations: z.array(CategoryTranslation),
  })
  .meta({
    id: 'Category',
    examples: [
      {
        id: 2,
        name: 'Brewing',
        description: 'Making beer at home',
        color: '#1a2b3c',
        translations: [{ language: 'de', name: 'Brauen', description: 'Bier selbst brauen' }],
      },
    ],
  });
export type Category = z.infer<typeof Category>;

const Color = z.string().regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a hex colour such as #1a2b3c');

const CategoryInput = z.object({
  name: trimmedText({ min: 1, max: 191 }),
  description: z.string().max(10000).default(''),
  color: Color.default('#808080'),
  translations: z
    .array(z.object({ language: Language, name: trimmedText({ min: 1, max: 191 }), description: z.string().max(10000).default('') }))
    .max(50)
    .default([]),
});

const IdParams = z.object({ id: Id });
const tag = 'Categories';
const admins = ['settings_admin', 'super_admin'] as const;

export const categoriesOperations = {
  listCategories: operation({
    service: 'content',
    summary: 'All categories',
    http: { method: 'GET', path: '/categories', auth: 'user', tag },
    response: z.array(Category),
  }),
  createCategory: operation({
    service: 'content',
    summary: 'Create a category',
    http: { method: 'POST', path: '/categories', status: 201, auth: 'user', roles: admins, tag },
    body: CategoryInput,
    response: Category,
  }),
  updateCategory: operation({
    service: 'content',
    summary: 'Change a category',
    http: { method: 'PUT', path: '/categories/:id', auth: 'user', roles: admins, tag },
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
    http: { method: 'DELETE', path: '/categories/:id', status: 204, auth: 'user', roles: admins, tag },
    params: IdParams,
  }),
} as const;

/** Events `content.category.*`. */
export const categoriesEvents = {
  'content.category.created.v1': z.object({ category: Category }).describe('a category was created'),
  'content.category.updated.v1': z.object({ category: Category }).describe('a category was changed'),
  'content.category.deleted.v1': z
    .object({ category: Category, question_ids: z.array(z.number().int()).describe('its questions, uncategorized now') })
    .describe('a category was deleted; its questions became uncategorized (no event per question)'),
} as const;
