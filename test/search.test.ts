import * as search from '@kn/search';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let bob: U;
const ids: Record<string, number> = {};
const extra: Record<string, number> = {};

const api = () => system.api;

async function question(user: U, name: string, body: Record<string, unknown>, publish = true) {
  ids[name] = (await newQuestion(system, user.token, body, { publish })).id;
  return ids[name];
}

const solution = (user: U, questionId: number, description: string) => publishedSolution(system, user.token, questionId, description);

type Item = { id: number; search_metadata: { score: number; is_relevant?: boolean; highlighting?: Record<string, unknown> } };
const find = async (query: string, user: U = alice) => {
  const res = await api()
    .get(`${API}/questions?${query}`)
    .set(...user.auth);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { total: number; search_query_id?: number; items: Item[] };
};
const names = (items: Array<{ id: number }>) => items.map((i) => Object.keys(ids).find((k) => ids[k] === i.id) ?? String(i.id));

beforeAll(async () => {
  system = await startSystem();
  alice = await system.createUser({ firstname: 'Alice' });
  bob = await system.createUser({ firstname: 'Bob' });
  await question(alice, 'hops', {
    title: 'When should I add hops to the boil?',
    description: '<p>I brew pale ale and wonder about the bitterness of the wort.</p>',
    tags: ['hops', 'boil'],
  });
  await question(bob, 'yeast', {
    title: 'Which yeast strain ferments lagers best?',
    description: '<p>My lager tastes of sulfur after fermentation at cold temperatures.</p>',
    tags: ['yeast', 'lager'],
  });
  await question(bob, 'bottling', {
    title: 'How much priming sugar for bottling?',
    description: '<p>My bottles are flat after two weeks.</p>',
    tags: ['bottling'],
  });
  extra.solution = await solution(alice, ids.bottling!, '<p>Use corn sugar, about 5 grams per litre, and wait three weeks.</p>');
  const comment = await api()
    .post(`${API}/questions/${ids.yeast}/comments`)
    .set(...alice.auth)
    .send({ description: '<p>Have you tried a diacetyl rest before lagering?</p>' });
  expect(comment.status).toBe(201);
  extra.comment = comment.body.id;
  await question(bob, 'hopping', {
    title: 'Dry hopping in the keg: how long?',
    description: '<p>Aroma fades after a week in the keg.</p>',
    tags: ['keg'],
  });
  await question(alice, 'draft', { title: 'A draft about hops and rye', description: '<p>rye</p>' }, false);
  await question(bob, 'deleted', { title: 'Deleted question about hops and oak', description: '<p>oak</p>' });
  expect(
    (
      await api()
        .delete(`${API}/questions/${ids.deleted}`)
        .set(...bob.auth)
    ).status,
  ).toBe(204);
  await question(bob, 'german', {
    title: 'Wie lange muss das Bier gären?',
    description: '<p>Die Gärung meines Weizenbiers dauert ewig.</p>',
    language: 'de',
  });
  await system.searchCaughtUp();
}, 60_000);
afterAll(() => system?.stop());

describe('GET /questions?query', () => {
  test('finds title, description, solution and comment matches, title ones above 1.0 and comment-only ones below', async () => {
    const hops = await find('query=hops');
    expect(names(hops.items)[0]).toBe('hops');
    expect(hops.items[0]!.search_metadata.score).toBeGreaterThan(1.2);
    expect(hops.items[0]!.search_metadata.is_relevant).toBe(true);
    expect(hops.items[0]!.search_metadata.highlighting).toEqual({
      query_field: 'title',
      id: ids.hops,
      fragment: 'When should I add <em>hops</em> to the boil?',
      start: true,
      end: true,
    });

    const corn = await find('query=corn');
    expect(names(corn.items)).toEqual(['bottling']);
    expect(corn.items[0]!.search_metadata.highlighting).toMatchObject({
      query_field: 'solutions',
      id: extra.solution,
      start: true,
      end: true,
    });
    expect(corn.items[0]!.search_metadata.highlighting!.fragment).toBe(
      'Use <em>corn</em> sugar, about 5 grams per litre, and wait three weeks.',
    );

    const diacetyl = await find('query=diacetyl');
    expect(names(diacetyl.items)).toEqual(['yeast']);
    expect(diacetyl.items[0]!.search_metadata.score).toBeLessThan(0.8);
    expect(diacetyl.items[0]!.search_metadata.is_relevant).toBe(false);
    expect(diacetyl.items[0]!.search_metadata.highlighting).toMatchObject({ query_field: 'comments', id: extra.comment });
  });

  test('drafts and deleted questions are not found; administrators find deleted ones with include_deleted', async () => {
    expect(names((await find('query=rye')).items)).toEqual([]);
    expect(names((await find('query=oak')).items)).toEqual([]);
    const admin = await api()
      .get(`${API}/questions?query=oak&include_deleted=true`)
      .set(...bearer(system.adminToken));
    expect(names(admin.body.items)).toEqual(['deleted']);
  });

  test('prefixes of 3+ characters match, far below whole words', async () => {
    const hop = await find('query=hop');
    expect(names(hop.items).sort()).toEqual(['hopping', 'hops']);
    const whole = await find('query=hops');
    // "hops" is not a prefix of "hopping", but they share a stem: found, far below the whole word.
    const stemOnly = whole.items.find((i) => i.id === ids.hopping)!;
    expect(names(whole.items)[0]).toBe('hops');
    expect(stemOnly.search_metadata.score).toBeLessThan(whole.items[0]!.search_metadata.score / 5);
    const ho = await find('query=ho');
    expect(ho.total).toBe(0);
    const lag = await find('query=lag');
    expect(names(lag.items)).toEqual(['yeast']);
    expect(lag.items[0]!.search_metadata.score).toBeLessThan((await find('query=lager')).items[0]!.search_metadata.score / 5);
    expect(lag.items[0]!.search_metadata.highlighting!.fragment).toContain('<em>lagers</em>');
  });

  test('stems match below the whole word and above prefixes, in the question language; highlighting marks them', async () => {
    await question(alice, 'kegs', { title: 'Cleaning kegs between two batches', description: '<p>Star San or PBW?</p>' });
    await question(alice, 'kegerator', { title: 'Building a kegerator from an old fridge', description: '<p>Which taps?</p>' });
    await system.searchCaughtUp();
    const keg = await find('query=keg');
    expect(names(keg.items)).toEqual(['hopping', 'kegs', 'kegerator']);
    const [exact, stem, prefix] = keg.items.map((i) => i.search_metadata.score);
    expect(exact!).toBeGreaterThan(stem!);
    expect(stem!).toBeGreaterThan(prefix!);
    expect(keg.items[1]!.search_metadata.highlighting).toMatchObject({
      query_field: 'title',
      fragment: 'Cleaning <em>kegs</em> between two batches',
    });
    // German stems for a German question: "Gärungen" finds "Gärung".
    expect(names((await find('query=G%C3%A4rungen&language_id=de')).items)).toEqual(['german']);
  });

  test('a compound of the query also asks for its parts written together', async () => {
    await question(bob, 'fizz', { title: 'Overcarbonation in growlers', description: '<p>Sprays at opening.</p>' });
    await system.searchCaughtUp();
    const found = await find('query=over-carbonated');
    expect(names(found.items)).toEqual(['fizz']);
    expect(found.items[0]!.search_metadata.highlighting).toMatchObject({
      query_field: 'title',
      fragment: '<em>Overcarbonation</em> in growlers',
    });
  });

  test('a rare word of 5+ letters also matches words one or two edits away, below exact and stem matches', async () => {
    const typo = await find('query=furmentation');
    expect(names(typo.items)).toContain('yeast');
    const hit = typo.items.find((i) => i.id === ids.yeast)!;
    expect(hit.search_metadata.highlighting).toMatchObject({ query_field: 'description' });
    expect(hit.search_metadata.highlighting!.fragment).toContain('<em>fermentation</em>');
    const exact = (await find('query=fermentation')).items.find((i) => i.id === ids.yeast)!;
    expect(hit.search_metadata.score).toBeLessThan(exact.search_metadata.score);
    // Four letters are too few for a typo: "hopz" finds nothing.
    expect((await find('query=hopz')).total).toBe(0);
  });

  test('OR by default, AND on request; stop words are left out', async () => {
    expect(names((await find('query=hops%20yeast')).items).sort()).toEqual(['hopping', 'hops', 'yeast']);
    const both = await find('query=hops%20boil&query_default_operator=and');
    expect(names(both.items)[0]).toBe('hops');
    expect(both.items.filter((i) => i.search_metadata.score >= 0.8).map((i) => i.id)).toEqual([ids.hops]);
    expect((await find('query=the%20of%20and')).total).toBe(0);
    // German stop words are not words of German questions; "gärung" matches with and without the umlaut.
    expect(names((await find('query=die%20garung&language_id=de')).items)).toEqual(['german']);
  });

  test('query_fields restricts the fields; invalid names are ignored', async () => {
    expect((await find('query=corn&query_fields=title,description')).total).toBe(0);
    expect(names((await find('query=corn&query_fields=solutions,nonsense')).items)).toEqual(['bottling']);
    expect(names((await find('query=corn&query_fields=nonsense')).items)).toEqual(['bottling']);
    const titleOnly = await find('query=sugar&query_fields=title');
    expect(titleOnly.items[0]!.search_metadata.highlighting).toMatchObject({ query_field: 'title' });
  });

  test('filters apply and a sort overrides relevance', async () => {
    expect(names((await find('query=hops%20yeast&tags=lager')).items)).toEqual(['yeast']);
    const byId = await find('query=hops%20yeast%20sugar&sort=id.asc');
    expect(byId.items.map((i) => i.id)).toEqual([...byId.items.map((i) => i.id)].sort((a, b) => a - b));
    expect(byId.items.every((i) => i.search_metadata.score > 0)).toBe(true);
    const mine = await find('query=hops%20yeast&filter=my-questions', bob);
    expect(names(mine.items)).toEqual(['yeast', 'hopping']);
  });

  test('pages stay inside one ranking: offset and limit cut the same order, total counts all matches', async () => {
    const all = await find('query=hops%20yeast%20sugar%20keg&limit=100');
    expect(all.total).toBe(all.items.length);
    expect(all.total).toBeGreaterThanOrEqual(4);
    const pages = [];
    for (let offset = 0; offset < all.total; offset += 2)
      pages.push(...(await find(`query=hops%20yeast%20sugar%20keg&limit=2&offset=${offset}`)).items);
    expect(pages.map((i) => i.id)).toEqual(all.items.map((i) => i.id));
    expect(pages.map((i) => i.search_metadata.score)).toEqual(all.items.map((i) => i.search_metadata.score));
    const beyond = await find(`query=hops%20yeast%20sugar%20keg&offset=${all.total}`);
    expect(beyond).toMatchObject({ total: all.total, items: [] });
  });

  test('questions of a closed knowledge space are found by its members and administrators only', async () => {
    const space = await api()
      .post(`${API}/knowledge-spaces`)
      .set(...bearer(system.adminToken))
      .send({ name: 'Brewery secrets', is_closed: true });
    expect(space.status).toBe(201);
    await api()
      .put(`${API}/knowledge-spaces/${space.body.id}/members`)
      .set(...bearer(system.adminToken))
      .send({ user_ids: [bob.user.id] })
      .expect(200);
    await question(bob, 'secret', {
      title: 'Our secret juniper gruit recipe',
      description: '<p>juniper and heather</p>',
      knowledge_space: space.body.id,
    });
    await system.searchCaughtUp();
    expect(names((await find('query=juniper', bob)).items)).toEqual(['secret']);
    expect(await find('query=juniper', alice)).toMatchObject({ total: 0, items: [] });
    expect((await find('query=juniper&filter=unsolved', alice)).items).toEqual([]);
    const admin = await api()
      .get(`${API}/questions?query=juniper`)
      .set(...bearer(system.adminToken));
    expect(names(admin.body.items)).toEqual(['secret']);
    expect(names((await find(`query=juniper&knowledge_space=${space.body.id}`, bob)).items)).toEqual(['secret']);
  });

  test('log_query_type logs the query and answers search_query_id on the first page only', async () => {
    const logged = await find('query=hops&log_query_type=manual');
    expect(Number.isInteger(logged.search_query_id)).toBe(true);
    const again = await find('query=yeast&log_query_type=manual');
    expect(again.search_query_id).toBeGreaterThan(logged.search_query_id!);
    expect((await find('query=hops&log_query_type=manual&offset=1')).search_query_id).toBeUndefined();
    expect((await find('query=hops')).search_query_id).toBeUndefined();
    const rows = await system.services.search.runtime.db.selectFrom('search_queries').selectAll().orderBy('id').execute();
    expect(rows.map((r) => [r.query, r.type, r.user_id])).toEqual([
      ['hops', 'manual', alice.user.id],
      ['yeast', 'manual', alice.user.id],
    ]);
  });

  test('hostile and odd queries answer results or the contract errors, never a 500', async () => {
    for (const q of [
      "'; drop table questions; --",
      '.*(a+)+$',
      '"hops',
      'hops*',
      'NEAR(hops yeast)',
      '{title}: hops',
      '^-^ !!! ???',
      'пиво',
      '啤酒',
      '🍺',
      'بيرة باردة',
      'x',
      'the and of',
      'Bier beer cerveza 啤酒 بيرة pivo',
      `${'hopfen '.repeat(142)}hops`.slice(0, 1000),
      '\u0301\u0301 ǅ İ ß'.repeat(3),
    ]) {
      const res = await api()
        .get(`${API}/questions?query=${encodeURIComponent(q)}`)
        .set(...alice.auth);
      expect([q, res.status]).toEqual([q, 200]);
    }
    expect((await find(`query=${encodeURIComponent('"hops')}`)).items[0]!.id).toBe(ids.hops);
    const long = await api()
      .get(`${API}/questions?query=${'a'.repeat(10_000)}`)
      .set(...alice.auth);
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('ValidationError');
    // An empty query is no search: the plain list.
    const empty = await find('query=');
    expect(empty.total).toBeGreaterThan(3);
    expect(empty.items[0]!.search_metadata).toBeUndefined();
  });
});

describe('similar questions', () => {
  test('GET /questions/:id/similar ranks by topic with the cosine as score; 404 for drafts', async () => {
    const other = await question(alice, 'lager2', {
      title: 'Lager fermentation smells of sulfur',
      description: '<p>Cold fermentation of my lager with a new yeast strain gives sulfur.</p>',
      tags: ['lager'],
    });
    await system.searchCaughtUp();
    const res = await api()
      .get(`${API}/questions/${ids.yeast}/similar`)
      .set(...alice.auth);
    expect(res.status).toBe(200);
    expect(res.body.items[0].id).toBe(other);
    const scores = res.body.items.map((i: Item) => i.search_metadata.score);
    expect(scores.every((s: number) => s > 0 && s <= 1)).toBe(true);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(res.body.items.some((i: Item) => i.id === ids.yeast)).toBe(false);
    expect(res.body.total).toBe(res.body.items.length);
    expect(
      (
        await api()
          .get(`${API}/questions/${ids.draft}/similar`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .get(`${API}/questions/999999/similar`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
  });

  test('GET /search/questions-similar takes a text, limit and offset', async () => {
    const res = await api()
      .get(`${API}/search/questions-similar?query=${encodeURIComponent('sulfur smell in cold lager fermentation')}&limit=1`)
      .set(...alice.auth);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.total).toBeGreaterThan(1);
    const second = await api()
      .get(`${API}/search/questions-similar?query=${encodeURIComponent('sulfur smell in cold lager fermentation')}&limit=1&offset=1`)
      .set(...alice.auth);
    expect(second.body.items[0].id).not.toBe(res.body.items[0].id);
    expect(
      (
        await api()
          .get(`${API}/search/questions-similar`)
          .set(...alice.auth)
      ).status,
    ).toBe(400);
  });

  test("a text's similar questions are question search's ranking of it, each score s given as s / (1 + s)", async () => {
    const text = 'sulfur smell in cold lager fermentation';
    const [similar, searched] = await Promise.all([
      api()
        .get(`${API}/search/questions-similar?query=${encodeURIComponent(text)}&limit=100`)
        .set(...alice.auth),
      api()
        .get(`${API}/questions?query=${encodeURIComponent(text)}&limit=100`)
        .set(...alice.auth),
    ]);
    expect([similar.status, searched.status]).toEqual([200, 200]);
    expect(similar.body.items.length).toBeGreaterThan(1);
    expect(similar.body.items.map((i: Item) => i.id)).toEqual(searched.body.items.map((i: Item) => i.id));
    for (const [i, item] of similar.body.items.entries()) {
      const s = searched.body.items[i].search_metadata.score;
      expect(item.search_metadata.score).toBeCloseTo(s / (1 + s), 6);
    }
  });
});

describe('autocomplete and tag suggestions', () => {
  test('autocomplete completes the last word of titles', async () => {
    const res = await api()
      .get(`${API}/search/questions-autocomplete?query=priming%20su`)
      .set(...alice.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ total: 1, items: ['How much priming sugar for bottling?'] });
    const none = await api()
      .get(`${API}/search/questions-autocomplete?query=oak`)
      .set(...alice.auth);
    expect(none.body).toEqual({ total: 0, items: [] });
  });

  test('tag suggestions are existing tags only, from the text and from similar questions', async () => {
    const res = await api()
      .post(`${API}/search/tags/suggestions`)
      .set(...alice.auth)
      .send({ title: 'My lager yeast makes sulfur', description: 'cold fermentation' });
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toBe('lager');
    expect(res.body.items).toContain('yeast');
    expect(res.body.items.every((t: string) => ['lager', 'yeast', 'hops', 'boil', 'bottling', 'keg'].includes(t))).toBe(true);
    const none = await api()
      .post(`${API}/search/tags/suggestions`)
      .set(...alice.auth)
      .send({ title: 'quantum chromodynamics' });
    expect(none.body).toEqual({ total: 0, items: [] });
  });
});

describe('many matches', () => {
  test('a query that matches more questions than the ranking reads counts them all, on a page and on the last', async () => {
    for (let i = 0; i < 55; i++)
      await question(alice, `zymurgy${i}`, {
        title: `Zymurgy log ${i}: gravity readings`,
        description: '<p>Notes of a brew day.</p>',
        tags: ['zymurgy'],
      });
    await system.searchCaughtUp();
    // More matches than the best the blend reads (50): the engine counts those a relevant page keeps.
    const first = await find('query=zymurgy');
    expect(first.items.map((i) => i.search_metadata.is_relevant)).toEqual(Array(10).fill(true));
    expect(first.total).toBe(55);
    const last = await find('query=zymurgy&offset=50');
    expect(last.total).toBe(55);
    expect(last.items).toHaveLength(5);
  });
});

describe('the index', () => {
  test('a new instance catches up from the streams; a rebuild answers SearchIndexLoading until it has caught up again', async () => {
    const { env } = system;
    await question(bob, 'restart', { title: 'Cider from apples: which yeast?', description: '<p>apples</p>' });
    await system.searchCaughtUp();
    const second = await search.start(search.loadConfig({ ...env, SEARCH_INDEX_PATH: `${env.SEARCH_INDEX_PATH}.second` }));
    const first = system.services.search.backend;
    const hopsQuery = {
      query: 'hops',
      operator: 'OR' as const,
      fields: ['title' as const],
      stop_languages: ['en'],
      filter: { tag_operator: 'OR' as const, include_uncategorized: false, include_deleted: false },
      offset: 0,
      limit: 1,
      highlight: false,
    };
    try {
      await second.backend.caughtUp();
      await first.caughtUp();
      expect(second.backend.status().ready).toBe(true);
      expect(second.backend.status().questions).toBe(first.status().questions);
      const rebuilding = second.backend.rebuild();
      await expect(second.backend.match(hopsQuery)).rejects.toMatchObject({ status: 503, code: 'SearchIndexLoading' });
      await rebuilding;
      await second.backend.caughtUp();
      // On Elasticsearch the first instance reads the rebuilt index too: its figures as of now, not of its last poll.
      await first.caughtUp();
      expect(second.backend.status().questions).toBe(first.status().questions);
      expect((await second.backend.match(hopsQuery)).total).toBeGreaterThan(0);
    } finally {
      await second.stop();
    }
  });

  test('while the index is not loaded, search answers 503 SearchIndexLoading, never an empty list', async () => {
    const { backend } = system.services.search;
    await backend.close();
    try {
      for (const path of ['/questions?query=hops', '/search/questions-similar?query=hops', '/search/questions-autocomplete?query=hop']) {
        const res = await api()
          .get(`${API}${path}`)
          .set(...alice.auth);
        expect([path, res.status, res.body.code]).toEqual([path, 503, 'SearchIndexLoading']);
      }
    } finally {
      await backend.open();
    }
    await system.searchCaughtUp();
    expect(names((await find('query=hops')).items)[0]).toBe('hops');
  });
});
