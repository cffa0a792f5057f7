import { API, contentEvents, publishedQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
let poser: Awaited<ReturnType<System['createUser']>>;
let author: Awaited<ReturnType<System['createUser']>>;
let other: Awaited<ReturnType<System['createUser']>>;
let admin: Awaited<ReturnType<System['createUser']>>;

beforeAll(async () => {
  system = await startSystem();
  poser = await system.createUser();
  author = await system.createUser();
  other = await system.createUser();
  admin = await system.createUser({}, ['user', 'content_admin']);
});
afterAll(() => system?.stop());

const monthsBetween = (from: string, to: string) => {
  const a = new Date(from);
  const b = new Date(to);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + (b.getUTCMonth() - a.getUTCMonth());
};

async function setValidation(enabled: boolean) {
  const res = await system.api
    .put(`${API}/settings`)
    .set(...bearer(system.adminToken))
    .send({ solution_validation_enabled: enabled });
  expect(res.status).toBe(200);
  await system.services.content.runtime.relay.flush();
  await system.services.users.runtime.relay.flush();
  await system.services.content.consumers.users.caughtUp();
}

describe('POST /solutions/:id/validate', () => {
  test('the solution poser or an admin sets validity_period and expires; others 403; missing 404; unknown values 400', async () => {
    const q = await publishedQuestion(system, poser.token);
    const id = await publishedSolution(system, author.token, q);

    const six = await system.api
      .post(`${API}/solutions/${id}/validate`)
      .set(...author.auth)
      .send({ validity: 'months_six' });
    expect(six.status).toBe(200);
    expect(six.body.validity_period).toBe('months_six');
    expect(monthsBetween(six.body.updated, six.body.expires)).toBe(6);

    for (const [validity, months] of [
      ['months_three', 3],
      ['year_one', 12],
      ['years_two', 24],
    ] as const) {
      const res = await system.api
        .post(`${API}/solutions/${id}/validate`)
        .set(...admin.auth)
        .send({ validity });
      expect(res.status).toBe(200);
      expect(monthsBetween(res.body.updated, res.body.expires)).toBe(months);
    }
    const unlimited = await system.api
      .post(`${API}/solutions/${id}/validate`)
      .set(...author.auth)
      .send({ validity: 'unlimited' });
    expect(unlimited.body).toMatchObject({ validity_period: 'unlimited', expires: null });

    const byPoser = await system.api
      .post(`${API}/solutions/${id}/validate`)
      .set(...poser.auth)
      .send({ validity: 'months_six' });
    expect(byPoser.status).toBe(403);
    expect(
      (
        await system.api
          .post(`${API}/solutions/999999/validate`)
          .set(...author.auth)
          .send({ validity: 'months_six' })
      ).status,
    ).toBe(404);
    for (const validity of ['months_seven', '', 6, null]) {
      const res = await system.api
        .post(`${API}/solutions/${id}/validate`)
        .set(...author.auth)
        .send({ validity });
      expect(res.status).toBe(400);
    }
    expect((await system.api.get(`${API}/solutions/${id}`).set(...author.auth)).body.validity_period).toBe('unlimited');

    const events = (await contentEvents(system, 'content.solution.validated.v1')).filter((e) => e.data.solution.id === id);
    expect(events).toHaveLength(5);
  });

  test('an update restarts the validity period', async () => {
    const q = await publishedQuestion(system, poser.token);
    const id = await publishedSolution(system, author.token, q);
    const validated = await system.api
      .post(`${API}/solutions/${id}/validate`)
      .set(...author.auth)
      .send({ validity: 'months_three' });
    await system.services.content.runtime.db
      .updateTable('solutions')
      .set({ expires: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    const updated = await system.api
      .put(`${API}/solutions/${id}`)
      .set(...author.auth)
      .send({ description: '<p>Still true, checked again</p>' });
    expect(updated.status).toBe(200);
    expect(updated.body.validity_period).toBe('months_three');
    expect(Date.parse(updated.body.expires)).toBeGreaterThanOrEqual(Date.parse(validated.body.expires));
  });
});

describe('expiry', () => {
  test('expired solutions are announced once, only while solution_validation_enabled is on, by one instance at a time', async () => {
    const q = await publishedQuestion(system, poser.token);
    const ids = [await publishedSolution(system, author.token, q), await publishedSolution(system, other.token, q)];
    for (const id of ids)
      await system.api
        .post(`${API}/solutions/${id}/validate`)
        .set(...admin.auth)
        .send({ validity: 'months_three' });
    await system.services.content.runtime.db
      .updateTable('solutions')
      .set({ expires: new Date(Date.now() - 60_000) })
      .where('id', 'in', ids)
      .execute();

    await setValidation(false);
    expect(await system.services.content.solutionExpiry.runOnce()).toBe(0);

    await setValidation(true);
    // Two rounds at once (as two instances would): the advisory lock lets one work.
    const rounds = await Promise.all([system.services.content.solutionExpiry.runOnce(), system.services.content.solutionExpiry.runOnce()]);
    expect(rounds.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await system.services.content.solutionExpiry.runOnce()).toBe(0);

    const events = (await contentEvents(system, 'content.solution.expired.v1')).filter((e) => ids.includes(e.data.solution.id));
    expect(events).toHaveLength(2);
    expect(events[0].actor_id).toBeNull();
    expect(events[0].data.question.author_id).toBe(poser.user.id);

    // A request for validation names the expired solutions and their authors.
    expect((await system.api.get(`${API}/questions/${q}/request-validation`).set(...other.auth)).body).toEqual({ last_requested: null });
    const requested = await system.api.put(`${API}/questions/${q}/request-validation`).set(...other.auth);
    expect(requested.status).toBe(200);
    expect(requested.body.last_requested).toMatch(/Z$/);
    const read = await system.api.get(`${API}/questions/${q}/request-validation`).set(...poser.auth);
    expect(read.body).toEqual(requested.body);
    const request = (await contentEvents(system, 'content.question.validation-requested.v1')).find((e) => e.data.question.id === q);
    expect(request?.data.expired_solutions.map((s: { author_id: number }) => s.author_id).sort()).toEqual(
      [author.user.id, other.user.id].sort(),
    );
    expect(request?.data.requested_by).toBe(other.user.id);

    // A new validation clears the expiry; the job leaves it alone.
    await system.api
      .post(`${API}/solutions/${ids[0]}/validate`)
      .set(...author.auth)
      .send({ validity: 'year_one' });
    expect(await system.services.content.solutionExpiry.runOnce()).toBe(0);
    await setValidation(false);
  });

  test('request-validation: 404 for a missing question', async () => {
    expect((await system.api.get(`${API}/questions/999999/request-validation`).set(...other.auth)).status).toBe(404);
    expect((await system.api.put(`${API}/questions/999999/request-validation`).set(...other.auth)).status).toBe(404);
  });
});
