import type { Bus } from '@kn/bus';
import { objectStore, writeEvent } from '@kn/bus';
import type { AttachmentUpload } from '@kn/contracts';
import { type Actor, attachmentBucket, conflict, fileTooLarge, forbidden, notFound, validationError } from '@kn/contracts';
import type { Executor } from '@kn/db';
import type { z } from 'zod';
import type { ContentSchema } from '../db/schema.ts';
import type { ContentDeps } from '../handlers/deps.ts';
import { canEdit, isContentAdmin, requireLiveSolution, visibleQuestion, visibleSolution } from './access.ts';
import { cleanFileName } from './file-names.ts';
import { questionSummary } from './question-presenters.ts';
import { eventAttachment, presentAttachment } from './solutions-common.ts';

/** The shared object store of attachment bytes (created on first use; every instance reads it). */
export const attachmentStore = (bus: Bus) => objectStore(bus, attachmentBucket(bus.streamName('content')));

type Upload = z.output<typeof AttachmentUpload>;
type Target = { questionId: number } | { solutionId: number };

/** The live attachments of a solution, or of a question itself (not those of its solutions). */
export function attachmentsOf(db: Executor<ContentSchema>, target: Target) {
  const live = db.selectFrom('attachments').selectAll().where('is_deleted', '=', false);
  const of =
    'solutionId' in target
      ? live.where('solution_id', '=', target.solutionId)
      : live.where('question_id', '=', target.questionId).where('solution_id', 'is', null);
  return of.orderBy('id').execute();
}

/** The question (and solution) an attachment goes to; only their authors and content admins may attach. */
async function parentForUpload(db: Executor<ContentSchema>, actor: Actor, target: Target) {
  if ('solutionId' in target) {
    const { solution, question } = await visibleSolution(db, target.solutionId, actor);
    if (!canEdit(solution, actor)) throw forbidden('only the solution author or a content admin may attach files');
    requireLiveSolution(solution);
    if (question.is_deleted) throw conflict('the question is deleted');
    return { question, solutionId: solution.id };
  }
  const question = await visibleQuestion(db, target.questionId, actor);
  if (!canEdit(question, actor)) throw forbidden('only the question author or a content admin may attach files');
  if (question.is_deleted) throw conflict('the question is deleted');
  return { question, solutionId: null };
}

async function visibleAttachment(db: Executor<ContentSchema>, actor: Actor, id: number) {
  const row = await db.selectFrom('attachments').selectAll().where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst();
  if (!row) throw notFound('attachment');
  try {
    if (row.solution_id !== null) {
      const { solution, question } = await visibleSolution(db, row.solution_id, actor);
      return { row, question, parentAuthor: solution.author_id };
    }
    const question = await visibleQuestion(db, row.question_id, actor);
    return { row, question, parentAuthor: question.author_id };
  } catch {
    throw notFound('attachment');
  }
}

export function attachmentsDomain(deps: ContentDeps) {
  const { db, bus, config, logger, text: textWork } = deps;
  const store = attachmentStore(bus);

  return {
    store,

    async add(actor: Actor, target: Target, upload: Upload) {
      if (upload.size > config.ATTACHMENT_MAX_BYTES) throw fileTooLarge(`files may have at most ${config.ATTACHMENT_MAX_BYTES} bytes`);
      await parentForUpload(db, actor, target);
      const bytes = await (await store()).getBlob(upload.object);
      if (!bytes)
        throw validationError('the uploaded file is gone', [{ path: 'file', code: 'invalid_value', message: 'upload not found' }]);
      if (bytes.length !== upload.size) throw validationError('the uploaded file is incomplete');
      // A file past a limit of its reading is refused here, before any row or event: the gateway
      // then removes its bytes, as for every refused upload.
      const text = await textWork.extract(bytes, upload.mime_type, upload.name);
      const row = await db.transaction().execute(async (tx) => {
        const { question, solutionId } = await parentForUpload(tx, actor, target);
        const inserted = await tx
          .insertInto('attachments')
          .values({
            question_id: question.id,
            solution_id: solutionId,
            uploader_id: actor.id,
            name: cleanFileName(upload.name),
            mime_type: upload.mime_type,
            size: upload.size,
            hash: upload.hash,
            object_name: upload.object,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await writeEvent(
          tx,
          'content.attachment.added.v1',
          { attachment: eventAttachment(inserted), question: await questionSummary(tx, question), text },
          { actorId: actor.id },
        );
        return inserted;
      });
      return presentAttachment(row);
    },

    async list(actor: Actor, target: Target) {
      if ('solutionId' in target) await visibleSolution(db, target.solutionId, actor);
      else await visibleQuestion(db, target.questionId, actor);
      const rows = await attachmentsOf(db, target);
      return { total: rows.length, items: rows.map(presentAttachment) };
    },

    async download(actor: Actor, id: number) {
      const { row } = await visibleAttachment(db, actor, id);
      return { object: row.object_name, name: row.name, mime_type: row.mime_type, size: row.size };
    },

    async remove(actor: Actor, id: number) {
      const objectName = await db.transaction().execute(async (tx) => {
        const { row, question, parentAuthor } = await visibleAttachment(tx, actor, id);
        if (row.uploader_id !== actor.id && parentAuthor !== actor.id && !isContentAdmin(actor))
          throw forbidden('only the uploader, the author of the question or solution, or a content admin may delete an attachment');
        const updated = await tx
          .updateTable('attachments')
          .set({ is_deleted: true })
          .where('id', '=', id)
          .where('is_deleted', '=', false)
          .returningAll()
          .executeTakeFirst();
        if (!updated) throw notFound('attachment');
        await writeEvent(
          tx,
          'content.attachment.deleted.v1',
          { attachment: eventAttachment(updated), question: await questionSummary(tx, question) },
          { actorId: actor.id },
        );
        return updated.object_name;
      });
      // The row is the truth; the bytes go after commit (a failure leaves an unreachable object).
      await (await store())
        .delete(objectName)
        .catch((err) => logger.warn({ err, object: objectName }, 'could not delete attachment bytes'));
    },
  };
}
