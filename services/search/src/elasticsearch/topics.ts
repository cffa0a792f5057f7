import type { Client, estypes } from '@elastic/elasticsearch';
import { grow } from '../core/typed-arrays.ts';
import { pacer } from '../domain/pace.ts';
import { unitIdf } from '../domain/ranking.ts';
import { type ByteRows, type TopicCorpus, trainWordVectors } from '../domain/topics.ts';
import { unpackUnit } from './documents.ts';
import { publishedQuery } from './queries.ts';

/** Questions read in one request of a training. */
const READ_PAGE = 1000;
/** Questions between two steps of a training. */
const QUESTIONS_PER_STEP = 256;

/**
 * The words' topic vectors of this search instance (domain/topics.ts). Each instance trains its
 * own from the index's units: the vectors are seeded by the words, so instances that read the same
 * questions hold the same model, and nothing is stored in the cluster. A question's vector is
 * taken from its unit when a query asks for it.
 */
export class WordTopics {
  /** Published questions read when it was trained. */
  readonly trainedOn: number;
  private readonly ids: ReadonlyMap<string, number>;
  private readonly words: ByteRows;

  constructor(trainedOn: number, ids: ReadonlyMap<string, number>, words: ByteRows) {
    this.trainedOn = trainedOn;
    this.ids = ids;
    this.words = words;
  }

  /** The unit topic vector of weighted words, or null when none of them has one. */
  vectorOf(weights: Iterable<readonly [string, number]>): Float32Array | null {
    return this.words.unitSum((add) => {
      for (const [word, weight] of weights) {
        const id = this.ids.get(word);
        if (id !== undefined) add(id, weight);
      }
    });
  }
}

/** The cosine of two unit topic vectors, in [0, 1]. */
export function topicCosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return Math.min(1, Math.max(0, dot));
}

/**
 * Reads the unit of every published question (deleted ones too: the idfs count them) a page at a
 * time, in the order of their ids, then trains, giving the event loop back every few milliseconds.
 * The units are held as word ids and weighted counts (8 bytes a word of a question) while it runs.
 * Null when `stopped` said so (the backend closed).
 */
export async function trainWordTopics(client: Client, index: string, stopped: () => boolean): Promise<WordTopics | null> {
  const ids = new Map<string, number>();
  const terms: string[] = [];
  let frequencies = new Int32Array(1024);
  const starts = [0];
  let wordIds = new Int32Array(1 << 16);
  let counts = new Float32Array(1 << 16);
  let used = 0;
  let after: estypes.SortResults | undefined;
  for (;;) {
    if (stopped()) return null;
    const response = await client.search({
      index,
      ...publishedQuery(),
      track_total_hits: false,
      size: READ_PAGE,
      _source: false,
      stored_fields: '_none_',
      docvalue_fields: ['unit_packed'],
      sort: [{ id: 'asc' }],
      ...(after ? { search_after: after } : {}),
    });
    const hits = response.hits.hits;
    for (const hit of hits) {
      const packed = (hit.fields as { unit_packed?: string[] } | undefined)?.unit_packed?.[0];
      const unit = Object.entries(packed ? unpackUnit(packed) : {});
      wordIds = grow(wordIds, used + unit.length);
      counts = grow(counts, used + unit.length);
      for (const [word, count] of unit) {
        let id = ids.get(word);
        if (id === undefined) {
          id = terms.length;
          ids.set(word, id);
          terms.push(word);
          frequencies = grow(frequencies, id + 1);
        }
        frequencies[id]!++;
        wordIds[used] = id;
        counts[used++] = count;
      }
      starts.push(used);
    }
    if (hits.length < READ_PAGE) break;
    after = hits[hits.length - 1]!.sort;
  }
  const questions = starts.length - 1;
  // A loop, not Float32Array.from with a mapping: that collects the values in an ordinary array
  // first, whose 134 million entries at most a million questions' units exceed (V8 then ends the process).
  const weights = new Float32Array(used);
  for (let k = 0; k < used; k++) weights[k] = Math.log1p(counts[k]!) * unitIdf(questions, frequencies[wordIds[k]!]!);
  const corpus: TopicCorpus = {
    questions,
    words: terms.length,
    word: (id) => terms[id]!,
    *eachQuestion(visit) {
      for (let question = 0; question < questions; question++) {
        visit(question, (each) => {
          for (let k = starts[question]!; k < starts[question + 1]!; k++) if (weights[k]! > 0) each(wordIds[k]!, weights[k]!);
        });
        if (question % QUESTIONS_PER_STEP === QUESTIONS_PER_STEP - 1) yield;
      }
    },
  };
  const training = trainWordVectors(corpus);
  const pace = pacer();
  for (;;) {
    const step = training.next();
    if (step.done) return new WordTopics(questions, ids, step.value);
    const pause = pace();
    if (pause) await pause;
    if (stopped()) return null;
  }
}
