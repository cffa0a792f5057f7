import { readFileSync } from 'node:fs';
import path from 'node:path';
import { events, type Operation, operations } from '@kn/contracts';
import { bearer, type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

const expectError = (res: { status: number; body: Record<string, unknown> }, status: number, code: string) => {
  expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
  expect(typeof res.body.message).toBe('string');
};

describe('errors have the contract shape', () => {
  test('malformed JSON is InvalidJson', async () => {
    const res = await system.api
      .post('/api/v1/users')
      .set(...bearer(system.adminToken))
      .set('content-type', 'application/json')
      .send('{"email":');
    expectError(res, 400, 'InvalidJson');
  });

  test('a body that is not JSON is UnsupportedMediaType', async () => {
    const res = await system.api
      .post('/api/v1/users')
      .set(...bearer(system.adminToken))
      .set('content-type', 'text/plain')
      .send('email=x');
    expectError(res, 415, 'UnsupportedMediaType');
  });

  test('a body over the limit is 413', async () => {
    const res = await system.api
      .post('/api/v1/users')
      .set(...bearer(system.adminToken))
      .send({ email: 'big@example.com', about: 'x'.repeat(10 * 1024 * 1024) });
    expectError(res, 413, 'PayloadTooLarge');
  });

  test('validation failures list each field', async () => {
    const res = await system.api
      .post('/api/v1/users')
      .set(...bearer(system.adminToken))
      .send({ email: 'not-an-email', firstname: '', lastname: 'x'.repeat(192), language: 'english' });
    expectError(res, 400, 'ValidationError');
    const paths = (res.body.errors as Array<{ path: string }>).map((e) => e.path).sort();
    expect(paths).toEqual(['email', 'firstname', 'language', 'lastname']);
  });

  test('a wrong type in the path is a ValidationError, an unknown id NotFound', async () => {
    expectError(await system.api.get('/api/v1/users/abc').set(...bearer(system.adminToken)), 400, 'ValidationError');
    expectError(await system.api.get('/api/v1/users/-1').set(...bearer(system.adminToken)), 400, 'ValidationError');
    expectError(await system.api.get('/api/v1/users/99999999999').set(...bearer(system.adminToken)), 400, 'ValidationError');
    expectError(await system.api.get('/api/v1/users/424242').set(...bearer(system.adminToken)), 404, 'NotFound');
  });

  test('a request line and headers over 16 KiB are 431 HeaderFieldsTooLarge in the contract shape', async () => {
    const res = await system.api.get(`/api/v1/search/questions-similar?query=${'%C2%82'.repeat(4000)}`).set(...bearer(system.adminToken));
    expectError(res, 431, 'HeaderFieldsTooLarge');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('an unknown endpoint is NotFound', async () => {
    expectError(await system.api.get('/api/v1/no-such-thing').set(...bearer(system.adminToken)), 404, 'NotFound');
    expectError(await system.api.get('/elsewhere'), 404, 'NotFound');
  });

  test('a method a path does not have is 405 MethodNotAllowed with Allow, before authentication; OPTIONS lists them', async () => {
    for (const method of ['delete', 'patch', 'post'] as const) {
      const res = await system.api[method]('/api/v1/settings');
      expectError(res, 405, 'MethodNotAllowed');
      expect(res.headers.allow).toBe('GET, PUT, HEAD, OPTIONS');
    }
    const trace = await system.api.trace('/api/v1/questions/1/publish').set(...bearer(system.adminToken));
    expectError(trace, 405, 'MethodNotAllowed');
    expect(trace.headers.allow).toBe('PUT, OPTIONS');
    // /users/me is its own path, not /users/{id} with the id "me".
    const me = await system.api.delete('/api/v1/users/me').set(...bearer(system.adminToken));
    expectError(me, 405, 'MethodNotAllowed');
    expect(me.headers.allow).toBe('GET, HEAD, OPTIONS');
    const options = await system.api.options('/api/v1/users/42');
    expect({ status: options.status, allow: options.headers.allow }).toEqual({ status: 204, allow: 'GET, PUT, DELETE, HEAD, OPTIONS' });
  });

  test('JSON null and arrays where an object belongs are refused', async () => {
    const res = await system.api
      .put('/api/v1/users/me/settings')
      .set(...bearer(system.adminToken))
      .set('content-type', 'application/json')
      .send('[1,2]');
    expectError(res, 400, 'ValidationError');
  });
});

describe('request ids', () => {
  test('every response carries X-Request-Id, a sane incoming one is kept', async () => {
    const generated = await system.api.get('/api/v1/users/me');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await system.api.get('/healthz').set('x-request-id', 'trace-me-42');
    expect(kept.headers['x-request-id']).toBe('trace-me-42');
    const replaced = await system.api.get('/healthz').set('x-request-id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
  });
});

describe('health', () => {
  test('healthz and readyz answer without a token', async () => {
    expect((await system.api.get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await system.api.get('/api/v1/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.services.users).toBe(true);
  });
});

describe('OpenAPI', () => {
  test('documents every public operation, generated from the schemas', async () => {
    const res = await system.api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const [id, op] of Object.entries(operations) as Array<[string, Operation]>) {
      if (!op.http) continue;
      const path = op.http.path.replace(/:(\w+)/g, '{$1}');
      expect({ id, documented: res.body.paths[path]?.[op.http.method.toLowerCase()]?.operationId }).toEqual({ id, documented: id });
    }
    expect(res.body.components.schemas.User.properties.email).toEqual({ type: 'string' });
    expect(res.body.paths['/users'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['query', 'limit', 'offset', 'sort', 'role', 'include', 'deanonymize_users_email']),
    );
  });

  test('docs/openapi.json is the document the gateway serves (regenerate: pnpm contracts)', async () => {
    const committed = JSON.parse(readFileSync(path.join(process.cwd(), 'docs/openapi.json'), 'utf8'));
    expect(committed).toEqual((await system.api.get('/api/v1/openapi.json')).body);
  });

  test('the docs page works at /docs and /docs/: every link it makes is absolute and answers, a favicon included', async () => {
    for (const address of ['/api/v1/docs', '/api/v1/docs/']) {
      const page = await system.api.get(address);
      expect(page.status).toBe(200);
      const links = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
      // The page's own script (no inline one: the page's Content-Security-Policy) names the document.
      const script = await system.api.get('/api/v1/docs/docs.js').buffer(true);
      links.push(...[...String(script.text ?? script.body).matchAll(/url: "([^"]+)"/g)].map((m) => m[1]!));
      expect(links).toEqual(
        expect.arrayContaining([
          '/api/v1/openapi.json',
          '/api/v1/docs/favicon.svg',
          '/api/v1/docs/assets/swagger-ui.css',
          '/api/v1/docs/assets/swagger-ui-bundle.js',
          '/api/v1/docs/docs.js',
        ]),
      );
      for (const link of links) {
        expect(link).toMatch(/^\/api\/v1\//);
        expect({ link, status: (await system.api.get(link)).status }).toEqual({ link, status: 200 });
      }
    }
    const icon = await system.api.get('/api/v1/docs/favicon.svg');
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
  });

  test('every operation declares every status it can answer, and the headers of the contract', async () => {
    const doc = (await system.api.get('/api/v1/openapi.json')).body;
    const publish = doc.paths['/questions/{id}/publish'].put;
    expect(Object.keys(publish.responses)).toEqual(['200', '400', '401', '403', '404', '409', '422', '429', '431', '500', '503']);
    const create = doc.paths['/questions'].post;
    expect(create.parameters.map((p: { $ref?: string; name?: string }) => p.$ref ?? p.name)).toEqual(
      expect.arrayContaining([
        '#/components/parameters/IdempotencyKey',
        '#/components/parameters/OnBehalfOfUserId',
        '#/components/parameters/OnBehalfOfEmail',
        '#/components/parameters/Traceparent',
      ]),
    );
    expect(Object.keys(create.responses['201'].headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'ETag', 'Idempotent-Replayed']),
    );
    expect(Object.keys(create.responses['429'].headers)).toContain('Retry-After');
    expect(Object.keys(doc.paths['/auth/login'].post.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '429',
      '431',
      '500',
      '503',
    ]);
    // Timestamps are date-times, ids integers; the XSD is XML.
    expect(doc.components.schemas.Question.properties.created).toMatchObject({ type: 'string', format: 'date-time' });
    expect(doc.paths['/questions/{id}'].get.parameters[0].schema).toEqual({ type: 'integer', minimum: 1, maximum: 2147483647 });
    expect(Object.keys(doc.paths['/public/export/content_export.xsd'].get.responses['200'].content)).toEqual(['application/xml']);
    const xsd = await system.api.get('/api/v1/public/export/content_export.xsd');
    expect(xsd.headers['content-type']).toMatch(/^application\/xml/);
    expect(doc.info.license.identifier).toBeDefined();
    expect(doc.tags.every((t: { description?: string }) => t.description)).toBe(true);
  });
});

describe('the OpenAPI document says what the gateway accepts', () => {
  const doc = () => system.api.get('/api/v1/openapi.json').then((res) => res.body);
  const parameter = (operation: { parameters: Array<{ name?: string; $ref?: string; schema?: Record<string, unknown> }> }, name: string) =>
    operation.parameters.find((p) => p.name === name)?.schema;

  test('lists of fixed values and case-free operators are patterns, and the gateway keeps to them', async () => {
    const d = await doc();
    const users = d.paths['/users'].get;
    const questions = d.paths['/questions'].get;
    for (const [schema, good, bad] of [
      [parameter(users, 'include'), ' deleted,, hidden ', 'deleted,archived'],
      [parameter(users, 'sort'), 'lastname.desc,id', 'lastname.up'],
      [parameter(users, 'role'), 'user_admin,user', 'admin'],
      [parameter(questions, 'query_default_operator'), 'and', 'XOR'],
      [parameter(questions, 'tag_filter_default_operator'), 'Or', 'NOT'],
      [parameter(questions, 'filter'), 'solved,trending', 'solved,open'],
      [parameter(questions, 'categories'), '1, 2147483647', '2147483648'],
    ] as Array<[{ pattern: string }, string, string]>) {
      const pattern = new RegExp(schema.pattern, 'u');
      expect({ good, matches: pattern.test(good) }).toEqual({ good, matches: true });
      expect({ bad, matches: pattern.test(bad) }).toEqual({ bad, matches: false });
    }
    const query = (path: string, name: string, value: string) =>
      system.api.get(`/api/v1${path}?${name}=${encodeURIComponent(value)}`).set(...bearer(system.adminToken));
    expect((await query('/users', 'include', ' deleted,, hidden ')).status).toBe(200);
    expect((await query('/users', 'include', 'deleted,archived')).status).toBe(400);
    expect((await query('/questions', 'query_default_operator', 'and')).status).toBe(200);
    expect((await query('/questions', 'categories', '2147483648')).status).toBe(400);
  });

  test('a body is required where an empty one is not enough: no body reads as {}', async () => {
    const d = await doc();
    expect(d.paths['/settings'].put.requestBody.required).toBe(false);
    expect(d.paths['/auth/login'].post.requestBody.required).toBe(true);
    expect((await system.api.put('/api/v1/settings').set(...bearer(system.adminToken))).status).toBe(200);
    expect((await system.api.post('/api/v1/auth/login')).status).toBe(400);
  });

  test('a search for punctuation alone is well-formed: it finds nobody, no 400', async () => {
    const res = await system.api.get('/api/v1/users?query=%21%21%21').set(...bearer(system.adminToken));
    expect({ status: res.status, total: res.body.total }).toEqual({ status: 200, total: 0 });
  });

  test('tag labels: no comma and not only spaces, in bodies and in the {label} path alike', async () => {
    const d = await doc();
    const label = parameter(d.paths['/tag-labels/{label}'].get, 'label') as { pattern: string; maxLength: number };
    const body = d.paths['/questions'].post.requestBody.content['application/json'].schema.properties.tags.items;
    expect(body).toEqual(label);
    const pattern = new RegExp(label.pattern, 'u');
    expect([pattern.test(' hops '), pattern.test('a,b'), pattern.test('   '), pattern.test('')]).toEqual([true, false, false, false]);
    const comma = await system.api.get('/api/v1/tag-labels/a%2Cb').set(...bearer(system.adminToken));
    expect(comma.status).toBe(400);
    const spaces = await system.api
      .post('/api/v1/questions')
      .set(...bearer(system.adminToken))
      .send({ tags: ['  '] });
    expect(spaces.status).toBe(400);
  });

  test('every string a request sends says it takes no NUL; the fields a schema does not name are ignored, whatever they hold', async () => {
    const d = await doc();
    const create = d.paths['/questions'].post.requestBody.content['application/json'].schema.properties;
    expect(create.description.pattern).toBe('^[^\\u0000]*$');
    expect(parameter(d.paths['/users'].get, 'query')).toMatchObject({ pattern: '^[^\\u0000]*$' });
    const nul = await system.api
      .post('/api/v1/questions')
      .set(...bearer(system.adminToken))
      .send({ description: 'a\u0000b' });
    expect({ status: nul.status, code: nul.body.code }).toEqual({ status: 400, code: 'ValidationError' });
    const ignored = await system.api
      .put('/api/v1/users/me/settings')
      .set(...bearer(system.adminToken))
      .send({ 'unknown\u0000': 'x\u0000', interface_language: 'en' });
    expect(ignored.status).toBe(200);
  });

  test('an upload is the one part file, as its schema says: another field is a 400, and nothing is attached', async () => {
    const question = await system.api
      .post('/api/v1/questions')
      .set(...bearer(system.adminToken))
      .send({ title: 'Uploads' });
    const upload = () => system.api.post(`/api/v1/questions/${question.body.id}/attachments`).set(...bearer(system.adminToken));
    const extra = await upload().field('note', 'x').attach('file', Buffer.from('hello'), 'a.txt');
    expectError(extra, 400, 'ValidationError');
    const second = await upload().attach('file', Buffer.from('one'), 'a.txt').attach('file', Buffer.from('two'), 'b.txt');
    expectError(second, 400, 'ValidationError');
    const listed = await system.api.get(`/api/v1/questions/${question.body.id}/attachments`).set(...bearer(system.adminToken));
    expect(listed.body.total).toBe(0);
    expect((await upload().attach('file', Buffer.from('hello'), 'a.txt')).status).toBe(201);
    const schema = (await doc()).paths['/questions/{id}/attachments'].post.requestBody.content['multipart/form-data'].schema;
    expect(schema).toMatchObject({ additionalProperties: false, properties: { file: { minLength: 1 } } });
  });

  test('tolerated headers name no pattern: a traceparent or X-Request-Id that is not one is ignored', async () => {
    const d = await doc();
    for (const name of ['Traceparent', 'RequestId']) {
      expect(d.components.parameters[name].schema).toEqual({ type: 'string' });
      expect(d.components.parameters[name].description).toMatch(/ignored/);
    }
    const res = await system.api
      .get('/api/v1/users/me')
      .set(...bearer(system.adminToken))
      .set('traceparent', 'no trace')
      .set('x-request-id', 'bad id');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('links lead from what an operation makes or lists to every operation on it', async () => {
    const d = await doc();
    const links = (path: string, method: string, status: string) => d.paths[path][method].responses[status].links ?? {};
    const question = links('/questions', 'post', '201');
    expect(Object.keys(question)).toEqual(
      expect.arrayContaining([
        'getQuestion',
        'updateQuestion',
        'deleteQuestion',
        'publishQuestion',
        'createSolution',
        'createQuestionComment',
        'addQuestionAttachment',
      ]),
    );
    expect(question.publishQuestion).toMatchObject({ operationId: 'publishQuestion', parameters: { 'path.id': '$response.body#/id' } });
    expect(Object.keys(links('/questions/{id}/solutions', 'post', '201'))).toEqual(
      expect.arrayContaining(['getSolution', 'publishSolution', 'acceptSolution', 'createSolutionComment', 'addSolutionAttachment']),
    );
    expect(links('/users', 'post', '201').getLanguageSettings).toMatchObject({
      parameters: { 'header.X-On-Behalf-Of-User-Id': '$response.body#/id' },
    });
    expect(Object.keys(links('/export/content', 'post', '201'))).toEqual(['getContentExport', 'downloadContentExport']);
    expect(links('/questions', 'get', '200').getQuestion.parameters).toEqual({ 'path.id': '$response.body#/items/0/id' });
    // Every link names an operation of the document, and only parameters that operation has.
    const byId = new Map<string, { parameters: Array<{ name?: string; $ref?: string }> }>();
    for (const ops of Object.values(d.paths) as Array<Record<string, { operationId: string; parameters: [] }>>)
      for (const op of Object.values(ops)) byId.set(op.operationId, op);
    for (const ops of Object.values(d.paths) as Array<
      Record<string, { responses: Record<string, { links?: Record<string, { operationId: string; parameters: Record<string, string> }> }> }>
    >)
      for (const op of Object.values(ops))
        for (const response of Object.values(op.responses))
          for (const link of Object.values(response.links ?? {})) {
            const target = byId.get(link.operationId)!;
            expect(target).toBeDefined();
            const names = target.parameters.map((p) => p.name ?? d.components.parameters[p.$ref!.split('/').at(-1)!].name);
            for (const key of Object.keys(link.parameters)) expect(names).toContain(key.split('.')[1]);
          }
  });
});

describe('AsyncAPI', () => {
  test('the events are described by a valid AsyncAPI 3.0 document that names every subject, served without a token', async () => {
    const res = await system.api.get('/api/v1/asyncapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(readFileSync(path.join(process.cwd(), 'docs/asyncapi.json'), 'utf8')));
    const { Parser } = await import('@asyncapi/parser');
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(res.body));
    // Severity 0 is an error, 1 a warning (2 and 3 are hints, such as "a newer AsyncAPI version exists").
    expect(diagnostics.filter((d) => d.severity < 2).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    expect(
      document
        ?.channels()
        .all()
        .map((c) => c.address())
        .sort(),
    ).toEqual(Object.keys(events).sort());
    const published = res.body.components.messages['content.question.published.v1'];
    expect(published.headers.required).toEqual(['Nats-Msg-Id', 'traceparent']);
    expect(published.payload.properties.data.properties.question).toEqual({ $ref: '#/components/schemas/QuestionSnapshot' });
    expect(res.body.channels['content.question.published.v1']['x-stream']).toMatchObject({
      name: 'CONTENT',
      subjects: 'content.>',
      max_age_ms: 0,
    });
  });
});

describe('tracing', () => {
  /** The `traceparent` of each event of the content stream, by subject. */
  async function traceparents(subject: string) {
    const { runtime } = system.services.content;
    await runtime.relay.flush();
    const stream = runtime.bus.streamName('content');
    const info = await runtime.bus.jsm.streams.info(stream);
    const found: Array<string | undefined> = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const msg = await runtime.bus.jsm.streams.getMessage(stream, { seq });
      if (msg?.json<{ subject: string }>().subject === subject) found.push(msg.header?.get('traceparent') || undefined);
    }
    return found;
  }

  test('every event carries a traceparent: the request’s trace, or a new one the gateway started (no exporter configured)', async () => {
    const user = await system.createUser();
    const untraced = await system.api
      .post('/api/v1/questions')
      .set(...user.auth)
      .send({ title: 'Does an untraced request get a trace?' });
    expect(untraced.status).toBe(201);
    const traced = await system.api
      .put(`/api/v1/questions/${untraced.body.id}`)
      .set(...user.auth)
      .set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
      .send({ title: 'Does a traced request keep its trace?' });
    expect(traced.status).toBe(200);
    const [created] = await traceparents('content.question.created.v1');
    expect(created).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(created).not.toMatch(/^00-0{32}/);
    const [updated] = await traceparents('content.question.updated.v1');
    expect(updated).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });
});
