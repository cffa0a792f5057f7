import type { attachmentsOperations, commentsOperations, Handlers, sharingOperations, solutionsOperations } from '@kn/contracts';
import { visibleQuestionWithRelations } from '../domain/access.ts';
import { attachmentsDomain } from '../domain/attachments.ts';
import { commentsDomain } from '../domain/comments.ts';
import { presentQuestions } from '../domain/question-presenters.ts';
import { solutionsDomain } from '../domain/solutions.ts';
import { presentAttachment, presentSolution } from '../domain/solutions-common.ts';
import { sharingDomain } from '../domain/solutions-sharing.ts';
import type { ContentDeps } from './deps.ts';

/** What hangs off a question: solutions, comments, attachments, forwards and shares. */
export function solutionHandlers(
  deps: ContentDeps,
): Handlers<typeof solutionsOperations & typeof commentsOperations & typeof attachmentsOperations & typeof sharingOperations> {
  const { db } = deps;
  const solutions = solutionsDomain(deps);
  const comments = commentsDomain(deps);
  const attachments = attachmentsDomain(deps);
  const sharing = sharingDomain(deps);

  return {
    createSolution: async ({ actor, params, body }) => solutions.create(actor, params.id, body.description),
    getSolutionDraft: async ({ actor, params }) => solutions.getDraft(actor, params.id),
    getCompleteQuestion: async ({ actor, params }) => {
      const question = await visibleQuestionWithRelations(db, params.id, actor);
      const [[presented], solutionRows, commentItems, attachmentRows] = await Promise.all([
        presentQuestions(db, [question]),
        db
          .selectFrom('solutions')
          .selectAll()
          .where('question_id', '=', question.id)
          .where('is_published', '=', true)
          .where('is_deleted', '=', false)
          .orderBy('rating', (ob) => ob.desc().nullsLast())
          .orderBy('rating_count', 'desc')
          .orderBy('id')
          .execute(),
        comments.listVisible(question.id),
        db
          .selectFrom('attachments')
          .selectAll()
          .where('question_id', '=', question.id)
          .where('solution_id', 'is', null)
          .where('is_deleted', '=', false)
          .orderBy('id')
          .execute(),
      ]);
      return {
        ...presented,
        solutions: solutionRows.map(presentSolution),
        comments: commentItems,
        attachments: attachmentRows.map(presentAttachment),
      };
    },
    getSolution: async ({ actor, params }) => solutions.get(actor, params.id),
    updateSolution: async ({ actor, params, body }) => solutions.update(actor, params.id, body.description),
    publishSolution: async ({ actor, params }) => solutions.publish(actor, params.id),
    deleteSolution: async ({ actor, params }) => {
      await solutions.remove(actor, params.id);
      return undefined;
    },
    restoreSolution: async ({ actor, params }) => {
      await solutions.restore(actor, params.id);
      return undefined;
    },
    rateSolution: async ({ actor, params, body }) => solutions.rate(actor, params.id, body.rating),
    acceptSolution: async ({ actor, params }) => solutions.accept(actor, params.id),
    upvoteSolution: async ({ actor, params }) => solutions.upvote(actor, params.id),
    removeSolutionUpvote: async ({ actor, params }) => solutions.removeUpvote(actor, params.id),
    validateSolution: async ({ actor, params, body }) => solutions.validate(actor, params.id, body.validity),
    shareSolution: async ({ actor, params, body, requestId }) => {
      await solutions.share(actor, params.id, body, requestId);
      return undefined;
    },

    createQuestionComment: async ({ actor, params, body }) => comments.create(actor, { questionId: params.id }, body.description),
    listQuestionComments: async ({ actor, params }) => comments.list(actor, params.id),
    createSolutionComment: async ({ actor, params, body }) => comments.create(actor, { solutionId: params.id }, body.description),
    convertCommentToSolution: async ({ actor, params }) => comments.toSolution(actor, params.id),
    updateComment: async ({ actor, params, body }) => comments.update(actor, params.id, body.description),
    deleteComment: async ({ actor, params }) => {
      await comments.remove(actor, params.id);
      return undefined;
    },

    addQuestionAttachment: async ({ actor, params, body }) => attachments.add(actor, { questionId: params.id }, body),
    listQuestionAttachments: async ({ actor, params }) => attachments.list(actor, { questionId: params.id }),
    addSolutionAttachment: async ({ actor, params, body }) => attachments.add(actor, { solutionId: params.id }, body),
    listSolutionAttachments: async ({ actor, params }) => attachments.list(actor, { solutionId: params.id }),
    downloadAttachment: async ({ actor, params }) => attachments.download(actor, params.id),
    deleteAttachment: async ({ actor, params }) => {
      await attachments.remove(actor, params.id);
      return undefined;
    },

    forwardQuestion: async ({ actor, params, body, requestId }) => {
      await sharing.forward(actor, params.id, (body.recipient ?? body.user_id) as number, body.message, requestId);
      return undefined;
    },
    listQuestionForwards: async ({ actor, params, requestId }) => sharing.listForwards(actor, params.id, requestId),
    shareQuestion: async ({ actor, params, body, requestId }) => {
      await sharing.shareQuestion(actor, params.id, body, requestId);
      return undefined;
    },
    getValidationRequest: async ({ actor, params }) => sharing.getValidationRequest(actor, params.id),
    requestValidation: async ({ actor, params }) => sharing.requestValidation(actor, params.id),
  };
}
