import { bearer, type System, startSystem } from './system.ts';

let system: System;
let admin: [string, string];
beforeAll(async () => {
  system = await startSystem();
  admin = bearer(system.adminToken);
});
afterAll(() => system?.stop());

const create = (body: Record<string, unknown>) =>
  system.api
    .post('/api/v1/users')
    .set(...admin)
    .send({ language: 'de', ...body });
const search = (query: string, extra = '') => system.api.get(`/api/v1/users?query=${encodeURIComponent(query)}${extra}`).set(...admin);
const names = (res: { body: { items: Array<{ firstname: string; lastname: string }> } }) =>
  res.body.items.map((u) => `${u.firstname} ${u.lastname}`);

describe('create, read, update, delete', () => {
  test('creates a user with every field and the default roles', async () => {
    const res = await create({
      email: 'Ada.Lovelace@Example.com',
      firstname: 'Ada',
      lastname: 'Lovelace',
      gender: 'female',
      location: 'London',
      about: 'Analyst',
      company: 'Engines Ltd',
      department: 'R&D',
      position: 'Lead',
      country: 'gb',
      customfields: { team: 'Difference Engine' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      email: 'Ada.Lovelace@Example.com',
      firstname: 'Ada',
      lastname: 'Lovelace',
      language: 'de',
      country: 'GB',
      customfields: { team: 'Difference Engine' },
      is_deleted: false,
      is_hidden: false,
      is_system: false,
      roles: ['user', 'manager'],
      score_level: null,
      last_seen: null,
    });
    expect(res.body.first_seen).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body.event_tracking_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).not.toHaveProperty('password');
    expect(res.body).not.toHaveProperty('password_hash');
    const read = await system.api.get(`/api/v1/users/${res.body.id}`).set(...admin);
    expect(read.body).toEqual(res.body);
  });

  test('a second account with the same email (any case) is a Conflict and creates nothing', async () => {
    await create({ email: 'twice@example.com', firstname: 'A', lastname: 'B' });
    const before = (await system.api.get('/api/v1/users?limit=0').set(...admin)).body.total;
    const res = await create({ email: 'TWICE@example.com', firstname: 'C', lastname: 'D' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('Conflict');
    expect((await system.api.get('/api/v1/users?limit=0').set(...admin)).body.total).toBe(before);
  });

  test('limits: email and names at most 191 characters', async () => {
    const local = 'a'.repeat(191 - '@example.com'.length);
    expect((await create({ email: `${local}@example.com`, firstname: 'F'.repeat(191), lastname: 'L' })).status).toBe(201);
    const tooLong = await create({ email: `${local}a@example.com`, firstname: 'F', lastname: 'L' });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors[0].path).toBe('email');
    expect((await create({ email: 'n@example.com', firstname: 'F'.repeat(192), lastname: 'L' })).status).toBe(400);
  });

  test('a user changes their own profile; others may not; roles only by user_admin', async () => {
    const a = await system.createUser();
    const b = await system.createUser();
    const own = await system.api
      .put(`/api/v1/users/${a.user.id}`)
      .set(...a.auth)
      .send({ position: 'Brewer', customfields: { site: 'Munich' } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ position: 'Brewer', customfields: { site: 'Munich' } });
    expect(
      (
        await system.api
          .put(`/api/v1/users/${a.user.id}`)
          .set(...b.auth)
          .send({ position: 'Hacker' })
      ).status,
    ).toBe(403);
    expect(
      (
        await system.api
          .put(`/api/v1/users/${a.user.id}`)
          .set(...a.auth)
          .send({ roles: ['super_admin'] })
      ).status,
    ).toBe(403);
    const unchanged = await system.api.get(`/api/v1/users/${a.user.id}`).set(...admin);
    expect(unchanged.body.position).toBe('Brewer');
    expect(unchanged.body.roles).not.toContain('super_admin');
    const promoted = await system.api
      .put(`/api/v1/users/${a.user.id}`)
      .set(...admin)
      .send({ roles: ['user', 'api_user', 'content_admin'] });
    expect(promoted.body.roles).toEqual(['user', 'api_user', 'content_admin']);
  });

  test('a password change takes effect and ends the old sessions', async () => {
    const a = await system.createUser();
    expect(
      (
        await system.api
          .put(`/api/v1/users/${a.user.id}`)
          .set(...a.auth)
          .send({ password: 'new-password-99', current_password: 'password-1234' })
      ).status,
    ).toBe(200);
    expect((await system.api.get('/api/v1/users/me').set(...a.auth)).status).toBe(401);
    await system.login(a.user.email, 'new-password-99');
  });

  test('changing their own password or email needs the current password; a user_admin changing others needs none', async () => {
    const a = await system.createUser();
    const change = (body: Record<string, unknown>, auth = a.auth) =>
      system.api
        .put(`/api/v1/users/${a.user.id}`)
        .set(...auth)
        .send(body);
    for (const body of [{ password: 'taken-over-99' }, { email: 'thief@example.com' }]) {
      const missing = await change(body);
      expect([missing.status, missing.body.code, missing.body.errors?.[0]?.path]).toEqual([400, 'ValidationError', 'current_password']);
      const wrong = await change({ ...body, current_password: 'a-guess-1234' });
      expect([wrong.status, wrong.body.code]).toEqual([403, 'Forbidden']);
    }
    const unchanged = await system.api.get(`/api/v1/users/${a.user.id}`).set(...admin);
    expect(unchanged.body.email).toBe(a.user.email);
    expect((await system.api.get('/api/v1/users/me').set(...a.auth)).status).toBe(200);
    await system.login(a.user.email, 'password-1234');
    // Sending the email unchanged along with the profile is no change of email.
    expect((await change({ email: a.user.email.toUpperCase(), about: 'Brewer' })).status).toBe(200);

    const moved = await change({ email: 'moved@example.com', current_password: 'password-1234' });
    expect([moved.status, moved.body.email]).toEqual([200, 'moved@example.com']);
    expect((await change({ password: 'by-the-admin-1', email: 'by.admin@example.com' }, admin)).status).toBe(200);
    await system.login('by.admin@example.com', 'by-the-admin-1');
  });

  test('delete is soft: the user stays readable as deleted and leaves the list', async () => {
    const a = await system.createUser({ lastname: 'Vanishing' });
    expect((await system.api.delete(`/api/v1/users/${a.user.id}`).set(...admin)).status).toBe(204);
    expect((await system.api.delete(`/api/v1/users/${a.user.id}`).set(...admin)).status).toBe(404);
    expect((await system.api.get(`/api/v1/users/${a.user.id}`).set(...admin)).body.is_deleted).toBe(true);
    expect((await search('Vanishing')).body.total).toBe(0);
    expect((await search('Vanishing', '&include=deleted')).body.total).toBe(1);
    const plain = await system.createUser();
    expect((await system.api.get('/api/v1/users?include=deleted').set(...plain.auth)).status).toBe(403);
    expect(
      (
        await system.api
          .put(`/api/v1/users/${a.user.id}`)
          .set(...admin)
          .send({ about: 'x' })
      ).status,
    ).toBe(404);
  });

  test('users read at the same moment each get their own (read together in one query)', async () => {
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create({ email: `together${i}@example.com`, firstname: `Together${i}`, lastname: 'Reader' })),
    );
    const gone = made[0]!.body.id as number;
    expect((await system.api.delete(`/api/v1/users/${gone}`).set(...admin)).status).toBe(204);
    const ids = [...made.map((r) => r.body.id as number), 999_999, made[3]!.body.id as number];
    const read = await Promise.all(ids.map((id) => system.api.get(`/api/v1/users/${id}`).set(...admin)));
    expect(read.map((r) => r.status)).toEqual([...made.map(() => 200), 404, 200]);
    read.forEach((r, i) => {
      if (r.status === 200)
        expect(r.body).toMatchObject({ id: ids[i], email: `together${made.findIndex((m) => m.body.id === ids[i])}@example.com` });
    });
    expect(read[0]!.body.is_deleted).toBe(true);
    expect(read[1]!.body.is_deleted).toBe(false);
  });

  test('users by id in one request: as GET /users/{id} shows each, in the order asked, unknown ids left out, 100 at most', async () => {
    const [a, b] = [
      await system.createUser({ firstname: 'Batch', lastname: 'One' }),
      await system.createUser({ firstname: 'Batch', lastname: 'Two' }),
    ];
    const gone = await system.createUser({ firstname: 'Batch', lastname: 'Gone' });
    expect((await system.api.delete(`/api/v1/users/${gone.user.id}`).set(...admin)).status).toBe(204);
    const viewer = await system.createUser();
    const res = await system.api
      .get(`/api/v1/users/by-id?ids=${b.user.id},999999,${a.user.id},${gone.user.id},${b.user.id}`)
      .set(...viewer.auth);
    expect(res.status).toBe(200);
    const single = await Promise.all([b, a, gone].map((u) => system.api.get(`/api/v1/users/${u.user.id}`).set(...viewer.auth)));
    expect(res.body.items).toEqual([...single.map((r) => r.body), single[0]!.body]);
    // A page names at most 100 people at a time; an id that is no id is refused.
    const many = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    expect((await system.api.get(`/api/v1/users/by-id?ids=${many}`).set(...viewer.auth)).status).toBe(400);
    const wrong = await system.api.get('/api/v1/users/by-id?ids=1,abc').set(...viewer.auth);
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ValidationError');
    expect((await system.api.get(`/api/v1/users/by-id?ids=${a.user.id}`)).status).toBe(401);
  });

  test('hidden and system users only with include', async () => {
    await create({ email: 'bot@example.com', firstname: 'Build', lastname: 'Robot', is_system: true });
    await create({ email: 'ghost@example.com', firstname: 'Quiet', lastname: 'Robot', is_hidden: true });
    expect(names(await search('Robot'))).toEqual([]);
    expect(names(await search('Robot', '&include=system,hidden')).sort()).toEqual(['Build Robot', 'Quiet Robot']);
    expect((await system.api.get('/api/v1/users?include=everything').set(...admin)).status).toBe(400);
  });
});

describe('search', () => {
  beforeAll(async () => {
    for (const [firstname, lastname, email] of [
      ['Jürgen', 'Müller', 'jm@brewery.example'],
      ['Hans', 'Mueller', 'hans@brewery.example'],
      ['Anna', 'Muller', 'anna@brewery.example'],
      ['Mia', 'Mullins', 'mia@brewery.example'],
      ['Peter', 'Schäfer', 'p.schaefer@brewery.example'],
      ['Maria', 'Kovač', 'maria@brewery.example'],
      ['Tom', 'Mull', 'tom@brewery.example'],
    ])
      await create({ email, firstname, lastname, customfields: { team: lastname === 'Mull' ? 'Fermentation' : 'Sales' } });
  });

  test('Müller, Muller and Mueller find each other', async () => {
    for (const q of ['Müller', 'Muller', 'Mueller', 'MÜLLER', 'mueller']) {
      expect({ q, found: names(await search(q)).sort() }).toEqual({ q, found: ['Anna Muller', 'Hans Mueller', 'Jürgen Müller'] });
    }
  });

  test('prefixes match (incremental search)', async () => {
    expect(names(await search('Mul')).sort()).toEqual(['Anna Muller', 'Hans Mueller', 'Jürgen Müller', 'Mia Mullins', 'Tom Mull']);
    expect(names(await search('Schae'))).toEqual(['Peter Schäfer']);
    expect(names(await search('Schä'))).toEqual(['Peter Schäfer']);
    expect(names(await search('Kova'))).toEqual(['Maria Kovač']);
  });

  test('exact matches come first unless sort is given', async () => {
    const exactFirst = names(await search('Mull'));
    expect(exactFirst[0]).toBe('Tom Mull');
    const sorted = names(await search('Mull', '&sort=firstname.asc'));
    expect(sorted).toEqual(['Anna Muller', 'Hans Mueller', 'Jürgen Müller', 'Mia Mullins', 'Tom Mull']);
  });

  test('several words must all match; email and custom fields are searched', async () => {
    expect(names(await search('hans mue'))).toEqual(['Hans Mueller']);
    expect(names(await search('p.schaefer@brewery'))).toEqual(['Peter Schäfer']);
    expect(names(await search('Fermentation'))).toEqual(['Tom Mull']);
  });

  test('paging, total and the self link', async () => {
    const page = await search('brewery', '&limit=2&offset=1&sort=lastname.desc,firstname');
    expect(page.body.total).toBe(7);
    expect(page.body.items).toHaveLength(2);
    expect(page.body._links.self.href).toBe('/api/v1/users?query=brewery&limit=2&offset=1&sort=lastname.desc,firstname');
    const all = await search('brewery', '&limit=100&sort=lastname.desc,firstname');
    expect(names(page)).toEqual(names(all).slice(1, 3));
    expect(names(all)[0]).toBe('Peter Schäfer');
    expect(names(all).at(-1)).toBe('Maria Kovač');
  });

  test('role filter, for user admins only', async () => {
    const res = await system.api.get('/api/v1/users?role=super_admin').set(...admin);
    expect(res.body.items.map((u: { email: string }) => u.email)).toEqual(['admin@example.com']);
    const userAdmin = await system.createUser({}, ['user_admin']);
    const byUserAdmin = await system.api.get('/api/v1/users?role=super_admin').set(...userAdmin.auth);
    expect(byUserAdmin.body.items.map((u: { email: string }) => u.email)).toEqual(['admin@example.com']);
    const plain = await system.createUser();
    const refused = await system.api.get('/api/v1/users?role=super_admin').set(...plain.auth);
    expect([refused.status, refused.body.code, refused.body.message]).toEqual([
      403,
      'Forbidden',
      'the role filter needs the user_admin role',
    ]);
    expect(refused.body).not.toHaveProperty('items');
  });

  test('hostile and odd queries are results or errors, never 500', async () => {
    for (const q of ["'; drop table users; --", '%', '_', '\\', '.*', '😀', 'a'.repeat(1000), '   ']) {
      const res = await search(q);
      expect({ q: q.slice(0, 20), ok: [200, 400].includes(res.status) }).toEqual({ q: q.slice(0, 20), ok: true });
    }
    expect((await search('%')).body.total ?? 0).toBe(0);
    expect((await search('a'.repeat(1001))).status).toBe(400);
    expect((await system.api.get('/api/v1/users?sort=password.asc').set(...admin)).status).toBe(400);
    expect((await system.api.get('/api/v1/users?limit=-1').set(...admin)).status).toBe(400);
  });
});

describe('email disguise', () => {
  test('disguised for others when anonymize_users_email is on; clear for self and for user_admin on request', async () => {
    const a = await system.createUser({ email: 'clear.view@example.com', firstname: 'Clara', lastname: 'View' });
    const b = await system.createUser();
    expect(
      (
        await system.api
          .put('/api/v1/settings')
          .set(...admin)
          .send({ anonymize_users_email: true })
      ).status,
    ).toBe(200);
    try {
      const seen = await system.api.get(`/api/v1/users/${a.user.id}`).set(...b.auth);
      expect(seen.body.email).toBe('c***@example.com');
      expect(seen.body).not.toHaveProperty('roles');
      const batch = await system.api.get(`/api/v1/users/by-id?ids=${a.user.id}`).set(...b.auth);
      expect(batch.body.items).toEqual([seen.body]);
      expect((await system.api.get('/api/v1/users/me').set(...a.auth)).body.email).toBe('clear.view@example.com');
      const listed = await system.api.get('/api/v1/users?query=Clara%20View').set(...admin);
      expect(listed.body.items[0].email).toBe('c***@example.com');
      const deanonymized = await system.api.get('/api/v1/users?query=clear.view&deanonymize_users_email=true').set(...admin);
      expect(deanonymized.body.items[0].email).toBe('clear.view@example.com');
      expect((await system.api.get('/api/v1/users?deanonymize_users_email=true').set(...b.auth)).status).toBe(403);
    } finally {
      await system.api
        .put('/api/v1/settings')
        .set(...admin)
        .send({ anonymize_users_email: false });
    }
    expect((await system.api.get(`/api/v1/users/${a.user.id}`).set(...b.auth)).body.email).toBe('clear.view@example.com');
  });

  test('while disguised, an email cannot be searched for: no prefix or whole address confirms it', async () => {
    const a = await system.createUser({ email: 'b.secret@corp.example', firstname: 'Bettina', lastname: 'Hidden' });
    const b = await system.createUser();
    const find = (query: string, auth: [string, string], extra = '') =>
      system.api.get(`/api/v1/users?query=${encodeURIComponent(query)}${extra}`).set(...auth);
    const ids = (res: { body: { items: Array<{ id: number }> } }) => res.body.items.map((u) => u.id);
    const probes = ['b.', 'b.s', 'b.secret@corp.example', 'secret', 'corp.example', 'corp'];
    expect(ids(await find('b.secret', b.auth))).toEqual([a.user.id]);
    await system.api
      .put('/api/v1/settings')
      .set(...admin)
      .send({ anonymize_users_email: true });
    try {
      for (const caller of [b.auth, a.auth, admin]) {
        for (const q of probes) expect({ q, found: ids(await find(q, caller)) }).toEqual({ q, found: [] });
        // The name still finds the user, with the email disguised.
        const byName = await find('Bettina Hidden', caller);
        expect(ids(byName)).toEqual([a.user.id]);
      }
      expect((await find('Bettina', b.auth)).body.items[0].email).toBe('b***@corp.example');
      // Who sees the real addresses may search them.
      expect(ids(await find('b.secret@corp.example', admin, '&deanonymize_users_email=true'))).toEqual([a.user.id]);
      expect(ids(await find('secre', admin, '&deanonymize_users_email=true'))).toEqual([a.user.id]);
    } finally {
      await system.api
        .put('/api/v1/settings')
        .set(...admin)
        .send({ anonymize_users_email: false });
    }
  });
});
