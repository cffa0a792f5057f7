import { ByteRows, topicParameters, trainWordVectors } from '../domain/topics.ts';
import type { Forward, TermIndex } from './postings.ts';

/** The local engine's topic vectors (domain/topics.ts): a word's by its id, a question's by its slot. */
export class TopicModel {
  /** Questions indexed when it was trained. */
  readonly trainedOn: number;
  private readonly index: TermIndex;
  private readonly words: ByteRows;
  private readonly questions: ByteRows;
  private readonly scratch: Float32Array;

  private constructor(index: TermIndex, words: ByteRows, questions: ByteRows, trainedOn: number) {
    this.index = index;
    this.words = words;
    this.questions = questions;
    this.trainedOn = trainedOn;
    this.scratch = new Float32Array(words.width);
  }

  /**
   * Trains on every question of the index, a question per step: run it to the end at once
   * (`trainTopics`), or a few steps at a time between events (the feed).
   */
  static *training(index: TermIndex): Generator<void, TopicModel> {
    const trainedOn = index.count;
    const slots = index.slotCount;
    const words = yield* trainWordVectors({
      questions: slots,
      words: index.termCount,
      word: (id) => index.term(id),
      eachQuestion: (visit) =>
        eachSlot(index, slots, (slot) => {
          if (index.holds(slot)) visit(slot, (each) => index.forEachUnitWeight(slot, each));
        }),
    });
    const model = new TopicModel(index, words, new ByteRows(topicParameters.dimensions, slots), trainedOn);
    yield* eachSlot(index, slots, (slot) => model.update(slot));
    return model;
  }

  /** The unit topic vector of weighted words (ids and weights as similarity.ts's TopicVector), or null when none of them has one. */
  vectorOf(ids: ArrayLike<number>, weights: ArrayLike<number>): Float32Array | null {
    return this.words.unitSum((add) => {
      for (let k = 0; k < ids.length; k++) add(ids[k]!, weights[k]!);
    });
  }

  /** A question's vector from its words as they are now (none when it is not indexed); `words`: its words when the caller has them. */
  update(slot: number, words?: Forward) {
    if (!this.index.holds(slot)) {
      if (slot < this.questions.rows) this.questions.set(slot, null);
      return;
    }
    this.questions.set(
      slot,
      this.words.unitSum((add) => this.index.forEachUnitWeight(slot, add, words), this.scratch.fill(0)),
    );
  }

  /** Cosine of a unit topic vector with a question's, in [0, 1]. */
  cosine(v: Float32Array, slot: number): number {
    return Math.min(1, Math.max(0, this.questions.dot(slot, v)));
  }
}

/** Slots at a time between two steps of a training, and whose words are read in one statement. */
const SLOTS_PER_STEP = 256;

/**
 * Calls `visit` for the first `slots` slots of the index (those the training began with), a step of
 * SLOTS_PER_STEP slots at a time, with the step's words read ahead: one statement for the step's
 * questions instead of one per question (a training reads every question's words in three or more
 * passes).
 */
function* eachSlot(index: TermIndex, slots: number, visit: (slot: number) => void): Generator<void, void> {
  for (let start = 0; start < slots; start += SLOTS_PER_STEP) {
    const step = Array.from({ length: Math.min(SLOTS_PER_STEP, slots - start) }, (_, k) => start + k);
    index.withWordsOf(step, () => {
      for (const slot of step) visit(slot);
    });
    yield;
  }
}

/** Trains at once (tests, benchmarks, a small index). */
export function trainTopics(index: TermIndex): TopicModel {
  const training = TopicModel.training(index);
  for (;;) {
    const step = training.next();
    if (step.done) return step.value;
  }
}
