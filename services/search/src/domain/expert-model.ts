/**
 * The expert ranking's model: a weight per piece of evidence, and how the weights are learned from
 * a network's own past (domain/expert-history.ts replays it and hands the examples).
 *
 * The learner is a conditional logit (one relevant person among the candidates of each question,
 * the probability of each candidate ∝ exp(w · features)): the maximum-likelihood form of "rank the
 * person who was accepted first". It is convex, so Newton's method finds the one best weight vector
 * (deterministic, a dozen iterations for eight weights). The weights are pulled towards the
 * defaults (a Gaussian prior, on the standardised scale): a network with little history stays near
 * them, a network with much history moves as far as its data says. How hard they are pulled is
 * chosen on the latest part of the history, never on the future: fitted on the earlier 80% of the
 * questions (time order), the strength whose model predicts the latest 20% best (log-likelihood,
 * smoother than MRR on a few hundred questions) is used again on all of them.
 */

export const FEATURES = [
  'tag_record',
  'tag_share',
  'similar_answers',
  'answered_meaning',
  'asker_record',
  'answers',
  'recent_year',
  'recent_month',
  'acceptance',
  'routing_response',
] as const;
export type FeatureName = (typeof FEATURES)[number];
export const FEATURE_COUNT = FEATURES.length;

/**
 * The weights a network without enough history ranks with: rounded from fits on two Stack Exchange
 * sites of different kinds (bench/experts-quality.ts), where every network's own fit starts from.
 */
export const DEFAULT_WEIGHTS: Readonly<Record<FeatureName, number>> = {
  tag_record: 0.6,
  tag_share: 0.05,
  similar_answers: 0.15,
  answered_meaning: 0,
  asker_record: 0.5,
  answers: -0.35,
  recent_year: 0.25,
  recent_month: 0.65,
  acceptance: 0.15,
  // Neither site has routings: a prior that people who answer routings are worth routing to.
  routing_response: 0.5,
};

export interface ExpertModel {
  status: 'default' | 'fitted';
  /** When the fit ran (ISO), null for the defaults. */
  fitted_at: string | null;
  /** The time the fit saw the network up to (ISO): nothing after it counted. */
  cutoff: string | null;
  /** Answered questions the fit learned from (0 for the defaults). */
  questions: number;
  weights: Record<FeatureName, number>;
  validation: { queries: number; mrr: number | null; popularity_mrr: number | null };
}

export const defaultModel = (): ExpertModel => ({
  status: 'default',
  fitted_at: null,
  cutoff: null,
  questions: 0,
  weights: { ...DEFAULT_WEIGHTS },
  validation: { queries: 0, mrr: null, popularity_mrr: null },
});

/** The weights in FEATURES order. */
export const weightVector = (model: Pick<ExpertModel, 'weights'>) => Float64Array.from(FEATURES, (f) => model.weights[f] ?? 0);

/**
 * One question of the past: its candidates' features (row-major, FEATURE_COUNT per candidate),
 * which candidate was accepted (-1: not among them), and the accepted person's rank by popularity
 * then (0: not in its first ten), for the validation figures.
 */
export interface Example {
  rows: Float64Array;
  candidates: number;
  relevant: number;
  popularityRank: number;
}

/** Fewer usable examples than this: the defaults. */
export const MIN_EXAMPLES = 40;
/** Prior strengths tried (measured in one example's log-likelihood per squared standard deviation). */
const STRENGTHS = [1, 3, 10, 30, 100, 300];
/** Half-lives tried for the examples' importance, as shares of the examples (Infinity: all alike). */
const HALF_LIVES = [Infinity, 1, 0.5, 0.25];
/** The share of the examples (the latest) the strength is chosen on. */
const VALIDATION_SHARE = 0.2;
/** Where the latest examples, the validation part, begin among `n`. */
export const validationStart = (n: number) => Math.floor(n * (1 - VALIDATION_SHARE));

/** The reciprocal rank of the relevant candidate within the first ten (a tie counts against it). */
export function reciprocalRank(example: Example, weights: ArrayLike<number>): number {
  if (example.relevant < 0) return 0;
  const scores = scoreRows(example, weights);
  const mine = scores[example.relevant]!;
  let rank = 1;
  for (let j = 0; j < example.candidates; j++) if (j !== example.relevant && scores[j]! >= mine) rank++;
  return rank <= 10 ? 1 / rank : 0;
}

function scoreRows(example: Example, weights: ArrayLike<number>): Float64Array {
  const scores = new Float64Array(example.candidates);
  for (let j = 0; j < example.candidates; j++) {
    let s = 0;
    for (let i = 0; i < FEATURE_COUNT; i++) s += example.rows[j * FEATURE_COUNT + i]! * weights[i]!;
    scores[j] = s;
  }
  return scores;
}

interface Scale {
  sd: Float64Array;
  /** Features that vary in the examples (the others keep their default). */
  free: boolean[];
}

function scaleOf(examples: readonly Example[]): Scale {
  const mean = new Float64Array(FEATURE_COUNT);
  const sq = new Float64Array(FEATURE_COUNT);
  let n = 0;
  for (const e of examples)
    for (let j = 0; j < e.candidates; j++) {
      n++;
      for (let i = 0; i < FEATURE_COUNT; i++) mean[i]! += e.rows[j * FEATURE_COUNT + i]!;
    }
  for (let i = 0; i < FEATURE_COUNT; i++) mean[i]! /= Math.max(1, n);
  for (const e of examples)
    for (let j = 0; j < e.candidates; j++)
      for (let i = 0; i < FEATURE_COUNT; i++) sq[i]! += (e.rows[j * FEATURE_COUNT + i]! - mean[i]!) ** 2;
  const sd = sq.map((s) => Math.sqrt(s / Math.max(1, n)));
  return { sd, free: [...sd].map((s) => s > 1e-9) };
}

type Pace = () => Promise<void> | undefined;
const noPause: Pace = () => undefined;

/** Log-likelihood of the relevant candidates under raw weights; `importance`: each example's weight (1 without). */
async function logLikelihood(
  examples: readonly Example[],
  weights: ArrayLike<number>,
  pace = noPause,
  importance?: ArrayLike<number>,
): Promise<number> {
  let ll = 0;
  for (const [index, e] of examples.entries()) {
    const pause = pace();
    if (pause) await pause;
    if (e.relevant < 0) continue;
    const scores = scoreRows(e, weights);
    let max = -Infinity;
    for (const s of scores) max = Math.max(max, s);
    let sum = 0;
    for (const s of scores) sum += Math.exp(s - max);
    ll += (importance?.[index] ?? 1) * (scores[e.relevant]! - max - Math.log(sum));
  }
  return ll;
}

/**
 * The maximum a posteriori raw weights: log-likelihood of the examples minus
 * strength/2 · Σ ((w_i − prior_i) · sd_i)², by Newton's method with step halving.
 */
export async function fitWeights(
  examples: readonly Example[],
  prior: ArrayLike<number>,
  strength: number,
  scale = scaleOf(examples),
  pace = noPause,
  halfLife = Infinity,
): Promise<Float64Array> {
  // Later examples count more with a finite half-life (a share of the examples): a network's
  // answerers change, and the latest past is most like the future.
  const age = (index: number) => (examples.length - 1 - index) / (halfLife * examples.length);
  const usableAt = examples.flatMap((e, index) => (e.relevant >= 0 && e.candidates > 1 ? [index] : []));
  const usable = usableAt.map((index) => examples[index]!);
  const importance = Float64Array.from(usableAt, (index) => 2 ** -age(index));
  const d = FEATURE_COUNT;
  // Work on the standardised scale: z = x · sd, so the weights there are w · sd.
  const free = scale.free.flatMap((f, i) => (f ? [i] : []));
  const w = Float64Array.from(prior);
  const objective = async (weights: Float64Array) => {
    let penalty = 0;
    for (const i of free) penalty += ((weights[i]! - prior[i]!) * scale.sd[i]!) ** 2;
    return (await logLikelihood(usable, weights, pace, importance)) - (strength / 2) * penalty;
  };
  let current = await objective(w);
  for (let iteration = 0; iteration < 50; iteration++) {
    const k = free.length;
    const gradient = new Float64Array(k);
    const hessian = new Float64Array(k * k);
    const expected = new Float64Array(k);
    for (const [index, e] of usable.entries()) {
      const pause = pace();
      if (pause) await pause;
      const weight = importance[index]!;
      const scores = scoreRows(e, w);
      let max = -Infinity;
      for (const s of scores) max = Math.max(max, s);
      let sum = 0;
      for (let j = 0; j < e.candidates; j++) {
        scores[j] = Math.exp(scores[j]! - max);
        sum += scores[j]!;
      }
      expected.fill(0);
      for (let j = 0; j < e.candidates; j++)
        for (let a = 0; a < k; a++) expected[a]! += (scores[j]! / sum) * e.rows[j * d + free[a]!]! * scale.sd[free[a]!]!;
      for (let a = 0; a < k; a++) gradient[a]! += weight * (e.rows[e.relevant * d + free[a]!]! * scale.sd[free[a]!]! - expected[a]!);
      for (let j = 0; j < e.candidates; j++) {
        const p = (weight * scores[j]!) / sum;
        for (let a = 0; a < k; a++) {
          const za = e.rows[j * d + free[a]!]! * scale.sd[free[a]!]! - expected[a]!;
          for (let b = a; b < k; b++) hessian[a * k + b]! += p * za * (e.rows[j * d + free[b]!]! * scale.sd[free[b]!]! - expected[b]!);
        }
      }
    }
    for (let a = 0; a < k; a++) {
      const i = free[a]!;
      gradient[a]! -= strength * (w[i]! - prior[i]!) * scale.sd[i]!;
      hessian[a * k + a]! += strength;
      for (let b = 0; b < a; b++) hessian[a * k + b] = hessian[b * k + a]!;
    }
    // The gradient and Hessian are on the standardised scale (∂/∂(w·sd)), and so is the step.
    const step = solve(hessian, gradient, k);
    let t = 1;
    let next = w;
    let value = current;
    for (; t > 1e-6; t /= 2) {
      next = Float64Array.from(w);
      for (let a = 0; a < k; a++) next[free[a]!]! += (t * step[a]!) / scale.sd[free[a]!]!;
      value = await objective(next);
      if (value >= current) break;
    }
    if (value < current) break;
    const moved = Math.max(...step.map((s) => Math.abs(s * t)));
    w.set(next);
    const gain = value - current;
    current = value;
    if (moved < 1e-7 || gain < 1e-9) break;
  }
  return w;
}

/** Solves the symmetric positive definite system A x = b (Cholesky); A is k × k, row-major. */
function solve(a: Float64Array, b: Float64Array, k: number): Float64Array {
  const l = new Float64Array(k * k);
  for (let i = 0; i < k; i++)
    for (let j = 0; j <= i; j++) {
      let s = a[i * k + j]!;
      for (let m = 0; m < j; m++) s -= l[i * k + m]! * l[j * k + m]!;
      l[i * k + j] = i === j ? Math.sqrt(Math.max(s, 1e-12)) : s / l[j * k + j]!;
    }
  const y = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    let s = b[i]!;
    for (let m = 0; m < i; m++) s -= l[i * k + m]! * y[m]!;
    y[i] = s / l[i * k + i]!;
  }
  const x = new Float64Array(k);
  for (let i = k - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let m = i + 1; m < k; m++) s -= l[m * k + i]! * x[m]!;
    x[i] = s / l[i * k + i]!;
  }
  return x;
}

const mean = (values: readonly number[]) => (values.length ? values.reduce((s, v) => s + v, 0) / values.length : 0);
const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

/**
 * The model learned from a network's past questions (in time order), or the defaults when too few
 * of them have their accepted answerer among the candidates.
 */
export async function learnModel(
  examples: readonly Example[],
  options: { cutoff: number; now?: number; questions: number; pace?: Pace },
): Promise<ExpertModel> {
  if (examples.some((e) => e.rows.some((v) => !Number.isFinite(v))))
    throw new Error('an example has a feature that is not a finite number');
  const usable = examples.filter((e) => e.relevant >= 0 && e.candidates > 1).length;
  const prior = weightVector({ weights: DEFAULT_WEIGHTS });
  if (usable < MIN_EXAMPLES) return { ...defaultModel(), cutoff: new Date(options.cutoff).toISOString() };
  const split = validationStart(examples.length);
  const earlier = examples.slice(0, split);
  const latest = examples.slice(split);
  const scale = scaleOf(earlier);
  let best: { strength: number; likelihood: number; weights: ArrayLike<number> } = {
    strength: STRENGTHS[STRENGTHS.length - 1]!,
    likelihood: -Infinity,
    weights: prior,
  };
  let bestHalfLife = Infinity;
  // From the strongest pull and all examples alike down: a weaker one, or one that counts the
  // latest examples more, must predict the latest part strictly better.
  for (const halfLife of HALF_LIVES)
    for (const strength of [...STRENGTHS].reverse()) {
      const weights = await fitWeights(earlier, prior, strength, scale, options.pace, halfLife);
      const likelihood = await logLikelihood(latest, weights, options.pace);
      if (likelihood > best.likelihood + 1e-9) {
        best = { strength, likelihood, weights };
        bestHalfLife = halfLife;
      }
    }
  const final = await fitWeights(examples, prior, best.strength, undefined, options.pace, bestHalfLife);
  return {
    status: 'fitted',
    fitted_at: new Date(options.now ?? Date.now()).toISOString(),
    cutoff: new Date(options.cutoff).toISOString(),
    questions: options.questions,
    weights: Object.fromEntries(FEATURES.map((f, i) => [f, round(final[i]!, 4)])) as Record<FeatureName, number>,
    validation: {
      queries: latest.length,
      mrr: round(mean(latest.map((e) => reciprocalRank(e, best.weights))), 3),
      popularity_mrr: round(mean(latest.map((e) => (e.popularityRank > 0 ? 1 / e.popularityRank : 0))), 3),
    },
  };
}
