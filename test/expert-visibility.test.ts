import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importDump } from '@kn/stackexchange';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/**
 * Issue 46: everything about a closed knowledge space (its tags, their counts, the experts it made)
 * is visible only to those who may read it; expert search, routing and recommendations leave out
 * system users, deleted users and whoever cannot read the question, also when an event makes them
 * so later.
 */
let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
const api = () => system.api;
const admin = () => bearer(system.adminToken);
let labPoser: U;
let secretExpert: U;
let member: U;
let outsider: U;
let openPoser: U;
let lab: number;
const ids: Record<string, number> = {};

async function question(user: U, body: Record<string, unknown>) {
  const { id, published } = await newQuestion(system, user.token, body);
  return { id, number_of_experts: published.number_of_experts as number };
}

const accepted = async (poser: U, author: U, questionId: number, text: string) => {
  const s = await publishedSolution(system, author.token, questionId, `<p>${text}</p>`);
  await api()
    .put(`${API}/solutions/${s}/accept`)
    .set(...poser.auth)
    .expect(200);
  return s;
};

type Found = {
  tags: string[];
  experts: Array<{
    user: { id: number };
    details: { solution_count: number; expert_tags: Array<{ label: string }>; reasons: { similar_questions: Array<{ id: number }> } };
  }>;
};
const experts = async (user: U | [string, string], query: string): Promise<Found> => {
  const res = await api()
    .post(`${API}/search/experts`)
    .set(...(Array.isArray(user) ? user : user.auth))
    .send({ query, limit: 20 });
  expect(res.status).toBe(200);
  return res.body;
};
const expertIds = (found: { experts: Array<{ user: { id: number } }> }) => found.experts.map((e) => e.user.id);
const routedTo = async (questionId: number) =>
  (
    await system.services.search.runtime.db
      .selectFrom('routings')
      .select(['reason', 'experts'])
      .where('question_id', '=', questionId)
      .orderBy('id')
      .execute()
  ).map((r) => ({ reason: r.reason, users: r.experts.map((e) => e.user_id) }));

beforeAll(async () => {
  system = await startSystem({ ROUTING_EXPERTS: '10' });
  labPoser = await system.createUser({ firstname: 'Lab', lastname: 'Poser' });
  secretExpert = await system.createUser({ firstname: 'Secret', lastname: 'Expert' });
  member = await system.createUser({ firstname: 'Space', lastname: 'Member' });
  outsider = await system.createUser({ firstname: 'Out', lastname: 'Sider' });
  openPoser = await system.createUser({ firstname: 'Open', lastname: 'Poser' });
  const space = await api()
    .post(`${API}/knowledge-spaces`)
    .set(...admin())
    .send({ name: 'Yeast lab', is_closed: true });
  expect(space.status).toBe(201);
  lab = space.body.id;
  await api()
    .put(`${API}/knowledge-spaces/${lab}/members`)
    .set(...admin())
    .send({ user_ids: [labPoser.user.id, secretExpert.user.id, member.user.id] })
    .expect(200);

  // In the closed space: "kveik" is used nowhere else; "hops" is used outside it too.
  for (const [n, title] of ['Kveik yeast at high fermentation temperature?', 'Kveik yeast pitching rate for a farmhouse ale?'].entries()) {
    const q = await question(labPoser, {
      title,
      description: '<p>kveik yeast ferments hot and fast</p>',
      tags: ['kveik'],
      knowledge_space: lab,
    });
    await accepted(labPoser, secretExpert, q.id, `Pitch the kveik yeast warm (${n}).`);
    ids[`kveik${n}`] = q.id;
  }
  for (const [n, title] of ['Hops for a secret lab lager?', 'Dry hopping in the lab fermenter?'].entries()) {
    const q = await question(labPoser, { title, description: '<p>hops aroma</p>', tags: ['hops'], knowledge_space: lab });
    await accepted(labPoser, secretExpert, q.id, `Lab hops late (${n}).`);
    await publishedSolution(system, member.token, q.id, `<p>Hops in the whirlpool (${n}).</p>`);
    ids[`labHops${n}`] = q.id;
  }
  // Outside: one question about hops, answered by the member.
  const open = await question(openPoser, {
    title: 'When should I add hops to the boil?',
    description: '<p>hops bitterness</p>',
    tags: ['hops'],
  });
  await accepted(openPoser, member, open.id, 'Add bittering hops early.');
  ids.openHops = open.id;
  await system.searchCaughtUp();
}, 180_000);
afterAll(() => system?.stop());

describe('a closed knowledge space keeps its tags and experts to those who may read it', () => {
  test('GET /tags lists a tag used only in the closed space to its members and administrators only', async () => {
    const listed = async (auth: [string, string], query = '') =>
      (
        await api()
          .get(`${API}/tags${query}`)
          .set(...auth)
          .expect(200)
      ).body;
    expect(await listed(outsider.auth, '?query=kve')).toMatchObject({ total: 0, items: [] });
    expect(await listed(member.auth, '?query=kve')).toMatchObject({ total: 1, items: ['kveik'] });
    expect(await listed(admin(), '?query=kve')).toMatchObject({ total: 1, items: ['kveik'] });
    const all = await listed(outsider.auth);
    expect(all.items).toContain('hops');
    expect(all.items).not.toContain('kveik');
    expect((await listed(member.auth)).total).toBe(all.total + 1);
  });

  test('GET /tag-labels/:label counts only the questions the caller may read; a tag of the closed space alone is 404 to others', async () => {
    const label = (auth: [string, string], name: string) =>
      api()
        .get(`${API}/tag-labels/${name}`)
        .set(...auth);
    expect((await label(outsider.auth, 'kveik')).status).toBe(404);
    expect((await label(member.auth, 'kveik')).body).toMatchObject({ label: 'kveik', question_count: 2 });
    expect((await label(outsider.auth, 'hops')).body).toMatchObject({ label: 'hops', question_count: 1 });
    expect((await label(member.auth, 'hops')).body).toMatchObject({ label: 'hops', question_count: 3 });
    expect((await label(admin(), 'hops')).body).toMatchObject({ question_count: 3 });
    // Linked from an open tag: the link shows to those who may read it.
    await api()
      .put(`${API}/tag-labels/hops/links`)
      .set(...admin())
      .send(['kveik', 'malt'])
      .expect(200);
    const links = async (auth: [string, string], name: string) =>
      api()
        .get(`${API}/tag-labels/${name}/links`)
        .set(...auth);
    expect((await links(outsider.auth, 'hops')).body).toEqual(['malt']);
    expect((await links(member.auth, 'hops')).body).toEqual(['kveik', 'malt']);
    expect((await links(outsider.auth, 'kveik')).status).toBe(404);
    await api()
      .put(`${API}/tag-labels/hops/links`)
      .set(...admin())
      .send([])
      .expect(200);
    await system.searchCaughtUp();
  });

  test('tag suggestions name a tag of the closed space to its members only, and its questions lend their tags to them only', async () => {
    const suggest = async (user: U) =>
      (
        await api()
          .post(`${API}/search/tags/suggestions`)
          .set(...user.auth)
          .send({ title: 'Kveik yeast at high fermentation temperature for a farmhouse ale?', limit: 10 })
          .expect(200)
      ).body as { total: number; items: string[] };
    expect((await suggest(member)).items).toContain('kveik');
    expect((await suggest(outsider)).items).not.toContain('kveik');
    // Without naming it: the lab's questions like the text lend it their tag, to members only.
    const similar = async (user: U) =>
      (
        await api()
          .post(`${API}/search/tags/suggestions`)
          .set(...user.auth)
          .send({ title: 'Farmhouse ale yeast that ferments hot and fast', limit: 10 })
          .expect(200)
      ).body.items as string[];
    expect(await similar(member)).toContain('kveik');
    expect(await similar(outsider)).toEqual([]);
  });

  test('expert search names nobody, and no tag, on the strength of what the caller cannot read', async () => {
    const kveik = 'How hot can I ferment kveik yeast?';
    const inside = await experts(member, kveik);
    expect(inside.tags).toContain('kveik');
    expect(expertIds(inside)).toContain(secretExpert.user.id);
    const outside = await experts(outsider, kveik);
    expect(outside.tags).not.toContain('kveik');
    expect(expertIds(outside)).not.toContain(secretExpert.user.id);

    // Hops: the secret expert's record is all in the lab; the member's is one open answer and two lab ones.
    const hops = 'When do I add hops to the boil for bitterness?';
    const seenInside = await experts(labPoser, hops);
    expect(expertIds(seenInside)).toEqual(expect.arrayContaining([secretExpert.user.id, member.user.id]));
    expect(seenInside.experts.find((e) => e.user.id === member.user.id)!.details.solution_count).toBe(3);
    const seenOutside = await experts(outsider, hops);
    expect(expertIds(seenOutside)).toEqual([member.user.id]);
    const details = seenOutside.experts[0]!.details;
    expect(details.solution_count).toBe(1);
    expect(details.expert_tags).toEqual([{ label: 'hops' }]);
    expect(details.reasons.similar_questions.map((q) => q.id)).toEqual([ids.openHops]);
    // Administrators read every space.
    expect(expertIds(await experts(admin(), hops))).toEqual(expect.arrayContaining([secretExpert.user.id, member.user.id]));
  });

  test("GET /questions/:id/experts of an open question shows the caller's view: nobody found only in the closed space", async () => {
    const of = async (user: U) =>
      (
        await api()
          .get(`${API}/questions/${ids.openHops}/experts`)
          .set(...user.auth)
          .expect(200)
      ).body.items.map((i: { user: { id: number } }) => i.user.id);
    expect(await of(outsider)).not.toContain(secretExpert.user.id);
    expect(await of(labPoser)).toContain(secretExpert.user.id);
  });

  test('someone taken out of the closed space is no longer sent, nor shown as expert on, its questions', async () => {
    await api()
      .put(`${API}/knowledge-spaces/${lab}/members`)
      .set(...admin())
      .send({ user_ids: [labPoser.user.id, secretExpert.user.id] })
      .expect(200);
    await system.searchCaughtUp();
    const q = await question(labPoser, {
      title: 'Hop creep in the lab fermenter?',
      description: '<p>hops creep</p>',
      tags: ['hops'],
      knowledge_space: lab,
    });
    await system.routed();
    const [routing] = await routedTo(q.id);
    expect(routing!.users).toEqual([secretExpert.user.id]);
    expect(q.number_of_experts).toBe(1);
    const shown = await api()
      .get(`${API}/questions/${q.id}/experts`)
      .set(...labPoser.auth)
      .expect(200);
    expect(shown.body.items.map((i: { user: { id: number } }) => i.user.id)).toEqual([secretExpert.user.id]);
  });
});

// A dump whose answers lost their accounts: their author is the importer's "Former user", a system user.
function ciderDump() {
  const dir = mkdtempSync(path.join(tmpdir(), 'stackexchange-cider-'));
  const row = (attrs: Record<string, string | number>) =>
    `<row ${Object.entries(attrs)
      .map(([k, v]) => `${k}="${String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}"`)
      .join(' ')} />`;
  const questions = [
    [1, 'Which apples make the best dry cider?', 2],
    [3, 'How long should cider ferment before bottling?', 4],
    [5, 'Can I back-sweeten cider without refermentation?', 6],
    [7, 'Is wild yeast safe for making cider?', 8],
  ] as const;
  const posts = questions.flatMap(([id, title, answer]) => [
    row({
      Id: id,
      PostTypeId: 1,
      CreationDate: '2016-03-01T10:00:00.000',
      Score: 1,
      ViewCount: 10,
      Body: '<p>cider apples fermentation</p>',
      OwnerUserId: 1,
      Title: title,
      Tags: '<cider>',
      AcceptedAnswerId: answer,
    }),
    // The last answer has its author; the others were written by accounts deleted since.
    row({
      Id: answer,
      PostTypeId: 2,
      ParentId: id,
      CreationDate: '2016-03-02T10:00:00.000',
      Score: 3,
      Body: `<p>For cider use bittersweet apples and perry pears (${id}).</p>`,
      ...(id === 7 ? { OwnerUserId: 2 } : {}),
    }),
  ]);
  const files: Record<string, string> = {
    'Users.xml': `<users>${row({ Id: 1, DisplayName: 'Paula Press', CreationDate: '2015-01-01T00:00:00.000' })}${row({
      Id: 2,
      DisplayName: 'Carl Cider',
      CreationDate: '2015-01-01T00:00:00.000',
    })}</users>`,
    'Tags.xml': `<tags>${row({ Id: 1, TagName: 'cider', Count: 4 })}</tags>`,
    'Posts.xml': `<posts>${posts.join('\n')}</posts>`,
    'Comments.xml': '<comments></comments>',
    'Votes.xml': '<votes></votes>',
    'PostLinks.xml': '<postlinks></postlinks>',
  };
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

describe('accounts that cannot answer are never experts', () => {
  let former: number;
  let carl: number;
  let site: string;
  const importedQuestion = async (post: number) =>
    (
      await system.services.content.runtime.db
        .selectFrom('questions')
        .select('id')
        .where('external_id', '=', `stackexchange:${site}:post:${post}`)
        .executeTakeFirstOrThrow()
    ).id;
  const authorOf = async (post: number) =>
    (
      await system.services.content.runtime.db
        .selectFrom('solutions')
        .select('author_id')
        .where('external_id', '=', `stackexchange:${site}:post:${post}`)
        .executeTakeFirstOrThrow()
    ).author_id;

  beforeAll(async () => {
    const dir = ciderDump();
    const state = mkdtempSync(path.join(tmpdir(), 'kn-import-state-'));
    try {
      const summary = await importDump({ dir, bus: system.services.content.runtime.bus, stateDir: state, target: 'test' });
      expect(summary.solutions.created).toBe(4);
      site = summary.site;
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(state, { recursive: true, force: true });
    }
    former = await authorOf(2);
    carl = await authorOf(8);
    const user = await api()
      .get(`${API}/users/${former}`)
      .set(...admin())
      .expect(200);
    expect(user.body).toMatchObject({ firstname: 'Former', is_system: true });
    await system.searchCaughtUp();
  }, 120_000);

  test("the importer's Former user is never found, routed or counted; their answers still count as content", async () => {
    const found = await experts(outsider, 'Which apples for a dry cider?');
    expect(found.tags).toEqual(['cider']);
    expect(expertIds(found)).toEqual([carl]);
    expect(expertIds(await experts(openPoser, 'How long does cider ferment?'))).not.toContain(former);

    const q = await question(openPoser, {
      title: 'Pears in a cider blend?',
      description: '<p>cider with perry pears</p>',
      tags: ['cider'],
    });
    await system.routed();
    const [routing] = await routedTo(q.id);
    expect(routing).toEqual({ reason: 'published', users: [carl] });
    expect(q.number_of_experts).toBe(1);
    ids.pears = q.id;

    const recommended = await api()
      .get(`${API}/questions/${q.id}/experts`)
      .set(...outsider.auth)
      .expect(200);
    expect(recommended.body.items.map((i: { user: { id: number } }) => i.user.id)).toEqual([carl]);

    // Search still finds what they wrote.
    const search = await api()
      .get(`${API}/questions?query=bittersweet`)
      .set(...outsider.auth)
      .expect(200);
    expect(search.body.items.map((i: { id: number }) => i.id)).toEqual(
      expect.arrayContaining([await importedQuestion(1), await importedQuestion(3), await importedQuestion(5)]),
    );
  });

  test('a user made a system user later is left out from then on: expert search, recommendations and validation requests', async () => {
    const dora = await system.createUser({ firstname: 'Dora', lastname: 'Press' });
    for (const post of [1, 3, 5])
      await publishedSolution(system, dora.token, await importedQuestion(post), '<p>Cider from bittersweet apples.</p>');
    await system.searchCaughtUp();
    expect(expertIds(await experts(outsider, 'Which apples for a dry cider?'))).toContain(dora.user.id);

    await api()
      .put(`${API}/users/${dora.user.id}`)
      .set(...admin())
      .send({ is_system: true })
      .expect(200);
    await system.searchCaughtUp();
    const found = await experts(outsider, 'Which apples for a dry cider?');
    expect(expertIds(found)).toEqual([carl]);
    const recommended = await api()
      .get(`${API}/questions/${ids.pears}/experts`)
      .set(...outsider.auth)
      .expect(200);
    expect(recommended.body.items.map((i: { user: { id: number } }) => i.user.id)).toEqual([carl]);

    // A validation request goes to experts not sent the question before: nobody is left but Dora, who cannot answer.
    await api()
      .put(`${API}/questions/${ids.pears}/request-validation`)
      .set(...outsider.auth)
      .expect(200);
    await system.routed();
    expect(await routedTo(ids.pears)).toEqual([
      { reason: 'published', users: [carl] },
      { reason: 'validation', users: [] },
    ]);
  });
});
