import { defaultModel, type Example, type ExpertModel, learnModel, validationStart, weightVector } from './expert-model.ts';
import { DAY, Expertise, fading, type SolutionFacts, solutionValue, timeWeight } from './expertise.ts';
import {
  type ExpertEvidence,
  type ExpertRanking,
  latestAnswered,
  type Neighbour,
  type RoutingResponse,
  rankExperts,
  type TagFacts,
  type UserFacts,
} from './experts.ts';
import { pacer } from './pace.ts';
import { topK, unitIdf } from './ranking.ts';
import { type Meaning, semanticWeights, withMeaning } from './semantic.ts';

/**
 * A network's past as the fit reads it, up to a cut-off: what was asked and when, who answered
 * and how their answers stood at each moment (acceptance, votes, ratings, deletion), forwards, and
 * how people responded to routings. Each backend reads it from its own index (local/evidence.ts,
 * elasticsearch/evidence.ts); the routings come from the search service's database.
 */
export interface NetworkHistory {
  /** Nothing at or after this time (ms) is in the history. */
  cutoff: number;
  /** Published before the cut-off and live, in time order (ties by id). */
  questions: HistoryQuestion[];
  solutions: HistorySolution[];
  forwards: Array<{ question_id: number; recipient_id: number; time: number }>;
  routings: RoutingOutcome[];
  /** The network's tags by lower-case label, with the time a question first carried each (0: known from the start). */
  tags: Map<string, TagFacts & { since: number }>;
  deletedUsers: ReadonlySet<number>;
  /** System users (an importer's placeholder author, a bot): never candidates, as now. */
  systemUsers: ReadonlySet<number>;
  minExperts: number;
  /** The word of a term id of `HistoryQuestion.terms` (equally weighted words are taken in word order, never in id order). */
  word(id: number): string;
}

export interface HistoryQuestion {
  id: number;
  author_id: number;
  time: number;
  tags: readonly string[];
  knowledge_space_id: number | null;
  /** Lower-case labels of the tags its title and description name. */
  named: readonly string[];
  /** Its words (ids of the history's own choosing) with their counts in title, description and tags. */
  terms: Int32Array;
  counts: Uint8Array;
}

export interface HistorySolution {
  id: number;
  question_id: number;
  author_id: number;
  /** When it was published (or created). */
  time: number;
  accepted_at: number | null;
  /** How it stood from each time on: the first entry when it appeared, then each change (time order). */
  states: Array<{ time: number; live: boolean; upvotes: number; rating: number | null; rating_count: number }>;
}

/** One routing of a question to a user: when, and when they answered it (null: never). */
export interface RoutingOutcome {
  user_id: number;
  time: number;
  answered_at: number | null;
}

/** A routing counts once its answer window has closed: answered within it, or not. */
export const RESPONSE_WINDOW_MS = 3 * DAY;
/** At most this many of the latest answered questions are learned from (older ones still build the evidence). */
export const MAX_EXAMPLES = 2000;

/** The question's accepted answerer, when the poser accepted someone else's live solution before the cut-off. */
function acceptedAnswerer(history: NetworkHistory, solutionsOf: Map<number, HistorySolution[]>) {
  const out = new Map<number, number>();
  const byId = new Map(history.questions.map((q) => [q.id, q]));
  for (const [questionId, solutions] of solutionsOf) {
    const q = byId.get(questionId);
    if (!q) continue;
    for (const s of solutions)
      if (s.accepted_at !== null && s.accepted_at < history.cutoff && s.author_id !== q.author_id && s.states.at(-1)?.live)
        out.set(questionId, s.author_id);
  }
  return out;
}

/**
 * The network as it stood at one moment of its past, advanced event by event: the evidence
 * expert search would have read then. It answers for one question at a time (`asking`).
 */
class Replay implements ExpertEvidence {
  readonly expertise = new Expertise();
  now = 0;
  asking: HistoryQuestion | null = null;
  /** Answers per user and when they last answered, for the popularity figures. */
  readonly answerCounts = new Map<number, number>();
  private readonly lastAnswer = new Map<number, number>();
  private readonly responses = new Map<number, RoutingResponse>();
  private readonly idf: Float64Array;
  /** Postings of the questions asked so far: word → (question index, weight in its unit-length vector). */
  private readonly postings = new Map<number, { questions: Int32Array; weights: Float64Array; size: number }>();
  /** Scratch of a neighbour search: partial dot products by question index, the query's weights by word. */
  private partial = new Float64Array(1024);
  private touched = new Int32Array(1024);
  private marks = new Uint32Array(1024);
  private epoch = 0;
  private readonly dense: Float64Array;
  private readonly vectors: Array<{ terms: Int32Array; weights: Float64Array }> = [];
  private readonly asked: HistoryQuestion[] = [];
  private readonly solutionsOf: Map<number, HistorySolution[]>;
  /** Each solution's facts as they stand now in the replay (undefined: not there yet). */
  private readonly current = new Map<number, SolutionFacts>();
  private readonly history: NetworkHistory;
  private readonly questionTags = new Map<number, string[]>();
  private readonly questionAuthor = new Map<number, number>();
  /** Per asker, per user who answered them: Σ solutionValue · timeWeight of the live solutions. */
  private readonly askers = new Map<number, Map<number, number>>();

  constructor(history: NetworkHistory, solutionsOf: Map<number, HistorySolution[]>) {
    this.history = history;
    this.solutionsOf = solutionsOf;
    let maxTerm = 0;
    for (const q of history.questions) for (const t of q.terms) maxTerm = Math.max(maxTerm, t + 1);
    const df = new Int32Array(maxTerm);
    for (const q of history.questions) for (const t of q.terms) df[t]!++;
    const n = history.questions.length;
    this.idf = Float64Array.from(df, (f) => unitIdf(n, f));
    this.dense = new Float64Array(maxTerm);
    for (const q of history.questions) {
      this.questionTags.set(q.id, [...new Set(q.tags.map((t) => t.toLowerCase()))]);
      this.questionAuthor.set(q.id, q.author_id);
    }
  }

  /** A question's unit-length vector as a document (title twice, description, tags) or as a query (title and description once). */
  private vector(q: HistoryQuestion, asQuery: boolean) {
    const weights = new Float64Array(q.terms.length);
    let norm = 0;
    for (let i = 0; i < q.terms.length; i++) {
      const c = asQuery ? q.counts[3 * i]! + q.counts[3 * i + 1]! : 2 * q.counts[3 * i]! + q.counts[3 * i + 1]! + q.counts[3 * i + 2]!;
      const w = c > 0 ? Math.log1p(c) * this.idf[q.terms[i]!]! : 0;
      weights[i] = w;
      norm += w * w;
    }
    const length = Math.sqrt(norm) || 1;
    return { terms: q.terms, weights: weights.map((w) => w / length) };
  }

  addQuestion(q: HistoryQuestion) {
    const index = this.asked.length;
    const v = this.vector(q, false);
    this.asked.push(q);
    this.vectors.push(v);
    for (let i = 0; i < v.terms.length; i++) {
      if (v.weights[i]! <= 0) continue;
      let list = this.postings.get(v.terms[i]!);
      if (!list) {
        list = { questions: new Int32Array(4), weights: new Float64Array(4), size: 0 };
        this.postings.set(v.terms[i]!, list);
      }
      if (list.size === list.questions.length) {
        const questions = new Int32Array(list.size * 2);
        questions.set(list.questions);
        const weights = new Float64Array(list.size * 2);
        weights.set(list.weights);
        list.questions = questions;
        list.weights = weights;
      }
      list.questions[list.size] = index;
      list.weights[list.size++] = v.weights[i]!;
    }
    if (this.partial.length <= index) {
      const size = this.partial.length * 2;
      this.partial = new Float64Array(size);
      this.touched = new Int32Array(size);
      this.marks = new Uint32Array(size);
      this.epoch = 0;
    }
  }

  /** A solution's facts from `time` on: takes back what it contributed, adds what it contributes now. */
  setSolution(s: HistorySolution, state: HistorySolution['states'][number], time: number) {
    const tags = this.questionTags.get(s.question_id) ?? [];
    const before = this.current.get(s.id);
    if (before?.live) this.change(tags, before, -1);
    const facts: SolutionFacts = {
      id: s.id,
      question_id: s.question_id,
      author_id: s.author_id,
      live: state.live,
      time: s.time,
      rating: state.rating,
      rating_count: state.rating_count,
      upvotes: state.upvotes,
      accepted_at: s.accepted_at !== null && s.accepted_at <= time ? s.accepted_at : null,
    };
    this.current.set(s.id, facts);
    if (facts.live) this.change(tags, facts, 1);
  }

  private change(tags: readonly string[], s: SolutionFacts, sign: 1 | -1) {
    this.expertise.applySolution(tags, s, sign);
    const asker = this.questionAuthor.get(s.question_id);
    if (asker !== undefined) {
      const answerers = this.askers.get(asker) ?? new Map<number, number>();
      this.askers.set(asker, answerers);
      answerers.set(s.author_id, (answerers.get(s.author_id) ?? 0) + sign * solutionValue(s) * timeWeight(s.time));
    }
    this.answerCounts.set(s.author_id, (this.answerCounts.get(s.author_id) ?? 0) + sign);
    if (sign > 0) this.lastAnswer.set(s.author_id, Math.max(this.lastAnswer.get(s.author_id) ?? 0, s.time));
  }

  addForward(questionId: number, recipient: number) {
    this.expertise.applyForward(this.questionTags.get(questionId) ?? [], recipient, 1);
  }

  addRouting(r: RoutingOutcome) {
    const response = this.responses.get(r.user_id) ?? { routed: 0, answered: 0 };
    response.routed++;
    if (r.answered_at !== null && r.answered_at - r.time <= RESPONSE_WINDOW_MS) response.answered++;
    this.responses.set(r.user_id, response);
  }

  async routingResponses(users: readonly number[]) {
    return new Map(users.flatMap((u) => (this.responses.has(u) ? [[u, this.responses.get(u)!] as const] : [])));
  }

  // ExpertEvidence, for the question being asked, as of `now`.
  async clock() {
    return this.now;
  }

  async neighbours(_text: string, _language: string | undefined, limit: number): Promise<Neighbour[]> {
    const q = this.asking;
    if (!q) return [];
    const query = this.vector(q, true);
    // As local/similarity.ts: the most informative words find the candidates, the whole vector ranks them.
    const word = (i: number) => this.history.word(query.terms[i]!);
    const informative = [...query.terms.keys()]
      .filter((i) => query.weights[i]! > 0)
      .sort((a, b) => query.weights[b]! - query.weights[a]! || (word(a) < word(b) ? -1 : 1))
      .slice(0, 24);
    if (++this.epoch === 0xffffffff) {
      this.marks.fill(0);
      this.epoch = 1;
    }
    const { partial, touched, marks, epoch, dense } = this;
    let size = 0;
    let budget = 0;
    for (const [k, i] of informative.entries()) {
      const list = this.postings.get(query.terms[i]!);
      if (!list) continue;
      if (k >= 4 && budget + list.size > 20_000) continue;
      budget += list.size;
      const weight = query.weights[i]!;
      for (let p = 0; p < list.size; p++) {
        const at = list.questions[p]!;
        if (marks[at] !== epoch) {
          marks[at] = epoch;
          partial[at] = 0;
          touched[size++] = at;
        }
        partial[at]! += list.weights[p]! * weight;
      }
    }
    // Sums rounded: taken in another word order they must not tell equals apart; ties to the newer question.
    const round = (v: number) => Math.round(v * 1e12) / 1e12;
    const best = topK(touched.subarray(0, size), (a, b) => round(partial[a]!) - round(partial[b]!) || a - b, 200);
    for (let i = 0; i < query.terms.length; i++) if (query.weights[i]! > 0) dense[query.terms[i]!] = query.weights[i]!;
    const scored = best.map((index) => {
      const v = this.vectors[index]!;
      let dot = 0;
      for (let i = 0; i < v.terms.length; i++) dot += v.weights[i]! * dense[v.terms[i]!]!;
      return { index, score: round(Math.min(1, Math.max(0, dot))) };
    });
    for (const t of query.terms) dense[t] = 0;
    return scored
      .filter((c) => c.score > 0)
      .sort((a, b) => b.score - a.score || this.asked[b.index]!.time - this.asked[a.index]!.time || b.index - a.index)
      .slice(0, limit)
      .map(({ index, score }) => {
        const n = this.asked[index]!;
        const solutions = (this.solutionsOf.get(n.id) ?? []).flatMap((s) => {
          const facts = this.current.get(s.id);
          return facts?.live ? [{ author_id: facts.author_id, time: facts.time, value: solutionValue(facts) }] : [];
        });
        return { id: n.id, score, time: n.time, tags: n.tags, knowledge_space_id: n.knowledge_space_id, solutions };
      });
  }

  async namedTags() {
    return new Set((this.asking?.named ?? []).filter((key) => (this.history.tags.get(key)?.since ?? Infinity) <= this.now));
  }

  async tags(keys: readonly string[]) {
    const out = new Map<string, TagFacts>();
    for (const key of keys) {
      const tag = this.history.tags.get(key);
      if (tag && tag.since <= this.now) out.set(key, tag);
    }
    return out;
  }

  async onTags(keys: readonly string[]) {
    return new Map(keys.map((key) => [key, this.expertise.tagUsers(key)]));
  }

  async answers() {
    return this.expertise.answers;
  }

  async users(ids: readonly number[]) {
    const out = new Map<number, UserFacts>();
    for (const id of ids) {
      const record = this.expertise.user(id) ?? { answers: 0, accepted: 0, value: 0, times: new Float64Array(0) };
      out.set(id, { ...record, deleted: this.history.deletedUsers.has(id), system: this.history.systemUsers.has(id) });
    }
    return out;
  }

  async answered(users: readonly number[]) {
    return new Map(users.map((user) => [user, latestAnswered(this.expertise.answeredBy(user))] as const));
  }

  async minExperts() {
    return this.history.minExperts;
  }

  async askerRecord(asker: number, now: number) {
    const fade = fading(now);
    return new Map([...(this.askers.get(asker) ?? [])].map(([user, value]) => [user, value * fade] as const));
  }

  /** The rank (1…10) of a user among everyone by answers so far (ties: who answered last first), 0 below the tenth. */
  popularityRank(user: number) {
    const mine = this.answerCounts.get(user) ?? 0;
    if (mine <= 0) return 0;
    const last = (u: number) => this.expertise.user(u)?.times.at(-1) ?? 0;
    let rank = 1;
    for (const [other, count] of this.answerCounts)
      if (count > mine || (count === mine && other !== user && (last(other) > last(user) || (last(other) === last(user) && other < user))))
        rank++;
    return rank <= 10 ? rank : 0;
  }
}

type Event =
  | { time: number; order: 0; kind: 'routing'; routing: RoutingOutcome }
  | { time: number; order: 1; kind: 'question'; question: HistoryQuestion }
  | { time: number; order: 2; kind: 'solution'; solution: HistorySolution; state: HistorySolution['states'][number] }
  | { time: number; order: 3; kind: 'forward'; question_id: number; recipient_id: number };

/**
 * The examples a network's past teaches: each answered question (the latest MAX_EXAMPLES), asked
 * as POST /search/experts asks (its title and description, no tags, its poser left out) of the
 * network as it stood just before it was published, with the person whose answer its poser
 * accepted. Nothing at or after the cut-off is read. `ranking`: rankExperts' parameters (a benchmark's).
 */
export async function historyExamples(
  history: NetworkHistory,
  ranking?: Readonly<ExpertRanking>,
  /** A past question's meaning (its stored embedding), when the network has them: expert search reads it too. */
  meaningOf?: (questionId: number) => Meaning | undefined,
): Promise<{ examples: Example[]; answered: number }> {
  const solutionsOf = new Map<number, HistorySolution[]>();
  for (const s of history.solutions) {
    if (s.time >= history.cutoff) continue;
    const list = solutionsOf.get(s.question_id) ?? [];
    list.push(s);
    solutionsOf.set(s.question_id, list);
  }
  const expertOf = acceptedAnswerer(history, solutionsOf);
  const labelled = history.questions.filter((q) => expertOf.has(q.id));
  const learning = labelled.slice(-MAX_EXAMPLES);
  const learnFrom = new Set(learning.map((q) => q.id));
  // Popularity is the validation's yardstick: only the latest examples need it.
  const yardstick = new Set(learning.slice(validationStart(learning.length)).map((q) => q.id));
  const pace = pacer();
  const events: Event[] = [];
  for (const q of history.questions) events.push({ time: q.time, order: 1, kind: 'question', question: q });
  for (const list of solutionsOf.values()) {
    const pause = pace();
    if (pause) await pause;
    for (const s of list) {
      // Each state from its time on (states are in time order); acceptance is a change of its own, at its time.
      const accepted = s.accepted_at;
      let acceptanceDone = accepted === null || accepted >= history.cutoff;
      s.states.forEach((state, i) => {
        if (state.time >= history.cutoff) return;
        const until = s.states[i + 1]?.time ?? Infinity;
        events.push({ time: Math.max(state.time, s.time), order: 2, kind: 'solution', solution: s, state });
        if (!acceptanceDone && accepted! > state.time && accepted! < until) {
          events.push({ time: Math.max(accepted!, s.time), order: 2, kind: 'solution', solution: s, state });
          acceptanceDone = true;
        }
      });
    }
  }
  for (const f of history.forwards)
    if (f.time < history.cutoff)
      events.push({ time: f.time, order: 3, kind: 'forward', question_id: f.question_id, recipient_id: f.recipient_id });
  for (const r of history.routings) {
    // Its outcome is known once the window has closed.
    const known = r.time + RESPONSE_WINDOW_MS;
    if (known < history.cutoff)
      events.push({
        time: known,
        order: 0,
        kind: 'routing',
        routing: { ...r, answered_at: r.answered_at !== null && r.answered_at < history.cutoff ? r.answered_at : null },
      });
  }
  const key = (e: Event) =>
    e.kind === 'question'
      ? e.question.id
      : e.kind === 'solution'
        ? e.solution.id
        : e.kind === 'forward'
          ? e.question_id
          : e.routing.user_id;
  // In order of time: by day first (each day sorted on its own, between yields), not one sort of all.
  const byDay = new Map<number, Event[]>();
  for (const e of events) {
    const day = Math.floor(e.time / DAY);
    const list = byDay.get(day);
    if (list) list.push(e);
    else byDay.set(day, [e]);
  }
  const days = [...byDay.keys()].sort((a, b) => a - b);

  const replay = new Replay(history, solutionsOf);
  const weights = weightVector(defaultModel());
  const examples: Example[] = [];
  for (const day of days) {
    const pause = pace();
    if (pause) await pause;
    const today = byDay.get(day)!.sort((a, b) => a.time - b.time || a.order - b.order || key(a) - key(b));
    for (const e of today) await replayEvent(e);
  }
  return { examples, answered: labelled.length };

  async function replayEvent(e: Event) {
    replay.now = e.time;
    if (e.kind === 'question') {
      const q = e.question;
      const expert = expertOf.get(q.id);
      if (expert !== undefined && learnFrom.has(q.id)) {
        replay.asking = q;
        const ranked = await rankExperts(
          withMeaning(replay, meaningOf?.(q.id), semanticWeights.experts),
          { text: '', limit: 0, exclude: [q.author_id], asker: q.author_id, now: q.time },
          { weights, responses: (users) => replay.routingResponses(users), ranking },
        );
        replay.asking = null;
        examples.push({
          rows: ranked.rows,
          candidates: ranked.candidates.length,
          relevant: ranked.candidates.indexOf(expert),
          popularityRank: yardstick.has(q.id) ? replay.popularityRank(expert) : 0,
        });
        const pause = pace();
        if (pause) await pause;
      }
      replay.addQuestion(q);
    } else if (e.kind === 'solution') replay.setSolution(e.solution, e.state, e.time);
    else if (e.kind === 'forward') replay.addForward(e.question_id, e.recipient_id);
    else replay.addRouting(e.routing);
  }
}

/** The model a network's past teaches (the defaults when it has too little of one). */
export async function fitExpertModel(
  history: NetworkHistory,
  now = Date.now(),
  ranking?: Readonly<ExpertRanking>,
  meaningOf?: (questionId: number) => Meaning | undefined,
): Promise<ExpertModel> {
  const { examples, answered } = await historyExamples(history, ranking, meaningOf);
  return learnModel(examples, { cutoff: history.cutoff, now, questions: answered, pace: pacer() });
}
