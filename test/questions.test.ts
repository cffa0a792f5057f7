import { sql } from '@kn/db';
import { contentEvents, usersProjectionCaughtUp } from '../services/content/test/events.ts';
import { API, newQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
type U = Awaited<ReturnType<System['createUser']>>;
let alice: U;
let bob: U;
let admin: U;

beforeAll(async () => {
  system = await startSystem();
  alice = await system.createUser({ firstname: 'Alice' });
  bob = await system.createUser({ firstname: 'Bob' });
  admin = await system.createUser({ firstname: 'Ada' }, ['user', 'content_admin']);
  await usersProjectionCaughtUp(system);
});
afterAll(() => system?.stop());

const api = () => system.api;
const Q = `${API}/questions`;

const aQuestion = { title: 'How do I configure the build proxy?', description: '<p>The build fails behind the proxy.</p>' };
/** The created resource of a draft, and of a question then published. */
const draft = async (user: U, body: Record<string, unknown> = {}) =>
  (await newQuestion(system, user.token, { ...aQuestion, ...body }, { publish: false })).created;
const published = async (user: U, body: Record<string, unknown> = {}) =>
  (await newQuestion(system, user.token, { ...aQuestion, ...body })).created;

describe('drafts', () => {
  test('creating a draft returns the whole Question resource', async () => {
    const q = await draft(alice, { tags: ['proxy', 'build'] });
    expect(q).toMatchObject({
      is_published: false,
      published: null,
      language: 'en',
      title: 'How do I configure the build proxy?',
      slug: 'how-do-i-configure-the-build-proxy',
      description: '<p>The build fails behind the proxy.</p>',
      solution_count: 0,
      view_count: 0,
      upvote_count: 0,
      is_deleted: false,
      attachments: `/api/v1/questions/${q.id}/attachments`,
      category: null,
      tag_relations: [],
      knowledge_space_id: null,
    });
    expect(typeof q.image).toBe('string');
    for (const f of ['created', 'updated', 'content_updated', 'last_activity'])
      expect(q[f]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(q.concepts.map((c: { primary_label: string }) => c.primary_label)).toEqual(['proxy', 'build']);
    expect(q.concepts[0]).toMatchObject({ label_match: 'proxy', language: 'en', description: null, ontology_id: null, is_flat: true });
    expect(q.concepts[0].concept_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(q).not.toHaveProperty('author_id');
    expect(q).not.toHaveProperty('translations');
  });

  test('a draft may have an empty title and no body at all', async () => {
    const res = await api()
      .post(Q)
      .set(...alice.auth)
      .send({});
    expect(res.status).toBe(201);
    expect(res.body.title).toBe('');
    expect(res.body.description).toBeNull();
  });

  test('descriptions are sanitized and mentions kept', async () => {
    const q = await draft(alice, {
      description: `<p onclick="steal()">Hi <span data-mention-user-id="${bob.user.id}">@Bob</span><script>alert(1)</script><a href="javascript:alert(1)">x</a></p>`,
    });
    expect(q.description).toBe(`<p>Hi <span data-mention-user-id="${bob.user.id}">@Bob</span><a>x</a></p>`);
    const events = await contentEvents(system, 'content.question.created');
    const created = events.find((e) => e.data.question.id === q.id);
    expect(created?.data.question.mentions).toEqual([bob.user.id]);
    expect(created?.data.question.description_text).toBe('Hi @Bobx');
  });

  test('the language is detected from title and description, or taken as given', async () => {
    const de = await draft(alice, {
      title: 'Wie kann ich den Proxy für das Netzwerk einrichten?',
      description: '<p>Es ist nicht möglich.</p>',
    });
    expect(de.language).toBe('de');
    const fr = await draft(alice, { title: 'Comment configurer le proxy pour le réseau?', description: null });
    expect(fr.language).toBe('fr');
    const given = await draft(alice, { language: 'es' });
    expect(given.language).toBe('es');
  });

  test('without recognisable words the network default language is used (from the settings projection)', async () => {
    const res = await api()
      .put('/api/v1/settings')
      .set(...bearer(system.adminToken))
      .send({ default_language: 'pt' });
    expect(res.status).toBe(200);
    await usersProjectionCaughtUp(system);
    const q = await draft(alice, { title: 'kubectl rollout xyz', description: null });
    expect(q.language).toBe('pt');
    await api()
      .put('/api/v1/settings')
      .set(...bearer(system.adminToken))
      .send({ default_language: 'en' });
    await usersProjectionCaughtUp(system);
  });

  test('bad input is refused and creates nothing', async () => {
    const before = (await contentEvents(system, 'content.question.created')).length;
    const cases = [
      { title: 'x'.repeat(101) },
      { tags: ['x'.repeat(192)] },
      { language: 'english' },
      { category: 'abc' },
      { description: 42 },
    ];
    for (const body of cases) {
      const res = await api()
        .post(Q)
        .set(...alice.auth)
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ValidationError');
    }
    expect(
      (
        await api()
          .post(Q)
          .set(...alice.auth)
          .send({ category: 999999 })
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .post(Q)
          .set(...alice.auth)
          .send({ knowledge_space: 999999 })
      ).status,
    ).toBe(404);
    expect((await api().post(Q).send({})).status).toBe(401);
    expect((await contentEvents(system, 'content.question.created')).length).toBe(before);
  });

  test('a draft is visible to its author only (and content administrators)', async () => {
    const q = await draft(alice);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...alice.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...admin.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .get(`${Q}/999999`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .get(`${Q}/abc`)
          .set(...alice.auth)
      ).status,
    ).toBe(400);
  });
});

describe('update', () => {
  test('the author updates title, description, language and category', async () => {
    const cat = await api()
      .post('/api/v1/categories')
      .set(...bearer(system.adminToken))
      .send({ name: 'Build', color: '#00ff00' });
    expect(cat.status).toBe(201);
    const q = await published(alice);
    const res = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({
        title: 'How do I set up the proxy for builds?',
        description: `<p>Asking <span data-mention-user-id="${bob.user.id}">@Bob</span></p>`,
        category: cat.body.id,
      });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: 'How do I set up the proxy for builds?',
      slug: 'how-do-i-set-up-the-proxy-for-builds',
      category: cat.body,
    });
    expect(Date.parse(res.body.content_updated)).toBeGreaterThanOrEqual(Date.parse(q.content_updated));
    const events = await contentEvents(system, 'content.question.updated');
    const e = events.at(-1)!;
    expect(e.data.question.id).toBe(q.id);
    expect(e.data.changed).toEqual(['title', 'description', 'category']);
    expect(e.data.new_mentions).toEqual([bob.user.id]);
    expect(e.data.question.category).toEqual({ id: cat.body.id, name: 'Build' });
    expect(e.data.question.author_id).toBe(alice.user.id);

    const uncat = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({ category: null });
    expect(uncat.body.category).toBeNull();
  });

  test('a content administrator may edit; another user may not', async () => {
    const q = await published(alice);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}`)
          .set(...bob.auth)
          .send({ title: 'An edited title here' })
      ).status,
    ).toBe(403);
    const res = await api()
      .put(`${Q}/${q.id}`)
      .set(...admin.auth)
      .send({ title: 'An edited title here' });
    expect(res.status).toBe(200);
    expect(res.body.title).toBe('An edited title here');
    // Someone else's draft does not exist for them.
    const d = await draft(alice);
    expect(
      (
        await api()
          .put(`${Q}/${d.id}`)
          .set(...bob.auth)
          .send({ title: 'An edited title here' })
      ).status,
    ).toBe(404);
  });

  test('titles must have 10 to 100 characters and categories must exist; nothing changes', async () => {
    const q = await published(alice);
    for (const title of ['short', '', 'x'.repeat(101)]) {
      const res = await api()
        .put(`${Q}/${q.id}`)
        .set(...alice.auth)
        .send({ title });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ValidationError');
      expect(res.body.errors[0].path).toBe('title');
    }
    const res = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({ title: 'A perfectly fine title', category: 999999 });
    expect(res.status).toBe(404);
    const after = await api()
      .get(`${Q}/${q.id}`)
      .set(...alice.auth);
    expect(after.body.title).toBe(q.title);
  });
});

describe('update, continued', () => {
  test('an explicit language wins; a deleted question cannot be edited; an empty body changes nothing', async () => {
    const q = await published(alice);
    const res = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({ language: 'it' });
    expect(res.body.language).toBe('it');
    const before = (await contentEvents(system, 'content.question.updated')).length;
    const same = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({});
    expect(same.status).toBe(200);
    expect(same.body.updated).toBe(res.body.updated);
    expect((await contentEvents(system, 'content.question.updated')).length).toBe(before);
    await api()
      .delete(`${Q}/${q.id}`)
      .set(...alice.auth);
    const gone = await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({ title: 'Editing a deleted one' });
    expect(gone.status).toBe(409);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/follow`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    const d = await draft(alice);
    expect(
      (
        await api()
          .put(`${Q}/${d.id}/follow`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .put(`${Q}/${d.id}/flag`)
          .set(...alice.auth)
          .send({})
      ).status,
    ).toBe(404);
  });
});

describe('publish', () => {
  test('publishing answers number_of_experts, makes the question visible and publishes an event', async () => {
    await draft(bob, { tags: ['Kubernetes', 'docker', 'pod restart policy'] });
    const excluded = await api()
      .put('/api/v1/tag-labels/pod restart policy')
      .set(...bearer(system.adminToken))
      .send({ excluded_from_suggestions: true });
    expect(excluded.status).toBe(200);
    const q = await draft(alice, {
      title: 'kubernetes pods keep restarting',
      description: '<p>My docker image works locally; pod restart policy is Always. dockerfile</p>',
    });
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    // Tag suggestions come from the search index: let it see bob's tags and the exclusion first.
    await system.searchCaughtUp();
    const res = await api()
      .put(`${Q}/${q.id}/publish`)
      .set(...alice.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ number_of_experts: 0 });
    const seen = await api()
      .get(`${Q}/${q.id}`)
      .set(...bob.auth);
    expect(seen.status).toBe(200);
    expect(seen.body.is_published).toBe(true);
    expect(seen.body.published).toMatch(/Z$/);
    // Tags were added from the text because the draft had none.
    expect(seen.body.concepts.map((c: { primary_label: string }) => c.primary_label).sort()).toEqual(['Kubernetes', 'docker']);
    const e = (await contentEvents(system, 'content.question.published')).at(-1)!;
    expect(e.data.question).toMatchObject({ id: q.id, author_id: alice.user.id, is_published: true, language: 'en' });
    expect(e.data.question.tags.map((t: { label: string }) => t.label).sort()).toEqual(['Kubernetes', 'docker']);
  });

  test('publishing twice is a conflict', async () => {
    const q = await published(alice);
    const res = await api()
      .put(`${Q}/${q.id}/publish`)
      .set(...alice.auth);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('Conflict');
  });

  test('a draft without a proper title fails the published-question validation', async () => {
    for (const title of ['', 'too short']) {
      const q = await draft(alice, { title });
      const res = await api()
        .put(`${Q}/${q.id}/publish`)
        .set(...alice.auth);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('PublishValidationError');
      expect(res.body.errors[0].path).toBe('title');
      expect(
        (
          await api()
            .get(`${Q}/${q.id}`)
            .set(...alice.auth)
        ).body.is_published,
      ).toBe(false);
    }
  });

  test('only the author or a content administrator publishes', async () => {
    const q = await draft(alice);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/publish`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/publish`)
          .set(...admin.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .put(`${Q}/999999/publish`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
  });
});

describe('views, delete, restore, flag, follow, experts', () => {
  test('a view counts once per person, question and day', async () => {
    const q = await published(alice);
    const read = async (user: U) => {
      const res = await api()
        .get(`${Q}/${q.id}`)
        .set(...user.auth);
      expect(res.status).toBe(200);
      return res.body.view_count as number;
    };
    // 21 reads by one person, ten of them at once: one view.
    await Promise.all(Array.from({ length: 10 }, () => read(bob)));
    for (let i = 0; i < 10; i++) await read(bob);
    expect(await read(bob)).toBe(1);
    expect(await read(alice)).toBe(2);
    expect(await read(alice)).toBe(2);

    // Bob's view as if it were yesterday's: his next read is a new day's view, and past days are cleared.
    const db = system.services.content.runtime.db;
    await sql`update question_views set day = day - 1 where question_id = ${q.id} and user_id = ${bob.user.id}`.execute(db);
    expect(await read(bob)).toBe(3);
    expect(await read(bob)).toBe(3);
    const rows = await sql<{ user_id: number; today: boolean }>`
      select user_id, day = (now() at time zone 'UTC')::date as today from question_views where question_id = ${q.id} order by user_id`.execute(
      db,
    );
    expect(rows.rows).toEqual([alice, bob].map((u) => ({ user_id: u.user.id, today: true })).sort((a, b) => a.user_id - b.user_id));
    const listed = await api()
      .get(`${Q}/${q.id}/complete`)
      .set(...alice.auth);
    expect(listed.body.view_count).toBe(3);
  });

  test('delete and restore by the author; others are refused', async () => {
    const q = await published(alice);
    expect(
      (
        await api()
          .delete(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(403);
    expect(
      (
        await api()
          .delete(`${Q}/${q.id}`)
          .set(...alice.auth)
      ).status,
    ).toBe(204);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    const own = await api()
      .get(`${Q}/${q.id}`)
      .set(...alice.auth);
    expect(own.body.is_deleted).toBe(true);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/restore`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    const restored = await api()
      .put(`${Q}/${q.id}/restore`)
      .set(...alice.auth);
    expect(restored.status).toBe(200);
    expect(restored.text).toBe('');
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    const subjects = (await contentEvents(system)).filter((e) => e.data.question?.id === q.id).map((e) => e.subject);
    expect(subjects).toEqual([
      'content.question.created.v1',
      'content.question.published.v1',
      'content.question.deleted.v1',
      'content.question.restored.v1',
    ]);
  });

  test('a content administrator deletes and restores anyone’s question', async () => {
    const q = await published(alice);
    expect(
      (
        await api()
          .delete(`${Q}/${q.id}`)
          .set(...admin.auth)
      ).status,
    ).toBe(204);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/restore`)
          .set(...admin.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .delete(`${Q}/999999`)
          .set(...admin.auth)
      ).status,
    ).toBe(404);
  });

  test('flagging with and without a message', async () => {
    const q = await published(alice);
    const res = await api()
      .put(`${Q}/${q.id}/flag`)
      .set(...bob.auth)
      .send({ message: 'spam' });
    expect(res.status).toBe(200);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/flag`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/flag`)
          .set(...bob.auth)
          .send({ message: 5 })
      ).status,
    ).toBe(400);
    expect(
      (
        await api()
          .put(`${Q}/999999/flag`)
          .set(...bob.auth)
          .send({})
      ).status,
    ).toBe(404);
    const flags = (await contentEvents(system, 'content.question.flagged')).filter((e) => e.data.question.id === q.id);
    expect(flags.map((e) => e.data.flag.message)).toEqual(['spam', null]);
    expect(flags[0].data.flag.user_id).toBe(bob.user.id);
    expect(flags[0].data.question.author_id).toBe(alice.user.id);
  });

  test('follow and unfollow; followers travel with later events', async () => {
    const q = await published(alice);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/follow`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .put(`${Q}/${q.id}/follow`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    await api()
      .put(`${Q}/${q.id}`)
      .set(...alice.auth)
      .send({ description: '<p>more details</p>' });
    const updated = (await contentEvents(system, 'content.question.updated')).at(-1)!;
    expect(updated.data.followers).toEqual([bob.user.id]);
    expect(
      (
        await api()
          .delete(`${Q}/${q.id}/follow`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    const follows = (await contentEvents(system)).filter((e) => e.subject.includes('follow') && e.data.question_id === q.id);
    expect(follows.map((e) => e.subject)).toEqual(['content.question.followed.v1', 'content.question.unfollowed.v1']);
    expect(follows[0].data).toEqual({ question_id: q.id, user_id: bob.user.id, author_id: alice.user.id });
    expect(
      (
        await api()
          .put(`${Q}/999999/follow`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
  });

  test('experts: empty for a published question, 404 for a draft or a missing one', async () => {
    const q = await published(alice);
    const res = await api()
      .get(`${Q}/${q.id}/experts`)
      .set(...bob.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ total: 0, items: [] });
    const d = await draft(alice);
    expect(
      (
        await api()
          .get(`${Q}/${d.id}/experts`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await api()
          .get(`${Q}/999999/experts`)
          .set(...alice.auth)
      ).status,
    ).toBe(404);
  });
});

describe('knowledge spaces', () => {
  test('questions of a closed space are visible to members only', async () => {
    const admin_ = bearer(system.adminToken);
    const space = await api()
      .post('/api/v1/knowledge-spaces')
      .set(...admin_)
      .send({ name: 'Board', is_closed: true });
    expect(space.status).toBe(201);
    expect(space.body).toMatchObject({
      name: 'Board',
      is_closed: true,
      member_count: 0,
      automatic_new_user_assignment: false,
      description: null,
    });
    expect(
      (
        await api()
          .post('/api/v1/knowledge-spaces')
          .set(...bob.auth)
          .send({ name: 'X' })
      ).status,
    ).toBe(403);
    // Not a member yet: cannot post there.
    expect(
      (
        await api()
          .post(Q)
          .set(...alice.auth)
          .send({ knowledge_space: space.body.id })
      ).status,
    ).toBe(403);
    const members = await api()
      .put(`/api/v1/knowledge-spaces/${space.body.id}/members`)
      .set(...admin_)
      .send({ user_ids: [alice.user.id] });
    expect(members.status).toBe(200);
    expect(members.body.member_count).toBe(1);
    const q = await published(alice, { knowledge_space: space.body.id, title: 'A secret board question' });
    expect(q.knowledge_space_id).toBe(space.body.id);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(404);
    const list = await api()
      .get(`${Q}?knowledge_space=${space.body.id}`)
      .set(...bob.auth);
    expect(list.body.total).toBe(0);
    const own = await api()
      .get(`${Q}?knowledge_space=${space.body.id}`)
      .set(...alice.auth);
    expect(own.body.items.map((i: { id: number }) => i.id)).toEqual([q.id]);
    const renamed = await api()
      .put(`/api/v1/knowledge-spaces/${space.body.id}`)
      .set(...admin_)
      .send({ is_closed: false });
    expect(renamed.body.is_closed).toBe(false);
    expect(
      (
        await api()
          .get(`${Q}/${q.id}`)
          .set(...bob.auth)
      ).status,
    ).toBe(200);
    expect(
      (
        await api()
          .put('/api/v1/knowledge-spaces/999999')
          .set(...admin_)
          .send({ name: 'Y' })
      ).status,
    ).toBe(404);
    const all = await api()
      .get('/api/v1/knowledge-spaces')
      .set(...bob.auth);
    expect(all.body.total).toBeGreaterThanOrEqual(1);
    const events = await contentEvents(system, 'content.knowledge-space');
    expect(events.map((e) => e.subject)).toContain('content.knowledge-space.created.v1');
    expect(events.at(-1)!.data.knowledge_space.member_ids).toEqual([alice.user.id]);
  });

  test('new users join spaces with automatic_new_user_assignment', async () => {
    const admin_ = bearer(system.adminToken);
    const space = await api()
      .post('/api/v1/knowledge-spaces')
      .set(...admin_)
      .send({ name: 'Everyone', is_closed: true, automatic_new_user_assignment: true });
    const carol = await system.createUser({ firstname: 'Carol' });
    await usersProjectionCaughtUp(system);
    const all = await api()
      .get('/api/v1/knowledge-spaces')
      .set(...carol.auth);
    expect(all.body.items.find((s: { id: number }) => s.id === space.body.id).member_count).toBe(1);
    const q = await published(carol, { knowledge_space: space.body.id });
    expect(q.knowledge_space_id).toBe(space.body.id);
  });
});
