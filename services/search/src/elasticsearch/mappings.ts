import type { estypes } from '@elastic/elasticsearch';
import { SearchFieldNames } from '@kn/contracts';

/**
 * The indices of one network. Readers go through the aliases; the feed writes to the physical
 * indices of its generation (`<alias>-g<generation>`), so a feed that lost its lease to a rebuild
 * can never write into the new generation.
 */
export interface IndexNames {
  /** One document per question (drafts too, for routing), id = question id. */
  questions: string;
  /** Tags, knowledge spaces, deleted and system users, settings and the stream positions. */
  state: string;
  /** The feed's lease and the current generation (never dropped by a rebuild). */
  control: string;
}

export const indexNames = (prefix: string): IndexNames => ({
  questions: `${prefix}-questions`,
  state: `${prefix}-state`,
  control: `${prefix}-control`,
});

export const physicalIndex = (alias: string, generation: number) => `${alias}-g${generation}`;

/**
 * The version of what the indices hold: raised with every change of the mappings below or of the
 * words written into them (words.ts). Instances of a newer version build a new generation beside
 * the live one and move the aliases once it has caught up (feed.ts). The test of the mappings'
 * fingerprint (services/search/test/elasticsearch.test.ts) fails when they change without it.
 */
export const INDEX_VERSION = 6;

/**
 * The words of the searchable fields are the local backend's (words.ts `indexWords`: stop words of
 * the question's language removed, lower case, diacritics folded), and beside them their stems in
 * the question's language (`stems`), written space-separated: Elasticsearch only splits them at
 * spaces, so both backends match the same words and stems with the same analyzers. Scored by the
 * engine's own BM25 (k1 1.2, b 0.75): the scripted similarity it replaced (the same saturation)
 * cost a script run a matching posting. Lucene multiplies by its idf in the field; queries.ts divides
 * it out in the boost and passes the idf over whole questions, as the local ranking counts it.
 */
export const BM25 = { k1: 1.2, b: 0.75 };

/**
 * Frequencies without positions: no query of the engine reads positions (term, fuzzy and prefix
 * queries, never phrases; highlighting is the service's own), and every word of each field wrote
 * one at every write and merge. BM25 reads the frequency and the norm, which stay.
 */
const words: estypes.MappingProperty = { type: 'text', analyzer: 'whitespace', similarity: 'saturation', index_options: 'freqs' };

/**
 * The words (`all_words`) and stems (`all_stems`) of the six searchable fields in one field each
 * (copy_to): the questions with a word in any field are then the word's document frequency, one
 * lookup in the term dictionary instead of a filter over every published question (frequencies.ts
 * MatchFrequencies), and a typo's or prefix's count reads one field's terms instead of six. Only
 * counted, never scored: no frequencies, positions nor norms.
 */
const combined: estypes.MappingProperty = { type: 'text', analyzer: 'whitespace', index_options: 'docs', norms: false };
const copiedTo = (field: string): estypes.MappingProperty => ({ ...words, copy_to: field });

export const questionsIndex = {
  settings: {
    // Term statistics (similar questions' idf) are per shard: one shard keeps them exact.
    number_of_shards: 1,
    // Only the feed refreshes (feed.ts): its live batches, a catch-up's last batch, after a merge.
    // The engine's own refresh every second made a segment a second all through a catch-up.
    refresh_interval: '-1',
    similarity: { saturation: { type: 'BM25', ...BM25 } },
  },
  mappings: {
    dynamic: false,
    // The words are indexed, not kept in the stored source (documents.ts withDerived makes them
    // again at every write): reading sources (similar questions, expert search) reads 40 % less.
    // The unit is read from its binary doc values only (unit_packed).
    _source: { excludes: ['words', 'stems', 'unit_terms', 'unit_packed', 'neighbour_packed', 'asked_terms'] },
    properties: {
      id: { type: 'long' },
      stub: { type: 'boolean' },
      author_id: { type: 'long' },
      language: { type: 'keyword' },
      title: { type: 'text', index: false },
      description: { type: 'text', index: false },
      tags: { type: 'keyword' },
      tag_keys: { type: 'keyword' },
      category_id: { type: 'long' },
      knowledge_space_id: { type: 'long' },
      is_published: { type: 'boolean' },
      is_deleted: { type: 'boolean' },
      live: { type: 'boolean' },
      published: { type: 'date' },
      parts: { type: 'object', enabled: false },
      words: { properties: Object.fromEntries(SearchFieldNames.map((f) => [f, copiedTo('all_words')])) },
      stems: { properties: Object.fromEntries(SearchFieldNames.map((f) => [f, copiedTo('all_stems')])) },
      all_words: combined,
      all_stems: combined,
      unit_terms: { type: 'keyword' },
      unit_packed: { type: 'binary', doc_values: true },
      neighbour_packed: { type: 'binary', doc_values: true },
      asked: { type: 'object', enabled: false },
      asked_terms: { type: 'keyword' },
      solutions: {
        type: 'nested',
        properties: {
          id: { type: 'long' },
          author_id: { type: 'long' },
          live: { type: 'boolean' },
          time: { type: 'long' },
          rating: { type: 'float' },
          rating_count: { type: 'integer' },
          upvotes: { type: 'integer' },
          accepted_at: { type: 'long' },
          accepted: { type: 'boolean' },
          value: { type: 'double' },
          states: { type: 'object', enabled: false },
        },
      },
      forwards: { type: 'nested', properties: { recipient_id: { type: 'long' }, seq: { type: 'long' }, time: { type: 'long' } } },
    },
  },
} satisfies Omit<estypes.IndicesCreateRequest, 'index'>;

export const stateIndex = {
  settings: { number_of_shards: 1, refresh_interval: '-1' },
  mappings: {
    dynamic: false,
    properties: {
      type: { type: 'keyword' },
      key: { type: 'keyword' },
      label: { type: 'keyword' },
      first_word: { type: 'keyword' },
      link_keys: { type: 'keyword' },
      excluded_from_suggestions: { type: 'boolean' },
      space_id: { type: 'long' },
      is_closed: { type: 'boolean' },
      user_id: { type: 'long' },
      deleted: { type: 'boolean' },
      system: { type: 'boolean' },
    },
  },
} satisfies Omit<estypes.IndicesCreateRequest, 'index'>;

export const controlIndex = {
  settings: { number_of_shards: 1 },
  mappings: { dynamic: false, properties: { owner: { type: 'keyword' }, expires_at: { type: 'long' }, generation: { type: 'long' } } },
} satisfies Omit<estypes.IndicesCreateRequest, 'index'>;
