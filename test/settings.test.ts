import { NotificationEmailDefaults } from '@kn/contracts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

const outboxSubjects = async () => {
  // Events leave the outbox once published; read what reached the stream instead.
  const { bus } = system.services.users.runtime;
  await system.services.users.runtime.relay.flush();
  const info = await bus.jsm.streams.info(bus.streamName('users'));
  const subjects: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(bus.streamName('users'), { seq });
    if (msg) subjects.push(bus.unprefix(msg.subject));
  }
  return subjects;
};

describe('language settings', () => {
  test('defaults follow the network', async () => {
    const { auth } = await system.createUser();
    const res = await system.api.get('/api/v1/users/me/settings').set(...auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content_languages: ['en', 'de', 'fr', 'es', 'it', 'pt'],
      has_all_languages: true,
      interface_language: 'en',
      translation_language: 'en',
    });
  });

  test('choosing languages turns has_all_languages off; translation follows the interface language', async () => {
    const { auth } = await system.createUser();
    const res = await system.api
      .put('/api/v1/users/me/settings')
      .set(...auth)
      .send({ content_languages: ['de', 'en'], interface_language: 'de' });
    expect(res.body).toEqual({
      content_languages: ['de', 'en'],
      has_all_languages: false,
      interface_language: 'de',
      translation_language: 'de',
    });
    expect((await system.api.get('/api/v1/users/me/settings').set(...auth)).body).toEqual(res.body);
    const unknown = await system.api
      .put('/api/v1/users/me/settings')
      .set(...auth)
      .send({ content_languages: ['xx'] });
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 409, code: 'Conflict' });
    expect((await system.api.get('/api/v1/users/me/settings').set(...auth)).body).toEqual(res.body);
  });
});

describe('email settings', () => {
  test('every setting with its default', async () => {
    const { auth } = await system.createUser();
    const res = await system.api.get('/api/v1/users/me/settings/communication/email').set(...auth);
    expect(res.body).toEqual({
      email_enabled: true,
      hint_email_enabled: true,
      announcement_email_enabled: true,
      digest_email_enabled: true,
      reminder_email_enabled: false,
      ...NotificationEmailDefaults,
    });
    expect(res.body.new_comment_to_solution).toBe('off');
    expect(res.body.question_edited).toBe('off');
    expect(Object.keys(NotificationEmailDefaults)).toHaveLength(22);
  });

  test('deprecated values map: summarized and never to off, immediately to on', async () => {
    const { auth } = await system.createUser();
    const res = await system.api
      .put('/api/v1/users/me/settings/communication/email')
      .set(...auth)
      .send({ new_solution: 'summarized', share_question: 'never', question_edited: 'immediately', digest_email_enabled: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ new_solution: 'off', share_question: 'off', question_edited: 'on', digest_email_enabled: false });
    expect(res.body.solution_rated).toBe('on');
  });

  test('invalid values are refused and change nothing', async () => {
    const { auth } = await system.createUser();
    for (const body of [{ new_solution: 'sometimes' }, { email_enabled: 'yes' }, { new_solution: true }]) {
      const res = await system.api
        .put('/api/v1/users/me/settings/communication/email')
        .set(...auth)
        .send(body);
      expect(res.status).toBe(400);
    }
    const res = await system.api.get('/api/v1/users/me/settings/communication/email').set(...auth);
    expect(res.body.new_solution).toBe('on');
    expect(res.body.email_enabled).toBe(true);
  });

  test('DELETE restores the defaults', async () => {
    const { auth } = await system.createUser();
    await system.api
      .put('/api/v1/users/me/settings/communication/email')
      .set(...auth)
      .send({ new_solution: 'off', email_enabled: false });
    expect((await system.api.delete('/api/v1/users/me/settings/communication/email').set(...auth)).status).toBe(204);
    const res = await system.api.get('/api/v1/users/me/settings/communication/email').set(...auth);
    expect(res.body).toMatchObject({ new_solution: 'on', email_enabled: true });
  });
});

describe('network settings', () => {
  const admin = () => bearer(system.adminToken);

  test('defaults, update, webhook secret write-only', async () => {
    const before = await system.api.get('/api/v1/settings').set(...admin());
    expect(before.body).toEqual({
      network_name: 'Knowledge Network',
      default_language: 'en',
      content_languages: ['en', 'de', 'fr', 'es', 'it', 'pt'],
      anonymize_users_email: false,
      solution_validation_enabled: false,
      email_delivery_enabled: true,
      user_creation_default_roles: null,
      webhook_enabled: false,
      webhook_url: null,
      webhook_secret_set: false,
      min_experts: 3,
      routings_per_expert_per_week: 10,
      rate_limit_per_minute: 1200,
      login_attempts_per_minute: 10,
      web_sessions_per_user: 10,
      web_session_idle_minutes: 10080,
      password_sign_in: 'everyone',
      idp_group_mappings: [],
    });
    const res = await system.api
      .put('/api/v1/settings')
      .set(...admin())
      .send({
        network_name: 'Brewers',
        webhook_url: 'http://127.0.0.1:9/kn',
        webhook_secret: 'a-very-secret-secret',
        min_experts: 5,
        routings_per_expert_per_week: 0,
      });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      network_name: 'Brewers',
      webhook_url: 'http://127.0.0.1:9/kn',
      webhook_secret_set: true,
      min_experts: 5,
      routings_per_expert_per_week: 0,
    });
    expect(res.body).not.toHaveProperty('webhook_secret');
    const bad = await system.api
      .put('/api/v1/settings')
      .set(...admin())
      .send({ webhook_url: 'ftp://x', min_experts: -1 });
    expect(bad.status).toBe(400);
    for (const routings_per_expert_per_week of [-1, 1.5, '7'])
      expect(
        (
          await system.api
            .put('/api/v1/settings')
            .set(...admin())
            .send({ routings_per_expert_per_week })
        ).status,
      ).toBe(400);
    expect((await system.api.get('/api/v1/settings').set(...admin())).body.min_experts).toBe(5);
  });

  test('user_creation_default_roles applies to new users', async () => {
    await system.api
      .put('/api/v1/settings')
      .set(...admin())
      .send({ user_creation_default_roles: ['user', 'api_user'] });
    try {
      const res = await system.api
        .post('/api/v1/users')
        .set(...admin())
        .send({ email: 'defaults@example.com', firstname: 'D', lastname: 'R', language: 'en' });
      expect(res.body.roles).toEqual(['user', 'api_user']);
    } finally {
      await system.api
        .put('/api/v1/settings')
        .set(...admin())
        .send({ user_creation_default_roles: null });
    }
  });

  test('only settings_admin', async () => {
    const { auth } = await system.createUser({}, ['user_admin']);
    expect((await system.api.get('/api/v1/settings').set(...auth)).status).toBe(403);
    expect(
      (
        await system.api
          .put('/api/v1/settings')
          .set(...auth)
          .send({ network_name: 'Mine' })
      ).status,
    ).toBe(403);
  });
});

test('users and settings changes are published as events', async () => {
  const { user, auth } = await system.createUser();
  await system.api
    .put('/api/v1/users/me/settings/communication/email')
    .set(...auth)
    .send({ new_solution: 'off' });
  await system.api
    .put(`/api/v1/users/${user.id}`)
    .set(...auth)
    .send({ about: 'changed' });
  await system.api.delete(`/api/v1/users/${user.id}`).set(...bearer(system.adminToken));
  const subjects = await outboxSubjects();
  for (const s of [
    'users.user.created.v1',
    'users.settings.updated.v1',
    'users.user.updated.v1',
    'users.user.deleted.v1',
    'users.network-settings.updated.v1',
  ])
    expect(subjects).toContain(s);
});
