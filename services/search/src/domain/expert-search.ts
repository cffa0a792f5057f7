import type { RoutedQuestion } from '@kn/contracts';
import type { SearchBackend } from '../core/backend.ts';
import { type ExpertQuery, type RoutingResponse, rankExperts } from './experts.ts';
import { type Meaning, semanticWeights, withMeaning } from './semantic.ts';
import type { Viewer } from './visibility.ts';

/** Similar questions named as a reason, at most. */
const REASON_QUESTIONS = 3;

export interface ExpertDetails {
  solution_count: number;
  average_rating: number | null;
  recommendation_count: number;
  expert_tags: Array<{ label: string }>;
  /** Why this person (an addition to the interface's details). */
  reasons: {
    /** The tags of the search they have a record on, with how surely the text is about each (0 … 1). */
    tags: Array<{ label: string; weight: number }>;
    /** Similar questions they answered (the caller can see), most similar first. */
    similar_questions: Array<{ id: number; title: string; similarity: number }>;
  };
}

export interface FoundExperts {
  /** Labels of the tags used, the text's own first, linked ones last. */
  tags: string[];
  experts: Array<{ user_id: number; score: number; details: ExpertDetails }>;
}

/** The weights of the expert model in force, in FEATURES order (jobs/expert-models.ts keeps them). */
export interface ExpertWeights {
  weights(): Float64Array;
}

/**
 * Expert search as the service answers it: the ranking (experts.ts) over the backend's evidence
 * with the model in force and how people responded to routings, then each expert's details and
 * reasons. `viewer` is the caller (null: routing). A caller is answered from what they may read:
 * the closed knowledge spaces they are not a member of lend no tags, no records, no similar
 * questions and no reasons, so nobody is named for them on the strength of content they cannot
 * read. Routing reads everything (the question goes to the people who know, and only the members
 * of its space when that is closed), and names no closed space's questions as reasons.
 */
export class ExpertSearch {
  private readonly backend: SearchBackend;
  private readonly models: ExpertWeights;
  private readonly responses: (users: readonly number[]) => Promise<Map<number, RoutingResponse>>;
  private readonly meaningOf: (source: { question_id?: number; text?: string }) => Promise<Meaning | undefined>;

  constructor(options: {
    backend: SearchBackend;
    models: ExpertWeights;
    responses: (users: readonly number[]) => Promise<Map<number, RoutingResponse>>;
    /** The meaning of a question or text (semantic/embeddings.ts); none without a model. */
    meaningOf?: (source: { question_id?: number; text?: string }) => Promise<Meaning | undefined>;
  }) {
    this.backend = options.backend;
    this.models = options.models;
    this.responses = options.responses;
    this.meaningOf = options.meaningOf ?? (async () => undefined);
  }

  /** The experts on a text. */
  async find(query: ExpertQuery, viewer: Viewer | null): Promise<FoundExperts> {
    const { backend } = this;
    const unreadable = viewer ? await backend.hiddenSpaces(viewer) : [];
    const meaning = await this.meaningOf({ question_id: query.question_id, text: query.text });
    const evidence = withMeaning(backend.evidence(unreadable), meaning, semanticWeights.experts);
    const ranked = await rankExperts(evidence, query, { weights: this.models.weights(), responses: this.responses });
    if (!ranked.experts.length) return { tags: ranked.tags.map((t) => t.label), experts: [] };
    const label = new Map(ranked.tags.map((t) => [t.key, t.label]));
    const records = await backend.expertRecords(
      ranked.experts.map((e) => e.user_id),
      new Set(ranked.tags.map((t) => t.key)),
      unreadable,
    );
    const hidden = new Set(unreadable);
    if (viewer === null) {
      const spaces = new Set(
        ranked.experts.flatMap((e) => e.reasons.similar.flatMap((s) => (s.knowledge_space_id === null ? [] : [s.knowledge_space_id]))),
      );
      for (const space of spaces) if (await backend.closedSpaceMembers(space)) hidden.add(space);
    }
    const named = new Map(
      ranked.experts.map((e) => [
        e.user_id,
        e.reasons.similar.filter((s) => s.knowledge_space_id === null || !hidden.has(s.knowledge_space_id)).slice(0, REASON_QUESTIONS),
      ]),
    );
    const titles = await backend.titles([...new Set([...named.values()].flat().map((s) => s.id))]);
    return {
      tags: ranked.tags.map((t) => t.label),
      experts: ranked.experts.map(({ user_id, score, reasons }) => {
        const r = records.get(user_id) ?? { solution_count: 0, average_rating: null, recommendation_count: 0, expert_tags: [] };
        return {
          user_id,
          score,
          details: {
            solution_count: r.solution_count,
            average_rating: r.average_rating,
            recommendation_count: r.recommendation_count,
            expert_tags: r.expert_tags.map((key) => ({ label: label.get(key) ?? key })),
            reasons: {
              tags: reasons.tags.map((t) => ({ label: label.get(t.key) ?? t.key, weight: Math.round(t.weight * 1000) / 1000 })),
              similar_questions: named
                .get(user_id)!
                .map((s) => ({ id: s.id, title: titles.get(s.id) ?? '', similarity: Math.round(s.score * 1000) / 1000 })),
            },
          },
        };
      }),
    };
  }

  /** The experts on a question: its own tags certainly; never its poser nor `exclude`; only members for a closed space. */
  async on(question: RoutedQuestion, limit: number, exclude: readonly number[], viewer: Viewer | null): Promise<FoundExperts> {
    return this.find(
      {
        text: `${question.title}\n${question.text}`,
        question_id: question.id,
        tags: question.tags,
        language: question.language,
        limit,
        exclude: [question.author_id, ...exclude],
        asker: question.author_id,
        only: question.knowledge_space_id === null ? undefined : await this.backend.closedSpaceMembers(question.knowledge_space_id),
      },
      viewer,
    );
  }
}
