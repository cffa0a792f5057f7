import type { EventEnvelope, EventSubject } from '@kn/contracts';
import { handlerOf, indexHandlers } from '../src/core/events.ts';
import { fitExpertModel } from '../src/domain/expert-history.ts';
import {
  DEFAULT_WEIGHTS,
  type Example,
  FEATURE_COUNT,
  FEATURES,
  fitWeights,
  learnModel,
  weightVector,
} from '../src/domain/expert-model.ts';
import { rankExperts } from '../src/domain/experts.ts';
import { LocalEvidence, localHistory } from '../src/local/evidence.ts';
import { SearchStore } from '../src/local/store.ts';

const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** A small network: six topics, each with its own words, tag and two people who know it; a few generalists. */
const topics = ['hops', 'yeast', 'barrel', 'cider', 'lager', 'stout'].map((tag, t) => ({
  tag,
  words: Array.from(
    { length: 8 },
    (_, k) => `${tag}${['aroma', 'temperature', 'timing', 'storage', 'flavour', 'method', 'recipe', 'gear'][k]}`,
  ),
  experts: [100 + 2 * t, 101 + 2 * t],
}));
const generalists = [200, 201];
const posers = Array.from({ length: 20 }, (_, i) => 300 + i);

interface Asked {
  id: number;
  time: number;
  topic: (typeof topics)[number];
  poser: number;
  answers: Array<{ id: number; author: number; time: number; accepted: boolean }>;
}

/** Question i of the network: deterministic, so every store built from it holds the same network. */
function asked(i: number): Asked {
  const topic = topics[(i * 5) % topics.length]!;
  const time = START + i * DAY;
  const expert = topic.experts[i % 2]!;
  const other = i % 3 === 0 ? generalists[i % 2]! : topic.experts[(i + 1) % 2]!;
  return {
    id: 1000 + i,
    time,
    topic,
    poser: posers[i % posers.length]!,
    answers: [
      { id: 5000 + 2 * i, author: expert, time: time + 3_600_000, accepted: i % 4 !== 3 },
      { id: 5001 + 2 * i, author: other, time: time + 7_200_000, accepted: false },
    ],
  };
}

function apply(store: SearchStore, subject: EventSubject, time: number, data: unknown) {
  const handler = handlerOf(indexHandlers, subject)!;
  handler(store, { id: '', subject, occurred_at: iso(time), actor_id: null, data } as EventEnvelope);
}

const solution = (
  q: Asked,
  a: Asked['answers'][number],
  changes: { upvotes?: number; accepted_at?: number | null; deleted?: boolean } = {},
) => ({
  id: a.id,
  question_id: q.id,
  author_id: a.author,
  text: `${q.topic.words.join(' ')} answer`,
  is_published: true,
  is_deleted: changes.deleted ?? false,
  published: iso(a.time),
  created: iso(a.time),
  rating: null,
  rating_count: 0,
  upvote_count: changes.upvotes ?? 0,
  accepted_by_question_poser:
    changes.accepted_at === undefined
      ? a.accepted
        ? iso(a.time + DAY)
        : null
      : changes.accepted_at === null
        ? null
        : iso(changes.accepted_at),
});

/** Question, answers, acceptance, in the order given. */
function addQuestion(store: SearchStore, q: Asked) {
  store.transaction(() => {
    apply(store, 'content.question.published.v1', q.time, {
      question: {
        id: q.id,
        author_id: q.poser,
        language: 'en',
        title: `Question about ${q.topic.words[q.id % 8]} and ${q.topic.words[(q.id + 3) % 8]}`,
        description_text: `${q.topic.words.slice(0, 4).join(' ')} please help`,
        tags: [{ label: q.topic.tag }],
        category: null,
        knowledge_space: null,
        is_published: true,
        is_deleted: false,
        published: iso(q.time),
      },
      followers: [],
    });
    for (const a of q.answers) apply(store, 'content.solution.published.v1', a.time, { solution: solution(q, a, { accepted_at: null }) });
    for (const a of q.answers) if (a.accepted) apply(store, 'content.solution.accepted.v1', a.time + DAY, { solution: solution(q, a) });
  });
}

const stores: SearchStore[] = [];
const newStore = () => {
  const store = new SearchStore(':memory:');
  stores.push(store);
  return store;
};
afterAll(() => {
  for (const store of stores) store.close();
});

const QUESTIONS = 150;
const CUTOFF = START + QUESTIONS * DAY;
const fit = async (store: SearchStore, cutoff: number) =>
  fitExpertModel({ ...(await localHistory(store, cutoff)), routings: [] }, CUTOFF + 100 * DAY);

describe('the expert model learns from the network itself', () => {
  test('what happens after the cut-off does not change the model', async () => {
    const store = newStore();
    for (let i = 0; i < QUESTIONS; i++) addQuestion(store, asked(i));
    const before = await fit(store, CUTOFF);
    expect(before.status).toBe('fitted');
    expect(before.questions).toBeGreaterThan(100);
    // After the cut-off: new questions and answers, votes and a deletion on old answers, a late
    // acceptance, a forward, another person answering old questions.
    for (let i = QUESTIONS; i < QUESTIONS + 40; i++) addQuestion(store, asked(i));
    store.transaction(() => {
      const late = CUTOFF + 50 * DAY;
      for (let i = 0; i < 30; i++) {
        const q = asked(i);
        apply(store, 'content.solution.upvoted.v1', late + i, { solution: solution(q, q.answers[0]!, { upvotes: 3 }) });
      }
      const q = asked(3);
      apply(store, 'content.solution.accepted.v1', late, { solution: solution(q, q.answers[1]!, { accepted_at: late }) });
      apply(store, 'content.solution.deleted.v1', late, { solution: solution(asked(5), asked(5).answers[0]!, { deleted: true }) });
      apply(store, 'content.question.forwarded.v1', late, { question: { id: asked(7).id }, recipient_id: 201 });
    });
    const after = await fit(store, CUTOFF);
    expect(after).toEqual(before);
    // The same facts before the cut-off count: a later cut-off sees more and learns otherwise.
    const later = await fit(store, CUTOFF + 60 * DAY);
    expect(later.questions).toBeGreaterThan(before.questions);
    expect(later.weights).not.toEqual(before.weights);
  });

  test('a network with no answered questions gets the defaults, and says so', async () => {
    const store = newStore();
    for (let i = 0; i < 30; i++) {
      const q = asked(i);
      addQuestion(store, { ...q, answers: q.answers.map((a) => ({ ...a, accepted: false })) });
    }
    const model = await fit(store, CUTOFF);
    expect(model).toMatchObject({ status: 'default', fitted_at: null, questions: 0, weights: DEFAULT_WEIGHTS });
    expect(model.validation).toEqual({ queries: 0, mrr: null, popularity_mrr: null });
    expect(await fit(newStore(), CUTOFF)).toMatchObject({ status: 'default', weights: DEFAULT_WEIGHTS });
  });

  test('the same network gives the same model and ranking, whatever the order its content arrived in', async () => {
    const inOrder = newStore();
    const shuffled = newStore();
    const order = Array.from({ length: QUESTIONS }, (_, i) => i);
    for (const i of order) addQuestion(inOrder, asked(i));
    for (const i of [...order].sort((a, b) => ((a * 7919) % 151) - ((b * 7919) % 151))) addQuestion(shuffled, asked(i));
    const [a, b] = [await fit(inOrder, CUTOFF), await fit(shuffled, CUTOFF)];
    expect(b).toEqual(a);
    const rank = async (store: SearchStore) =>
      (
        await rankExperts(
          new LocalEvidence(store),
          { text: 'hopsaroma hopstiming question', limit: 10 },
          { weights: weightVector(a), responses: async () => new Map() },
        )
      ).experts.map((e) => [e.user_id, e.score]);
    const ranked = await rank(inOrder);
    expect(ranked.length).toBeGreaterThan(1);
    // The people who answer hops questions come first.
    expect(topics[0]!.experts).toContain(ranked[0]![0]);
    expect(await rank(shuffled)).toEqual(ranked);
  });

  test('the people who answered the asker before are evidence for that asker, never the asker themselves', async () => {
    const store = newStore();
    for (let i = 0; i < QUESTIONS; i++) addQuestion(store, asked(i));
    const poser = posers[0]!;
    // The poser also answered one of their own questions: never their own expert.
    const own = asked(0);
    store.transaction(() =>
      apply(store, 'content.solution.published.v1', own.time + DAY, {
        solution: solution(own, { id: 9999, author: poser, time: own.time + DAY, accepted: false }),
      }),
    );
    const answeredPoser = new Set(
      Array.from({ length: QUESTIONS }, (_, i) => asked(i))
        .filter((q) => q.poser === poser)
        .flatMap((q) => q.answers.map((a) => a.author)),
    );
    const evidence = new LocalEvidence(store);
    const record = await evidence.askerRecord(poser, CUTOFF);
    expect(new Set(record.keys())).toEqual(new Set([...answeredPoser, poser]));
    for (const value of record.values()) expect(value).toBeGreaterThan(0);

    const column = FEATURES.indexOf('asker_record');
    const rank = async (asker?: number) => {
      const ranked = await rankExperts(
        evidence,
        { text: 'hopsaroma hopstiming question', limit: 10, asker },
        { weights: weightVector({ weights: DEFAULT_WEIGHTS }), responses: async () => new Map() },
      );
      return new Map(ranked.candidates.map((user, j) => [user, ranked.rows[j * FEATURE_COUNT + column]!]));
    };
    const forPoser = await rank(poser);
    // The poser is a candidate (a record on hops), but answering themselves is no evidence.
    expect(forPoser.get(poser)).toBe(0);
    for (const [user, value] of forPoser) if (user !== poser) expect(value > 0).toBe(answeredPoser.has(user));
    expect([...forPoser.values()].filter((v) => v > 0).length).toBeGreaterThan(0);
    // Evidence on the candidates of the topic, never a candidate of its own: the same people, and for an anonymous search none of it.
    const anonymous = await rank();
    for (const value of anonymous.values()) expect(value).toBe(0);
    expect([...anonymous.keys()]).toEqual([...forPoser.keys()]);
  });
});

describe('the learner', () => {
  /** Examples where the first feature tells the relevant candidate, with noise in the others. */
  const examples = (n: number, seed: number): Example[] =>
    Array.from({ length: n }, (_, k) => {
      const candidates = 6;
      const rows = new Float64Array(candidates * FEATURE_COUNT);
      const relevant = (k * 7 + seed) % candidates;
      for (let j = 0; j < candidates; j++)
        for (let i = 0; i < FEATURE_COUNT; i++)
          rows[j * FEATURE_COUNT + i] = Math.sin(k * 31 + j * 17 + i * 13 + seed) + (i === 0 && j === relevant ? 2 : 0);
      return { rows, candidates, relevant, popularityRank: k % 3 === 0 ? 1 : 0 };
    });

  test('learns the evidence that tells the relevant person, validated on the latest examples', async () => {
    const model = await learnModel(examples(200, 1), { cutoff: 0, now: 0, questions: 200 });
    expect(model.status).toBe('fitted');
    expect(model.weights.tag_record).toBeGreaterThan(DEFAULT_WEIGHTS.tag_record + 1);
    expect(model.validation.queries).toBe(40);
    expect(model.validation.mrr!).toBeGreaterThan(model.validation.popularity_mrr!);
    expect(await learnModel(examples(200, 1), { cutoff: 0, now: 0, questions: 200 })).toEqual(model);
  });

  test('a strong pull keeps the defaults; too few examples give them', async () => {
    const pulled = await fitWeights(examples(50, 2), weightVector({ weights: DEFAULT_WEIGHTS }), 1e9);
    for (const [i, f] of FEATURES.entries()) expect(pulled[i]).toBeCloseTo(DEFAULT_WEIGHTS[f], 3);
    expect(await learnModel(examples(10, 3), { cutoff: 0, questions: 10 })).toMatchObject({ status: 'default', weights: DEFAULT_WEIGHTS });
  });

  test('when the network changes, the latest examples count more', async () => {
    // The first 160 examples are told by the first feature, the latest 40 by the second.
    const changing = [...examples(160, 5), ...examples(40, 6)].map((e, k) => {
      if (k < 160) return e;
      const rows = Float64Array.from(e.rows);
      rows[e.relevant * FEATURE_COUNT] = rows[e.relevant * FEATURE_COUNT]! - 2;
      rows[e.relevant * FEATURE_COUNT + 1] = rows[e.relevant * FEATURE_COUNT + 1]! + 2;
      return { ...e, rows };
    });
    const prior = weightVector({ weights: DEFAULT_WEIGHTS });
    const alike = await fitWeights(changing, prior, 1);
    const recent = await fitWeights(changing, prior, 1, undefined, undefined, 0.1);
    expect(recent[1]! - recent[0]!).toBeGreaterThan(alike[1]! - alike[0]! + 0.5);
  });

  test('a feature that is not a number fails the fit instead of giving a model', async () => {
    const bad = examples(60, 4);
    bad[3]!.rows[2] = Number.NaN;
    await expect(learnModel(bad, { cutoff: 0, questions: 60 })).rejects.toThrow('not a finite number');
  });
});
