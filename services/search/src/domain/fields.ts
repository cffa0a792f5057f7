import type { SearchField } from '@kn/contracts';

/**
 * Field weights of question search's BM25 (a field's term frequency is multiplied by its weight, as
 * in FTS5's `bm25()`). With k1 = 1.2 a title hit saturates near 2 × idf, a hit in a description of
 * average length gives 1 × idf, a comment or attachment hit about 0.3 × idf: after calibration
 * (score = bm25 / reference) title matches land clearly above 1.0 and comment-only matches clearly below.
 */
export const fieldWeights: Readonly<Record<SearchField, number>> = Object.freeze({
  title: 10,
  description: 1,
  tags: 6,
  solutions: 0.7,
  comments: 0.25,
  attachments: 0.25,
});

/**
 * A question as similar-question search sees it (one unit): title twice, description, tags and
 * solutions once, comments a tenth (long threads drift off topic), attachments not at all. The
 * title and comment weights are chosen by cross-validation (bench/retrieval-cv.ts).
 */
export const unitFieldWeights: Readonly<Record<SearchField, number>> = Object.freeze({
  title: 2,
  description: 1,
  tags: 1,
  solutions: 1,
  comments: 0.1,
  attachments: 0,
});

/**
 * What was asked (title twice, description, tags): the part of a question expert search compares,
 * since its answers are by the very people it looks for, and come later.
 */
export const askedFieldWeights: Readonly<Partial<Record<SearchField, number>>> = Object.freeze({ title: 2, description: 1, tags: 1 });
