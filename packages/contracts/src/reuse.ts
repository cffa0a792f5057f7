import { z } from 'zod';
import { Timestamp } from './common.ts';

/**
 * What people do with knowledge the network already holds (docs/analytics.md, "Reuse"): views of
 * questions, counted in batches, and the similar questions shown to a draft while it is written.
 * Published by the content service; the analytics service folds them into its reuse figures.
 */

const QuestionRef = z.object({
  id: z.number().int(),
  author_id: z.number().int(),
  knowledge_space_id: z.number().int().nullable(),
});

/** Events of reuse. */
export const reuseEvents = {
  'content.question.views-counted.v1': z
    .object({
      until: Timestamp.describe('the views counted up to this time since the previous event'),
      questions: z
        .array(
          z.object({
            question_id: z.number().int(),
            views: z.number().int().min(1).describe('views counted (once per person, question and day)'),
            solved_views: z.number().int().min(0).describe('of those, views while the question had a published solution'),
          }),
        )
        .max(1000),
    })
    .describe(
      'views of published questions, counted since the last such event: a job sends them every CONTENT_VIEW_EVENTS_MS, at most 1,000 questions per event',
    ),
  'content.question.similar-shown.v1': z
    .object({
      question: QuestionRef.describe('the draft'),
      similar: z.array(z.number().int()).max(100).describe('the similar questions shown, best first'),
    })
    .describe('GET /search/questions-similar?draft=: the first time similar questions were shown for a draft; once per draft'),
} as const;
