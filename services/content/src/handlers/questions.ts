import type { categoriesOperations, Handlers, knowledgeSpacesOperations, questionsOperations, tagsOperations } from '@kn/contracts';
import { categoriesDomain } from '../domain/categories.ts';
import { knowledgeSpacesDomain } from '../domain/knowledge-spaces.ts';
import { questionListDomain } from '../domain/question-list.ts';
import { questionsDomain } from '../domain/questions.ts';
import { tagsDomain } from '../domain/tags.ts';
import type { ContentDeps } from './deps.ts';

/** Questions, and what orders them: categories, tags, knowledge spaces. */
export function questionHandlers(
  deps: ContentDeps,
): Handlers<typeof questionsOperations & typeof categoriesOperations & typeof tagsOperations & typeof knowledgeSpacesOperations> {
  const questions = questionsDomain(deps);
  const lists = questionListDomain(deps);
  const categories = categoriesDomain(deps);
  const tags = tagsDomain(deps);
  const spaces = knowledgeSpacesDomain(deps);
  return {
    createQuestion: async ({ body, actor }) => questions.create(body, actor),
    listQuestions: async ({ query, actor, url, requestId }) => lists.list(query, actor, { url, requestId }),
    getQuestion: async ({ params, actor }) => questions.view(params.id, actor),
    updateQuestion: async ({ params, body, actor }) => questions.update(params.id, body, actor),
    publishQuestion: async ({ params, actor, requestId }) => questions.publish(params.id, actor, requestId),
    deleteQuestion: async ({ params, actor }) => {
      await questions.remove(params.id, actor);
      return undefined;
    },
    restoreQuestion: async ({ params, actor }) => {
      await questions.restore(params.id, actor);
      return undefined;
    },
    flagQuestion: async ({ params, body, actor }) => {
      await questions.flag(params.id, body.message, actor);
      return undefined;
    },
    followQuestion: async ({ params, actor }) => {
      await questions.follow(params.id, actor, true);
      return undefined;
    },
    unfollowQuestion: async ({ params, actor }) => {
      await questions.follow(params.id, actor, false);
      return undefined;
    },

    listCategories: async () => categories.list(),
    createCategory: async ({ body, actor }) => categories.create(body, actor),
    updateCategory: async ({ params, body, actor }) => categories.update(params.id, body, actor),
    deleteCategory: async ({ params, actor }) => {
      await categories.remove(params.id, actor);
      return undefined;
    },

    listTags: async ({ query, url, actor }) => tags.list(query, url, actor),
    getTagLabel: async ({ params, actor }) => tags.get(params.label, actor),
    updateTagLabel: async ({ params, body, actor }) => tags.update(params.label, body, actor),
    getTagLinks: async ({ params, actor }) => tags.links(params.label, actor),
    putTagLinks: async ({ params, body, actor }) => tags.replaceLinks(params.label, body, actor),

    listKnowledgeSpaces: async () => spaces.list(),
    createKnowledgeSpace: async ({ body, actor }) => spaces.create(body, actor),
    updateKnowledgeSpace: async ({ params, body, actor }) => spaces.update(params.id, body, actor),
    setKnowledgeSpaceMembers: async ({ params, body, actor }) => spaces.setMembers(params.id, body.user_ids, actor),
  };
}
