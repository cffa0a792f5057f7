import { createHash } from 'node:crypto';
import type { Client } from '@elastic/elasticsearch';
import { applyEvent, indexHandlers } from '../src/core/events.ts';
import { questionWords, wordStem } from '../src/core/words.ts';
import { askedFieldWeights, unitFieldWeights } from '../src/domain/fields.ts';
import { highlightSource } from '../src/domain/highlight.ts';
import { similarityBlend } from '../src/domain/match.ts';
import { cosine, topicVector } from '../src/domain/similarity.ts';
import {
  type NeighbourFacts,
  stubQuestion,
  tagDocument,
  type UserDocument,
  unpacked,
  unpackUnit,
  withDerived,
} from '../src/elasticsearch/documents.ts';
import { ElasticsearchEvidence } from '../src/elasticsearch/evidence.ts';
import { applyChanges, bulkRequests, LastWritten, RecordedChanges } from '../src/elasticsearch/feed.ts';
import { DocumentFrequencies, KeptUntilMoved, MatchFrequencies, TermDictionary } from '../src/elasticsearch/frequencies.ts';
import { BM25, INDEX_VERSION, indexNames, questionsIndex, stateIndex } from '../src/elasticsearch/mappings.ts';
import {
  engineKey,
  filterClauses,
  frequencyQuery,
  luceneIdf,
  matchesAtMost,
  matchQuery,
  similarCandidatesQuery,
  tagUsesQuery,
} from '../src/elasticsearch/queries.ts';
import { rankMatches, routedQuestion, tagsOnlyIn, termStatistics } from '../src/elasticsearch/results.ts';

const filter = { tag_operator: 'OR' as const, include_uncategorized: false, include_deleted: false };

const question = {
  id: 7,
  author_id: 3,
  language: 'en',
  title: 'When should I add hops to the boil?',
  description: 'I brew pale ale and wonder about the bitterness.',
  tags: ['Hops', 'boil'],
  category_id: null,
  knowledge_space_id: null,
  is_published: true,
  is_deleted: false,
  published: '2024-01-01T00:00:00.000Z',
};

describe('Elasticsearch documents', () => {
  test('a published question has the local index words per field, its unit and live flag', () => {
    const recorded = new RecordedChanges();
    recorded.upsertQuestion(question);
    recorded.setPart('solution', 11, 7, 5, 'Add bittering hops early.');
    const solution = {
      id: 11,
      question_id: 7,
      author_id: 5,
      live: true,
      time: '2024-01-02T00:00:00.000Z',
      rating: 5,
      rating_count: 1,
      upvotes: 0,
      accepted_at: '2024-01-03T00:00:00.000Z',
    };
    recorded.setSolution(solution, Date.parse('2024-01-02T00:00:00.000Z'));
    // An upvote later is a new state; the same facts again are none.
    recorded.setSolution({ ...solution, upvotes: 1 }, Date.parse('2024-01-05T00:00:00.000Z'));
    recorded.setSolution({ ...solution, upvotes: 1 }, Date.parse('2024-01-06T00:00:00.000Z'));
    recorded.seq = 42;
    recorded.addForward(7, 9, Date.parse('2024-01-04T00:00:00.000Z'));
    recorded.addForward(7, 9, Date.parse('2024-01-04T00:00:00.000Z'));
    const { questions, state } = applyChanges(recorded.changes, { questions: new Map(), tags: new Map(), spaces: new Map() });
    expect(questions).toHaveLength(1);
    const doc = questions[0]!;
    expect(doc).toMatchObject({ id: 7, stub: false, live: true, tag_keys: ['hops', 'boil'] });
    expect(doc.words.title.split(' ')).toEqual(['add', 'hops', 'boil']);
    expect(doc.words.solutions).toBe('add bittering hops early');
    // Stems in the question's language beside the words (words.ts: one analyzer for both backends).
    expect(doc.stems.solutions).toBe('add bitter hop earli');
    // The unit as binary doc values, read without the stored source, and its words indexed.
    const unit = unpackUnit(doc.unit_packed);
    expect(unit.hops).toBe(2 + 1 + 1);
    expect(doc.unit_terms).toEqual(Object.keys(unit));
    expect(doc.unit_terms).toContain('bitterness');
    expect(doc).not.toHaveProperty('unit');
    // What expert search reads of a neighbour, packed the same way: live solutions with their value.
    expect(unpacked<NeighbourFacts>(doc.neighbour_packed)).toMatchObject({ id: 7, tags: ['Hops', 'boil'], asked: doc.asked });
    expect(unpacked<NeighbourFacts>(doc.neighbour_packed).solutions).toEqual([
      { author_id: 5, time: Date.parse('2024-01-02T00:00:00.000Z'), value: expect.any(Number) },
    ]);
    expect(doc.solutions[0]!.value).toBeGreaterThan(0);
    expect(doc.solutions[0]).toMatchObject({ accepted: true, accepted_at: Date.parse('2024-01-03T00:00:00.000Z') });
    expect(doc.solutions[0]!.states.map((st) => [st.time, st.upvotes])).toEqual([
      [Date.parse('2024-01-02T00:00:00.000Z'), 0],
      [Date.parse('2024-01-05T00:00:00.000Z'), 1],
    ]);
    // What was asked, for expert search: title, description, tags counts.
    expect(doc.asked.hops).toEqual([1, 0, 1]);
    expect(doc.asked_terms).not.toContain('bittering');
    // The same forward event applied twice counts once.
    expect(doc.forwards).toEqual([{ recipient_id: 9, seq: 42, time: Date.parse('2024-01-04T00:00:00.000Z') }]);
    expect(state.get('tag:hops')).toMatchObject({ type: 'tag', key: 'hops', label: 'Hops', first_word: 'hops' });
  });

  test("a document's words, stems, unit and asked words are the local index's words of its texts (words.ts questionWords)", () => {
    const parts = {
      solution: [
        { id: 1, author_id: 2, text: 'Dry hopping adds aroma; hops added late add aroma, not bitterness.' },
        { id: 2, author_id: 3, text: 'Bittering hops go in early.' },
      ],
      comment: [{ id: 3, author_id: 4, text: 'Hops, hops and more hops!' }],
      attachment: [{ id: 4, author_id: 2, text: 'Hop schedule: boil 60 minutes.' }],
    };
    const doc = withDerived({ ...stubQuestion(7), ...question, stub: false, parts });
    const kinds = ['solution', 'comment', 'attachment'] as const;
    const { counts } = questionWords(
      question,
      kinds.flatMap((kind) => parts[kind].map((p) => ({ kind, text: p.text }))),
    );
    const fields = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const;
    const unit = Object.fromEntries(
      [...counts].flatMap(([word, c]) => {
        const u = fields.reduce((sum, f, i) => sum + unitFieldWeights[f] * c[i]!, 0);
        return u > 0 ? [[word, u]] : [];
      }),
    );
    // The same words in the same order (a unit's order is its vector's summing order): the same bytes.
    expect(doc.unit_packed).toBe(Buffer.from(JSON.stringify(unit)).toString('base64'));
    expect(doc.unit_terms).toEqual(Object.keys(unit));
    const asked = [...counts].filter(([, c]) => fields.some((f, i) => (askedFieldWeights[f] ?? 0) > 0 && c[i]! > 0));
    expect(doc.asked).toEqual(Object.fromEntries(asked.map(([w, c]) => [w, c.slice(0, 3)])));
    expect(doc.asked_terms).toEqual(asked.map(([w]) => w));
    expect(doc.words.comments).toBe('hops hops hops');
    expect(doc.stems.solutions.split(' ')).toEqual(doc.words.solutions.split(' ').map((w) => wordStem(w, 'en')));
    expect(doc.stems.solutions).toBe('dry hop add aroma hop ad late add aroma bitter bitter hop go earli');
  });

  test('drafts keep their text but no words; parts before their question make a stub', () => {
    expect(withDerived({ ...stubQuestion(1), ...question, stub: false, is_published: false }).words.title).toBe('');
    const recorded = new RecordedChanges();
    recorded.setPart('comment', 4, 8, 2, 'a comment');
    const [doc] = applyChanges(recorded.changes, { questions: new Map(), tags: new Map(), spaces: new Map() }).questions;
    expect(doc).toMatchObject({ id: 8, stub: true, live: false });
    expect(routedQuestion(doc)).toBeUndefined();
  });

  test("a batch's documents go to the engine in two bulk requests at once, each question once, from 100 questions on", () => {
    const docs = (n: number) =>
      Array.from({ length: n }, (_, i) => withDerived({ ...stubQuestion(i + 1), ...question, id: i + 1, stub: false }));
    const state = new Map([['tag:hops', tagDocument('hops')]]);
    const ids = (operations: unknown[]) =>
      operations.flatMap((o) => ('index' in (o as object) ? [(o as { index: { _id: string } }).index._id] : []));
    const split = bulkRequests(docs(121), state, 'q', 's');
    expect(split.map((operations) => operations.length / 2)).toEqual([61 + 1, 60]);
    expect(split.flatMap(ids).sort()).toEqual([...docs(121).map((d) => String(d.id)), 'tag:hops'].sort());
    expect(split[0]!.at(-2)).toEqual({ index: { _index: 's', _id: 'tag:hops' } });
    expect(bulkRequests(docs(99), state, 'q', 's')).toHaveLength(1);
    expect(bulkRequests([], state, 'q', 's').map(ids)).toEqual([['tag:hops']]);
    expect(bulkRequests([], new Map(), 'q', 's')).toEqual([]);
  });

  test('events go through the shared handlers', () => {
    const recorded = new RecordedChanges();
    expect(() => applyEvent(indexHandlers, recorded, { nonsense: true })).toThrow('not an event envelope');
    expect(recorded.changes).toEqual([]);
  });
});

describe('Elasticsearch queries', () => {
  test('filters: published, not deleted, languages, hidden spaces, categories with uncategorized, tags AND', () => {
    const clauses = filterClauses({
      ...filter,
      languages: ['en'],
      hidden_spaces: [4],
      categories: [2],
      include_uncategorized: true,
      tags: ['Hops', 'yeast'],
      tag_operator: 'AND',
    });
    expect(clauses.filter).toEqual([
      { term: { is_published: true } },
      { term: { is_deleted: false } },
      { terms: { language: ['en'] } },
      {
        bool: {
          should: [{ terms: { category_id: [2] } }, { bool: { must_not: [{ exists: { field: 'category_id' } }] } }],
          minimum_should_match: 1,
        },
      },
      { bool: { filter: [{ term: { tag_keys: 'hops' } }, { term: { tag_keys: 'yeast' } }] } },
    ]);
    expect(clauses.must_not).toEqual([{ terms: { knowledge_space_id: [4] } }]);
    expect(filterClauses({ ...filter, include_deleted: true }).filter).toEqual([{ term: { is_published: true } }]);
  });

  const words = (...terms: string[]) => ({ terms, languages: ['en' as const] });

  test('match boosts are idf over the calibration reference, stems below whole words, prefixes at a tenth', () => {
    const stats = { documents: 100, frequencies: [{ whole: 10, stem: 11, typo: 10, prefix: 12 }], engine: new Map() };
    const body = matchQuery({ query: words('hops'), operator: 'OR', fields: ['title', 'comments'], filter }, stats)!;
    const should = (body.query!.bool!.must as Array<{ bool: { should: Array<{ dis_max: { queries: unknown[] } }> } }>)[0]!.bool.should;
    const queries = should[0]!.dis_max.queries as Array<Record<string, Record<string, { value: string; boost: number }>>>;
    // One word: the reference is its idf, so the boost is the field's.
    expect(queries[0]).toEqual({ term: { 'words.title': { value: 'hops', boost: 2 } } });
    expect(queries[1]!.term!['words.comments']!.boost).toBeCloseTo(0.3);
    expect(queries[2]!.term!['stems.title']!.value).toBe('hop');
    expect(queries[2]!.term!['stems.title']!.boost).toBeLessThan(2);
    expect(queries[2]!.term!['stems.title']!.boost).toBeGreaterThan(queries[4]!.prefix!['words.title']!.boost);
    expect(queries[4]!.prefix!['words.title']!.boost).toBeGreaterThan(0);
    expect(queries[4]!.prefix!['words.title']!.boost).toBeLessThan(0.3);
    expect(body.size).toBe(1000);
  });

  test('a rare word of 5+ letters also matches its typos (9+ letters: two edits), a common one does not', () => {
    const rare = { documents: 1000, frequencies: [{ whole: 0, stem: 0, typo: 40, prefix: 0 }], engine: new Map() };
    const body = matchQuery({ query: words('furmentation'), operator: 'OR', fields: ['title'], filter }, rare)!;
    const should = (body.query!.bool!.must as Array<{ bool: { should: Array<{ dis_max: { queries: unknown[] } }> } }>)[0]!.bool.should;
    expect(should[0]!.dis_max.queries).toEqual([
      {
        fuzzy: {
          'words.title': expect.objectContaining({ value: 'furmentation', fuzziness: 2, prefix_length: 1, rewrite: 'constant_score' }),
        },
      },
    ]);
    const common = { documents: 1000, frequencies: [{ whole: 300, stem: 300, typo: 320, prefix: 300 }], engine: new Map() };
    const plain = JSON.stringify(matchQuery({ query: words('fermentation'), operator: 'OR', fields: ['title'], filter }, common));
    expect(plain).not.toContain('fuzzy');
  });

  test('AND needs every word; an unknown word without prefix matches nothing', () => {
    const stats = {
      documents: 10,
      frequencies: [
        { whole: 2, stem: 2, typo: 2, prefix: 2 },
        { whole: 0, stem: 0, typo: 0, prefix: 0 },
      ],
      engine: new Map(),
    };
    const body = matchQuery({ query: words('hops', 'xyzzy'), operator: 'AND', fields: ['title'], filter }, stats)!;
    const must = (body.query!.bool!.must as Array<{ bool: { must: unknown[] } }>)[0]!.bool.must;
    expect(must[1]).toEqual({ match_none: {} });
    expect(matchQuery({ query: words(), operator: 'OR', fields: ['title'], filter }, stats)).toBeNull();
  });

  test('frequencies are counted per word, stem, typo and prefix in the requested fields', () => {
    const body = frequencyQuery(words('hopping', 'ab'), ['title']);
    expect(Object.keys(body.aggs!)).toEqual(['w0', 's0', 't0', 'p0', 'w1', 's1']);
    // Typos and prefixes only where asked (the ranking reads them for rare words and words in fewer than WINDOW questions).
    const plain = frequencyQuery(words('hopping', 'ab'), ['title'], () => ({ typo: false, prefix: false }));
    expect(Object.keys(plain.aggs!)).toEqual(['w0', 's0', 'w1', 's1']);
    const stats = termStatistics(
      {
        took: 1,
        timed_out: false,
        _shards: { total: 1, successful: 1, failed: 0 },
        hits: { total: { value: 50, relation: 'eq' }, hits: [] },
        aggregations: { w0: { doc_count: 3 }, s0: { doc_count: 4 }, t0: { doc_count: 3 }, p0: { doc_count: 5 }, w1: { doc_count: 1 } },
      } as never,
      ['hopping', 'ab'],
    );
    expect(stats).toEqual({
      documents: 50,
      frequencies: [
        { whole: 3, stem: 4, typo: 3, prefix: 5 },
        { whole: 1, stem: 1, typo: 1, prefix: 1 },
      ],
      engine: new Map(),
    });
  });

  test('over every field a count reads the combined field alone; counts not asked for are those known before', () => {
    const all = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const;
    const body = frequencyQuery(words('hopping'), all);
    expect(body.aggs).toEqual({
      w0: { filter: { term: { all_words: 'hopping' } } },
      s0: { filter: { terms: { all_stems: ['hop'] } } },
      t0: {
        filter: {
          fuzzy: { all_words: { value: 'hopping', fuzziness: 1, prefix_length: 1, transpositions: true, rewrite: 'constant_score' } },
        },
      },
      p0: { filter: { prefix: { all_words: 'hopping' } } },
    });
    // Looked up in the term dictionary: only the typos asked, the word's and its stem's counts kept.
    const typos = frequencyQuery(words('hopping', 'ale'), all, (_, i) => ({ whole: false, stem: false, typo: i === 0, prefix: false }));
    expect(Object.keys(typos.aggs!)).toEqual(['t0']);
    const stats = termStatistics(
      {
        took: 1,
        timed_out: false,
        _shards: { total: 1, successful: 1, failed: 0 },
        hits: { total: { value: 50, relation: 'eq' }, hits: [] },
        aggregations: { t0: { doc_count: 4 } },
      } as never,
      ['hopping', 'ale'],
      [{ whole: 2, stem: 3 }, { whole: 7 }],
    );
    expect(stats.frequencies).toEqual([
      { whole: 2, stem: 3, typo: 4, prefix: 2 },
      { whole: 7, stem: 7, typo: 7, prefix: 7 },
    ]);
  });

  test("the engine's BM25 idf in a field is divided out of a scored term's boost, (k1 + 1) put back", () => {
    const title = luceneIdf(40, 4);
    expect(title).toBeCloseTo(Math.log(1 + 36.5 / 4.5));
    const stats = {
      documents: 100,
      frequencies: [{ whole: 10, stem: 10, typo: 10, prefix: 10 }],
      engine: new Map([[engineKey('words.title', 'hops'), title]]),
    };
    const body = matchQuery({ query: words('hops'), operator: 'OR', fields: ['title', 'comments'], filter }, stats)!;
    const should = (body.query!.bool!.must as Array<{ bool: { should: Array<{ dis_max: { queries: unknown[] } }> } }>)[0]!.bool.should;
    const queries = should[0]!.dis_max.queries as Array<Record<string, Record<string, { value: string; boost: number }>>>;
    // Lucene scores boost × idf × tf / (tf + k1 × norm): the boost makes it 2 × 2.2 × tf / (…), the scripted saturation's.
    expect(queries[0]!.term!['words.title']!.boost * title).toBeCloseTo(2 * (BM25.k1 + 1));
    // A field whose idf is unknown keeps the plain weight.
    expect(queries[1]!.term!['words.comments']!.boost).toBeCloseTo(0.3);
  });
});

describe('Elasticsearch results', () => {
  test('relevance, the similarity blend and pages as the local ranking answers them', () => {
    const hits = [
      { id: 1, score: 2 },
      { id: 2, score: 0.5 },
      { id: 3, score: 0.1 },
    ];
    const ranked = rankMatches(hits, { similarity: new Map([[2, 1]]), offset: 0, limit: 10 });
    expect(ranked.total).toBe(3);
    // The lift is centred on the three (a factor e^(lift − mean)): the one like the query rises, the others sink a little.
    const lift = similarityBlend.weight;
    expect(ranked.items.map((i) => i.id)).toEqual([2, 1, 3]);
    expect(ranked.items[0]!.score).toBeCloseTo(0.5 * Math.exp(lift - lift / 3));
    expect(ranked.items[1]!.score).toBeCloseTo(2 * Math.exp(-lift / 3));
    expect(ranked.items.map((i) => i.is_relevant)).toEqual([true, true, false]);
    // Never below zero: a score is a positive number.
    expect(ranked.items[2]!.score).toBeCloseTo(0.1 * Math.exp(-lift / 3));
    expect(rankMatches(hits, { offset: 1, limit: 1 }).items.map((i) => i.id)).toEqual([2]);
    const many = Array.from({ length: 12 }, (_, i) => ({ id: i + 10, score: 1 }));
    expect(rankMatches([...many, { id: 1, score: 0.1 }], { offset: 0, limit: 100 }).total).toBe(12);
  });

  test('the best of the window with the counts the engine made: its total, weak matches left out before the blend', () => {
    const best = [
      { id: 1, score: 2 },
      { id: 2, score: 0.2 },
    ];
    // Only the best two in hand; the engine counted 700 at or above the weak score.
    const ranked = rankMatches(best, { offset: 0, limit: 10, counted: { total: 700, leaveOutWeak: true }, similarity: new Map([[2, 1]]) });
    expect(ranked.total).toBe(700);
    // The weak one is left out before the blend could lift it (as the local ranking does).
    expect(ranked.items.map((i) => i.id)).toEqual([1]);
    const all = rankMatches(best, { offset: 0, limit: 10, counted: { total: 900, leaveOutWeak: false } });
    expect(all.total).toBe(900);
    expect(all.items.map((i) => i.id)).toEqual([1, 2]);
  });

  test('a text match asks for the best few with their units, counts the window, and the strong ones when told', () => {
    const stats = { documents: 100, frequencies: [{ whole: 10, stem: 10, typo: 10, prefix: 10 }], engine: new Map() };
    const query = { terms: ['hops'], languages: ['en' as const] };
    const body = matchQuery({ query, operator: 'OR', fields: ['title'], filter }, stats, { size: 50, countAtLeast: 0.25 })!;
    expect(body).toMatchObject({ size: 50, track_total_hits: 1000, docvalue_fields: ['unit_packed'] });
    // The text query alone, scored in the aggregation's filter: the request's filters hold already.
    const text = (body.query as { bool: { must: unknown[] } }).bool.must[0];
    expect(body.aggs).toEqual({ at_least: { filter: { function_score: { query: text, min_score: 0.25 } } } });
    expect(matchQuery({ query, operator: 'OR', fields: ['title'], filter }, stats, { size: 50 })).not.toHaveProperty('aggs');
  });

  test('how many a text match can find at most: the forms it asks for, any word for OR, the fewest for AND', () => {
    const query = { terms: ['hopping', 'ale'], languages: ['en' as const] };
    // hopping: rare, its stem, typos and prefixes add questions; ale: in 2000 questions, its prefixes not asked.
    const stats = {
      documents: 5000,
      frequencies: [
        { whole: 2, stem: 3, typo: 4, prefix: 5 },
        { whole: 2000, stem: 2000, typo: 2000, prefix: 2500 },
      ],
      engine: new Map(),
    };
    expect(matchesAtMost({ query, operator: 'OR' }, stats)).toBe(2 + 3 + 4 + 5 + 2000);
    expect(matchesAtMost({ query, operator: 'AND' }, stats)).toBe(14);
    const absent = { ...stats, frequencies: [{ whole: 0, stem: 0, typo: 0, prefix: 0 }, stats.frequencies[1]!] };
    expect(matchesAtMost({ query, operator: 'AND' }, absent)).toBe(0);
  });

  test('highlighting from stored texts: whole words first, the best part gives the id', () => {
    const source = {
      id: 7,
      title: 'Priming sugar',
      description: 'How much corn?',
      tags: ['bottling'],
      parts: (kind: string) =>
        kind === 'solution'
          ? [
              { id: 1, text: 'no match here' },
              { id: 2, text: 'Use corn sugar, about 5 grams.' },
            ]
          : [],
    };
    expect(highlightSource(source, { query: 'corn', fields: ['solutions', 'title'], stop_languages: ['en'] })).toEqual({
      query_field: 'solutions',
      id: 2,
      fragment: 'Use <em>corn</em> sugar, about 5 grams.',
      start: true,
      end: true,
    });
    expect(highlightSource(source, { query: 'prim', fields: ['title', 'description'], stop_languages: ['en'] })).toMatchObject({
      query_field: 'title',
      fragment: '<em>Priming</em> sugar',
    });
    // Highlighting marks what the ranking matched: a word of the query's stem, a typo of a rare word.
    const beer = { ...source, title: 'Fermenting lagers at home', description: 'Fermentation stalled.' };
    expect(highlightSource(beer, { query: 'fermentation', fields: ['title'], stop_languages: ['en'] })).toMatchObject({
      fragment: '<em>Fermenting</em> lagers at home',
    });
    const typo = { query: 'furmentation', fields: ['description' as const], stop_languages: ['en'] };
    expect(highlightSource(beer, typo)).toBeNull();
    expect(highlightSource(beer, typo, new Set(['furmentation']))).toMatchObject({ fragment: '<em>Fermentation</em> stalled.' });
  });

  test('topic vectors are unit length; the cosine is in [0, 1]', () => {
    const idf = (w: string) => (w === 'common' ? 0.1 : 2);
    const a = topicVector(
      [
        ['hops', 2],
        ['common', 1],
      ],
      idf,
    );
    const b = topicVector([['hops', 1]], idf);
    expect([...a.values()].reduce((s, w) => s + w * w, 0)).toBeCloseTo(1);
    expect(cosine(a, b)).toBeGreaterThan(0.9);
    expect(cosine(a, topicVector([['yeast', 1]], idf))).toBe(0);
  });
});

describe('Elasticsearch: what a caller may not read, and who cannot answer', () => {
  const hiddenLab = [{ terms: { knowledge_space_id: [5] } }];

  test('a tag used only in the hidden spaces is found by its uses outside them', () => {
    expect(tagUsesQuery(['kveik', 'hops'], [5])).toEqual({
      size: 0,
      query: { terms: { tag_keys: ['kveik', 'hops'] } },
      aggs: {
        tags: {
          terms: { field: 'tag_keys', include: ['kveik', 'hops'], size: 2 },
          aggs: { outside: { filter: { bool: { must_not: hiddenLab } } } },
        },
      },
    });
    const answer = {
      hits: { hits: [] },
      aggregations: {
        tags: {
          buckets: [
            { key: 'kveik', doc_count: 2, outside: { doc_count: 0 } },
            { key: 'hops', doc_count: 3, outside: { doc_count: 1 } },
          ],
        },
      },
    };
    expect(tagsOnlyIn(answer as never)).toEqual(new Set(['kveik']));
  });

  test("similar questions' candidates leave out the hidden spaces", () => {
    const query = similarCandidatesQuery([{ word: 'kveik', weight: 2 }], 7, 20, [5]).query.bool;
    expect(query.must_not).toEqual([{ term: { id: 7 } }, ...hiddenLab]);
    expect(similarCandidatesQuery([{ word: 'kveik', weight: 2 }], undefined, 20).query.bool.must_not).toEqual([]);
  });

  test('a user document keeps one flag when an event changes the other', () => {
    const recorded = new RecordedChanges();
    applyEvent(indexHandlers, recorded, {
      id: '00000000-0000-4000-8000-000000000001',
      subject: 'users.user.created.v1',
      occurred_at: '2024-01-01T00:00:00.000Z',
      actor_id: null,
      data: {
        user: {
          id: 9,
          firstname: 'Former',
          lastname: 'user',
          email: 'former-user@beer.stackexchange.invalid',
          auth_type: 'password',
          is_deleted: false,
          is_hidden: false,
          is_system: true,
          language: 'en',
          gender: null,
          location: null,
          about: null,
          company: null,
          department: null,
          position: null,
          country: null,
          image: '/api/v1/public/images/user.png',
          first_seen: '2024-01-01T00:00:00.000Z',
          last_seen: null,
          customfields: {},
          score_level: null,
          score_points: null,
          event_tracking_id: 'x',
          roles: [],
        },
      },
    });
    const loaded = { questions: new Map(), tags: new Map(), spaces: new Map() };
    expect(applyChanges(recorded.changes, loaded).state.get('user:9')).toEqual({ type: 'user', user_id: 9, deleted: false, system: true });
    const later = new RecordedChanges();
    later.setUserDeleted(9, true);
    const known = new Map<number, UserDocument>([[9, { type: 'user', user_id: 9, deleted: false, system: true }]]);
    expect(recorded.touched().users).toEqual(new Set([9]));
    expect(applyChanges(later.changes, { ...loaded, users: known }).state.get('user:9')).toEqual({
      type: 'user',
      user_id: 9,
      deleted: true,
      system: true,
    });
  });

  /** A client that answers every request from the given function and keeps the requests. */
  const fakeClient = (answer: (kind: 'search' | 'mget', request: any) => unknown) => {
    const requests: Array<{ kind: string; request: any }> = [];
    const client = {
      search: async (request: any) => {
        requests.push({ kind: 'search', request });
        return answer('search', request) ?? { hits: { total: { value: 0 }, hits: [] }, aggregations: {} };
      },
      mget: async (request: any) => {
        requests.push({ kind: 'mget', request });
        return answer('mget', request) ?? { docs: request.ids.map((id: string) => ({ _id: id, found: false })) };
      },
    };
    return { client: client as unknown as Client, requests };
  };

  test("a caller's evidence asks nothing of the hidden spaces and leaves out tags used only there; system users are said", async () => {
    const { client, requests } = fakeClient((kind, request) => {
      if (kind === 'mget' && request.ids.some((id: string) => id.startsWith('user:')))
        return {
          docs: request.ids.map((id: string) =>
            id === 'user:9'
              ? { _id: id, found: true, _source: { type: 'user', user_id: 9, deleted: false, system: true } }
              : { _id: id, found: false },
          ),
        };
      // The network's tags, read once (kept until the index moves).
      if (kind === 'search' && request.query?.term?.type === 'tag')
        return {
          hits: {
            hits: ['hops', 'kveik'].map((key) => ({
              _id: `tag:${key}`,
              _source: {
                type: 'tag',
                key,
                label: key,
                excluded_from_suggestions: false,
                links: [],
                link_keys: key === 'hops' ? ['kveik'] : [],
              },
            })),
          },
        };
      if (kind === 'search' && request.aggs?.tags?.aggs?.outside)
        return {
          hits: { hits: [] },
          aggregations: {
            tags: {
              buckets: request.aggs.tags.terms.include.map((key: string) => ({
                key,
                doc_count: 2,
                outside: { doc_count: key === 'kveik' ? 0 : 1 },
              })),
            },
          },
        };
      return undefined;
    });
    const evidence = new ElasticsearchEvidence(
      client,
      indexNames('kn'),
      new DocumentFrequencies(client, 'kn-questions', 'asked_terms'),
    ).scoped([5]);
    const tags = await evidence.tags(['kveik', 'hops']);
    expect([...tags.keys()]).toEqual(['hops']);
    expect(tags.get('hops')!.linked).toEqual([]);

    requests.length = 0;
    await evidence.onTags(['hops']);
    await evidence.answers();
    const users = await evidence.users([9, 10]);
    await evidence.askerRecord(3, Date.now());
    await evidence.expertRecords([9], new Set(['hops']));
    await evidence.neighbours('kveik yeast at a high temperature', 'en', 30);
    const searches = requests.filter((r) => r.kind === 'search').map((r) => r.request);
    // Each search over questions that reads records, answers or neighbours leaves out the hidden space.
    const reading = searches.filter((r) => r.query?.bool && !r.aggs?.df);
    expect(reading).toHaveLength(6);
    for (const r of reading) expect(r.query.bool.must_not).toEqual(expect.arrayContaining(hiddenLab));
    expect(users.get(9)).toMatchObject({ system: true, deleted: false });
    expect(users.get(10)).toMatchObject({ system: false, deleted: false });

    // Without hidden spaces nothing is left out.
    requests.length = 0;
    const everything = new ElasticsearchEvidence(client, indexNames('kn'), new DocumentFrequencies(client, 'kn-questions', 'asked_terms'));
    expect([...(await everything.tags(['kveik', 'hops'])).keys()].sort()).toEqual(['hops', 'kveik']);
    await everything.onTags(['hops']);
    expect(requests.some((r) => r.request.aggs?.tags?.aggs?.outside)).toBe(false);
    expect(requests.at(-1)!.request.query.bool.must_not).toEqual([]);
  });
});

test("a query's match counts and its words' unit frequencies are looked up in one term-dictionary call", async () => {
  const calls: Array<{ doc: Record<string, unknown>; fields: string[] }> = [];
  const client = {
    indices: { stats: async () => ({ _all: { total: { docs: { deleted: 0 } } } }) },
    search: async () => ({ hits: { total: { value: 10 }, hits: [] }, aggregations: {} }),
    termvectors: async (request: any) => {
      calls.push(request);
      const stats = (values: string[]) => ({
        field_statistics: { doc_count: 10 },
        terms: Object.fromEntries(values.map((v) => [v, { doc_freq: v.length }])),
      });
      return {
        term_vectors: Object.fromEntries(
          request.fields.map((field: string) => {
            const [object, name] = field.split('.') as [string, string | undefined];
            return [field, stats((name ? request.doc[object][name] : request.doc[object]) as string[])];
          }),
        ),
      };
    },
  } as unknown as Client;
  const kept = new KeptUntilMoved();
  const dictionary = new TermDictionary(client, 'kn-questions');
  const units = new DocumentFrequencies(client, 'kn-questions', 'unit_terms', kept, dictionary);
  const matches = new MatchFrequencies(client, 'kn-questions', kept, dictionary);
  const all = ['title', 'description', 'tags', 'solutions', 'comments', 'attachments'] as const;
  const [, stats] = await Promise.all([units.prime(['hops', 'kveik']), matches.of({ terms: ['hops', 'kveik'], languages: ['en'] }, all)]);
  expect(calls).toHaveLength(1);
  // Each value its own term, a keyword field's too.
  expect(calls[0]!.doc.unit_terms).toEqual(['hops', 'kveik']);
  expect(calls[0]!.doc.all_words).toEqual(['hops', 'kveik']);
  expect(stats.frequencies.map((f) => [f.whole, f.stem])).toEqual([
    [4, 3],
    [5, 5],
  ]);
  // Known now: no call of their own.
  expect((await units.of(['hops', 'kveik'])).frequency).toEqual(
    new Map([
      ['hops', 4],
      ['kveik', 5],
    ]),
  );
  expect(calls).toHaveLength(1);
});

test("expert search's tags, settings, spaces and askers are read once until the index moves", async () => {
  const requests: string[] = [];
  const tag = (key: string, link_keys: string[] = []) => ({
    _source: { type: 'tag', key, label: key, first_word: key, excluded_from_suggestions: false, links: link_keys, link_keys },
  });
  const client = {
    search: async (request: any) => {
      requests.push(request.query?.term?.type === 'tag' ? 'tags' : 'questions');
      if (request.query?.term?.type === 'tag') return { hits: { hits: [tag('hops', ['kveik']), tag('kveik')] } };
      return { hits: { total: { value: 0 }, hits: [] }, aggregations: {} };
    },
    mget: async (request: any) => {
      requests.push(`mget ${request.ids.join(',')}`);
      return {
        docs: request.ids.map((id: string) =>
          id === 'setting:min_experts'
            ? { _id: id, found: true, _source: { type: 'setting', key: 'min_experts', value: 4 } }
            : { _id: id, found: false },
        ),
      };
    },
  } as unknown as Client;
  const kept = new KeptUntilMoved();
  const evidence = new ElasticsearchEvidence(
    client,
    indexNames('kn'),
    new DocumentFrequencies(client, 'kn-questions', 'asked_terms'),
    [],
    kept,
  );
  for (let round = 0; round < 2; round++) {
    expect([...(await evidence.namedTags('kveik or hops?'))].sort()).toEqual(['hops', 'kveik']);
    // A link counts both ways.
    expect((await evidence.tags(['kveik'])).get('kveik')!.linked).toEqual(['hops']);
    expect(await evidence.minExperts()).toBe(4);
    expect(await evidence.closedSpaceMembers(3)).toBeUndefined();
    await evidence.askerRecord(7, 1_000);
  }
  expect(requests).toEqual(['tags', 'mget setting:min_experts', 'mget space:3', 'questions']);
  kept.moved();
  await evidence.minExperts();
  expect(requests.at(-1)).toBe('mget setting:min_experts');
});

test('the mappings change only with the index version (an upgrade rebuilds beside the live index only when told so)', () => {
  const fingerprint = createHash('sha256').update(JSON.stringify({ questionsIndex, stateIndex })).digest('hex').slice(0, 16);
  // A new fingerprint: raise INDEX_VERSION (mappings.ts) and write both here.
  expect({ version: INDEX_VERSION, fingerprint }).toEqual({ version: 6, fingerprint: '5256b8b2b97feb87' });
});

test('values kept per key: those not kept are read together once, absent ones kept too, all read again after a move', async () => {
  const kept = new KeptUntilMoved();
  const reads: string[][] = [];
  const read = async (missing: string[]) => {
    reads.push(missing);
    return new Map(missing.filter((k) => k !== 'none').map((k) => [k, k.length]));
  };
  expect(await kept.ofEach('tag', ['hops', 'ale', 'none'], read, 0)).toEqual(
    new Map([
      ['hops', 4],
      ['ale', 3],
      ['none', 0],
    ]),
  );
  expect(await kept.ofEach('tag', ['ale', 'yeast', 'none'], read, 0)).toEqual(
    new Map([
      ['ale', 3],
      ['yeast', 5],
      ['none', 0],
    ]),
  );
  expect(reads).toEqual([['hops', 'ale', 'none'], ['yeast']]);
  kept.moved();
  await kept.ofEach('tag', ['hops'], read, 0);
  expect(reads.at(-1)).toEqual(['hops']);
  // A failed read is not kept.
  await expect(kept.ofEach('tag', ['malt'], () => Promise.reject(new Error('gone')), 0)).rejects.toThrow('gone');
  expect(await kept.ofEach('tag', ['malt'], read, 0)).toEqual(new Map([['malt', 4]]));
});

test("the feed's last-written documents: read back from it, the least recently used dropped first", () => {
  const written = new LastWritten<number, string>(2);
  written.set(1, 'a');
  written.set(2, 'b');
  // Reading 1 makes 2 the least recently used.
  expect(written.get(1)).toBe('a');
  written.set(3, 'c');
  expect(written.get(2)).toBeUndefined();
  expect([written.get(1), written.get(3), written.size]).toEqual(['a', 'c', 2]);
  // Written again: the newer document.
  written.set(1, 'a2');
  expect(written.get(1)).toBe('a2');
});
