import { type Bus, type Consumer, type EventHandlers, startConsumer } from '@kn/bus';
import { type QuestionSnapshot, type StreamSubject, subjectsExcept } from '@kn/contracts';
import type { Db, Tx } from '@kn/db';
import type { SearchSchema } from '../db/schema.ts';
import { embeddingText, sourceHash } from '../semantic/embeddings.ts';

const withText = [
  'content.question.created.v1',
  'content.question.updated.v1',
  'content.question.published.v1',
  'content.question.restored.v1',
  'content.question.imported.v1',
] as const;

/** Keeps a question's text as its latest event says; an unchanged text is left alone (its vector stays). */
async function keepText(tx: Tx<SearchSchema>, question: QuestionSnapshot) {
  const text = embeddingText(question.title, question.description_text);
  const hash = sourceHash(text);
  await tx
    .insertInto('question_texts')
    .values({ question_id: question.id, text, source_hash: hash })
    .onConflict((oc) =>
      oc
        .column('question_id')
        .doUpdateSet({ text, source_hash: hash, updated: new Date() })
        .where('question_texts.source_hash', '<>', hash),
    )
    .execute();
}

/**
 * The texts the embeddings are made of (semantic/embeddings.ts): one durable consumer shared by the
 * instances, delivered the question events only (`content.question.*.v1`). A new consumer starts at
 * the beginning of the stream: the first start after an upgrade fills the table with every
 * question, which the embedding job then works through in the background.
 */
export function startQuestionTextConsumer(options: { bus: Bus; db: Db<SearchSchema> }): Promise<Consumer> {
  const handlers: EventHandlers<'content', Exclude<StreamSubject<'content'>, (typeof withText)[number]>> = {
    'content.question.created.v1': (tx, e) => keepText(tx as Tx<SearchSchema>, e.data.question),
    'content.question.updated.v1': (tx, e) => keepText(tx as Tx<SearchSchema>, e.data.question),
    'content.question.published.v1': (tx, e) => keepText(tx as Tx<SearchSchema>, e.data.question),
    'content.question.restored.v1': (tx, e) => keepText(tx as Tx<SearchSchema>, e.data.question),
    'content.question.imported.v1': (tx, e) => keepText(tx as Tx<SearchSchema>, e.data.question),
  };
  return startConsumer({
    bus: options.bus,
    db: options.db,
    durable: 'search-question-texts',
    stream: 'content',
    filter: 'content.question.*.v1',
    ignore: subjectsExcept('content', withText),
    handlers,
    // A text is one upsert: a commit an event cost an import's catch-up a fifth of the search
    // service's CPU and most of Postgres's.
    perTransaction: 100,
  });
}
