import type { attachmentsOperations, commentsOperations, Handlers, sharingOperations, solutionsOperations } from '@kn/contracts';
import { attachmentsDomain } from '../domain/attachments.ts';
import { commentsDomain } from '../domain/comments.ts';
import { sharingDomain } from '../domain/sharing.ts';
import { solutionsDomain } from '../domain/solutions.ts';
import { validationRequestsDomain } from '../domain/validation-requests.ts';
import type { ContentDeps } from './deps.ts';

/** What hangs off a question: solutions, comments, attachments, forwards and shares. */
export function solutionHandlers(
  deps: ContentDeps,
): Handlers<typeof solutionsOperations & typeof commentsOperations & typeof attachmentsOperations & typeof sharingOperations> {
  const solutions = solutionsDomain(deps);
  const comments = commentsDomain(deps);
  const attachments = attachmentsDomain(deps);
  const sharing = sharingDomain(deps);
  const validationRequests = validationRequestsDomain(deps);

  return {
    createSolution: async ({ actor, params, body }) => solutions.create(actor, params.id, body.description),
    getSolutionDraft: async ({ actor, params }) => solutions.getDraft(actor, params.id),
    getCompleteQuestion: async ({ actor, params }) => solutions.completeQuestion(actor, params.id),
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
    listMyUpvotes: async ({ actor, params }) => solutions.myUpvotes(actor, params.id),
    validateSolution: async ({ actor, params, body }) => solutions.validate(actor, params.id, body.validity),
    shareSolution: async ({ actor, params, body, requestId }) => {
      await sharing.shareSolution(actor, params.id, body, requestId);
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
    declineQuestion: async ({ actor, params }) => {
      await sharing.decline(actor, params.id);
      return undefined;
    },
    listQuestionForwards: async ({ actor, params, requestId }) => sharing.listForwards(actor, params.id, requestId),
    shareQuestion: async ({ actor, params, body, requestId }) => {
      await sharing.shareQuestion(actor, params.id, body, requestId);
      return undefined;
    },
    getValidationRequest: async ({ actor, params }) => validationRequests.get(actor, params.id),
    requestValidation: async ({ actor, params }) => validationRequests.request(actor, params.id),
  };
}
