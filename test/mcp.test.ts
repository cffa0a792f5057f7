import { waitFor } from '@kn/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * The MCP server at /mcp through the SDK's own client over Streamable HTTP: every tool, compared
 * with what the REST API answers the same person; closed spaces stay closed; bad input is refused
 * with a message saying what is wrong, and changes nothing.
 */

let system: System;
let asker: Awaited<ReturnType<System['createUser']>>;
let answerer: Awaited<ReturnType<System['createUser']>>;
let outsider: Awaited<ReturnType<System['createUser']>>;
const clients: Client[] = [];
const q = { cache: 0, solution: 0, closed: 0, space: 0 };
const CLOSED_TITLE = 'Quokka hovercraft maintenance of the closed space';

async function connect(token: string | undefined) {
  const client = new Client({ name: 'kn-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${system.url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const rest = async (token: string, req: (api: System['api']) => any, status = 200) => {
  const res = await req(system.api).set(...bearer(token));
  expect(res.status).toBe(status);
  return res.body;
};

beforeAll(async () => {
  system = await startSystem();
  [asker, answerer, outsider] = await Promise.all([
    system.createUser({ firstname: 'Ada', lastname: 'Asker' }),
    system.createUser({ firstname: 'Ann', lastname: 'Answerer' }),
    system.createUser({ firstname: 'Otto', lastname: 'Outsider' }),
  ]);
  q.cache = (
    await newQuestion(system, asker.token, {
      title: 'How do I configure the build cache?',
      description: '<p>The build is <strong>slow</strong> &amp; I want to cache the dependencies.</p>',
      tags: ['build'],
    })
  ).id;
  q.solution = await publishedSolution(system, answerer.token, q.cache, '<p>Use a <em>remote</em> cache for the build.</p>');
  q.space = (await rest(system.adminToken, (api) => api.post(`${API}/knowledge-spaces`).send({ name: 'Closed', is_closed: true }), 201)).id;
  await rest(system.adminToken, (api) => api.put(`${API}/knowledge-spaces/${q.space}/members`).send({ user_ids: [answerer.user.id] }));
  q.closed = (
    await newQuestion(system, answerer.token, {
      title: CLOSED_TITLE,
      description: '<p>only members know about quokka hovercraft</p>',
      knowledge_space: q.space,
      tags: ['build'],
    })
  ).id;
  await system.searchCaughtUp();
  await system.routed();
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await system?.stop();
});

describe('the MCP server', () => {
  test('lists its tools with annotations and input schemas taken from the contracts, and the question resource template', async () => {
    const client = await connect(asker.token);
    expect(client.getServerVersion()?.name).toBe('knowledge-network');
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        'add_comment',
        'add_solution',
        'answer_from_knowledge',
        'draft_question',
        'find_experts',
        'forward_question',
        'get_question',
        'list_notifications',
        'mark_notifications_read',
        'publish_question',
        'search_questions',
        'similar_questions',
      ].sort(),
    );
    for (const name of [
      'search_questions',
      'similar_questions',
      'get_question',
      'find_experts',
      'answer_from_knowledge',
      'list_notifications',
    ])
      expect(byName[name]!.annotations?.readOnlyHint).toBe(true);
    for (const name of ['draft_question', 'publish_question', 'add_solution', 'add_comment', 'forward_question'])
      expect(byName[name]!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(byName.mark_notifications_read!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    // The contracts' bounds: the query of GET /questions, the title of POST /questions, similar text.
    const props = (name: string) => (byName[name]!.inputSchema as { properties: Record<string, any> }).properties;
    expect(props('search_questions').query.maxLength).toBe(1000);
    expect(props('draft_question').title.maxLength).toBe(100);
    expect(props('similar_questions').text.maxLength).toBe(10000);
    expect(props('find_experts').query.maxLength).toBe(1000);
    for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(30);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['kn://questions/{id}']);
  });

  test('search_questions finds what GET /questions finds for the same person, with links, plain text and cursor paging', async () => {
    const client = await connect(asker.token);
    const found = await call(client, 'search_questions', { query: 'build cache' });
    const same = await rest(asker.token, (api) => api.get(`${API}/questions`).query({ query: 'build cache' }));
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent.questions.map((x: { id: number }) => x.id)).toEqual(same.items.map((x: { id: number }) => x.id));
    expect(found.structuredContent.total).toBe(same.total);
    const first = found.structuredContent.questions[0];
    expect(first).toMatchObject({ id: q.cache, link: `${system.url}/questions/${q.cache}`, tags: ['build'] });
    expect(first.excerpt).toBe('The build is slow & I want to cache the dependencies.');
    expect(textOf(found)).toContain(`${system.url}/questions/${q.cache}`);
    expect(textOf(found)).not.toMatch(/<[a-z]/);

    // Pages of one: the cursor leads from each to the next, and the pages together are the list.
    const all = await rest(asker.token, (api) => api.get(`${API}/questions`).query({ limit: 100 }));
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(client, 'search_questions', { limit: 1, ...(cursor ? { cursor } : {}) });
      ids.push(...page.structuredContent.questions.map((x: { id: number }) => x.id));
      cursor = page.structuredContent.next_cursor;
    } while (cursor);
    expect(ids).toEqual(all.items.map((x: { id: number }) => x.id));
    expect(ids.length).toBeGreaterThanOrEqual(1);
    const filtered = await call(client, 'search_questions', { filter: 'my-questions', tags: 'build' });
    expect(filtered.structuredContent.questions.map((x: { id: number }) => x.id)).toEqual([q.cache]);
  });

  test('similar_questions, get_question, find_experts and answer_from_knowledge answer what the REST API answers', async () => {
    const client = await connect(asker.token);
    const text = 'How can I make the build faster with a cache?';
    const similar = await call(client, 'similar_questions', { text });
    const same = await rest(asker.token, (api) => api.get(`${API}/search/questions-similar`).query({ query: text }));
    expect(similar.structuredContent.questions.map((x: { id: number }) => x.id)).toEqual(same.items.map((x: { id: number }) => x.id));

    const got = await call(client, 'get_question', { id: q.cache });
    const complete = await rest(asker.token, (api) => api.get(`${API}/questions/${q.cache}/complete`));
    expect(got.structuredContent).toMatchObject({ id: q.cache, title: complete.title, link: `${system.url}/questions/${q.cache}` });
    expect(got.structuredContent.solutions.map((s: { id: number }) => s.id)).toEqual(complete.solutions.map((s: { id: number }) => s.id));
    expect(got.structuredContent.solutions[0]).toMatchObject({ id: q.solution, text: 'Use a remote cache for the build.', expired: false });
    expect(textOf(got)).toContain('# How do I configure the build cache?');

    const experts = await call(client, 'find_experts', { query: 'build cache' });
    const restExperts = await rest(asker.token, (api) => api.post(`${API}/search/experts`).send({ query: 'build cache' }));
    expect(experts.structuredContent.experts.map((e: { id: number }) => e.id)).toEqual(
      restExperts.experts.map((e: { user: { id: number } }) => e.user.id),
    );
    expect(experts.structuredContent.tags).toEqual(restExperts.tags);
    expect(experts.structuredContent.experts[0]).toMatchObject({ id: answerer.user.id, name: 'Ann Answerer', tags: ['build'] });

    const answer = await call(client, 'answer_from_knowledge', { text: 'build cache' });
    expect(answer.structuredContent.sources[0]).toMatchObject({
      question: { id: q.cache, link: `${system.url}/questions/${q.cache}` },
      solutions: [{ id: q.solution, expired: false, text: 'Use a remote cache for the build.' }],
    });
    expect(textOf(answer)).toContain(`${system.url}/questions/${q.cache}`);
  });

  test('the question resource holds the question as text, read as the caller', async () => {
    const client = await connect(asker.token);
    const read = await client.readResource({ uri: `kn://questions/${q.cache}` });
    expect(read.contents[0]).toMatchObject({ uri: `kn://questions/${q.cache}`, mimeType: 'text/markdown' });
    expect((read.contents[0] as { text: string }).text).toContain('Use a remote cache for the build.');
    await expect(client.readResource({ uri: 'kn://questions/0' })).rejects.toThrow(/positive integer/);
  });

  test('a person outside a closed knowledge space finds nothing of it; a member does', async () => {
    const outside = await connect(outsider.token);
    const member = await connect(answerer.token);
    for (const [tool, args] of [
      ['search_questions', { query: 'quokka hovercraft' }],
      ['similar_questions', { text: CLOSED_TITLE }],
      ['answer_from_knowledge', { text: CLOSED_TITLE }],
    ] as const) {
      const seen = await call(outside, tool, args);
      expect(JSON.stringify(seen)).not.toMatch(/quokka/i);
      expect(JSON.stringify(await call(member, tool, args))).toMatch(/quokka/i);
    }
    const got = await call(outside, 'get_question', { id: q.closed });
    expect(got.isError).toBe(true);
    expect(textOf(got)).toMatch(/^NotFound: /);
    await expect(outside.readResource({ uri: `kn://questions/${q.closed}` })).rejects.toMatchObject({ code: -32002 });
    expect((await call(member, 'get_question', { id: q.closed })).structuredContent.title).toBe(CLOSED_TITLE);
  });

  test('draft_question and publish_question ask the experts and say who; add_solution, add_comment and forward_question act as the caller', async () => {
    const client = await connect(asker.token);
    const draft = await call(client, 'draft_question', {
      title: 'How do I clear the build cache safely?',
      description: 'The cache is corrupt.\n\nWhat is the safe way to clear it?',
      tags: ['build'],
    });
    expect(draft.isError).toBeFalsy();
    const id = draft.structuredContent.id as number;
    const stored = await rest(asker.token, (api) => api.get(`${API}/questions/${id}`));
    expect(stored).toMatchObject({
      is_published: false,
      description: '<p>The cache is corrupt.</p><p>What is the safe way to clear it?</p>',
    });

    const published = await call(client, 'publish_question', { id });
    expect(published.isError).toBeFalsy();
    await system.routed();
    const experts = await rest(asker.token, (api) => api.get(`${API}/questions/${id}/experts`));
    expect(published.structuredContent.number_of_experts).toBeGreaterThanOrEqual(1);
    expect(published.structuredContent.experts).toEqual(
      experts.items
        .slice(0, published.structuredContent.number_of_experts)
        .map((e: any) => ({ id: e.user.id, name: `${e.user.firstname} ${e.user.lastname}` })),
    );
    expect(textOf(published)).toContain('Ann Answerer');

    const helper = await connect(answerer.token);
    const solution = await call(helper, 'add_solution', { question_id: id, description: 'Delete the folder & rebuild.' });
    const comment = await call(helper, 'add_comment', { on: 'question', id, description: 'Which tool do you use?' });
    const onSolution = await call(client, 'add_comment', { on: 'solution', id: solution.structuredContent.id, description: 'Thanks!' });
    const complete = await rest(asker.token, (api) => api.get(`${API}/questions/${id}/complete`));
    expect(complete.solutions).toEqual([
      expect.objectContaining({
        id: solution.structuredContent.id,
        is_published: true,
        description: '<p>Delete the folder &amp; rebuild.</p>',
      }),
    ]);
    expect(complete.comments.map((c: { id: number }) => c.id).sort()).toEqual(
      [comment.structuredContent.id, onSolution.structuredContent.id].sort(),
    );

    const forwarded = await call(client, 'forward_question', {
      question_id: q.cache,
      recipient: outsider.user.id,
      message: 'you might know',
    });
    expect(forwarded.isError).toBeFalsy();
    const forwards = await rest(asker.token, (api) => api.get(`${API}/questions/${q.cache}/forward`));
    expect(forwards.items).toEqual([expect.objectContaining({ user_id: outsider.user.id, count: 1 })]);
  });

  test('get_question says how many comments its bound left out, and where all of them are', async () => {
    // All the outsider's own, so that nobody else is notified (the notifications test counts the others').
    const { id } = await newQuestion(system, outsider.token, { title: 'Which quokka feed lasts the winter?', tags: ['quokka-feed'] });
    for (let i = 0; i < 22; i++)
      await rest(outsider.token, (api) => api.post(`${API}/questions/${id}/comments`).send({ description: `<p>Remark ${i}</p>` }), 201);
    const got = await call(await connect(outsider.token), 'get_question', { id });
    expect(got.structuredContent.comments).toHaveLength(20);
    expect(got.structuredContent).toMatchObject({ comments_total: 22, solutions_total: 0 });
    expect(textOf(got)).toContain('## Comments (20 of 22: the first; all at the link)');
  });

  test('a solution past its validity is marked expired, one within it valid until its end', async () => {
    // The outsider's own question and solutions, so that nobody else is notified.
    const { id } = await newQuestion(system, outsider.token, { title: 'How long does quokka feed keep?', tags: ['quokka-feed'] });
    const stale = await publishedSolution(system, outsider.token, id, '<p>Two weeks in the cold.</p>');
    const validated = await rest(outsider.token, (api) =>
      api.post(`${API}/solutions/${stale}/validate`).send({ validity: 'months_three' }),
    );
    expect(validated.expires).toBeTruthy();
    const client = await connect(outsider.token);
    const valid = await call(client, 'get_question', { id });
    expect(valid.structuredContent.solutions[0]).toMatchObject({ id: stale, expires: validated.expires, expired: false });
    expect(textOf(valid)).toContain(`valid until ${validated.expires}`);
    const past = new Date(system.clock.now().getTime() - 60_000);
    await system.services.content.runtime.db.updateTable('solutions').set({ expires: past }).where('id', '=', stale).execute();
    const expired = await call(client, 'get_question', { id });
    expect(expired.structuredContent.solutions[0]).toMatchObject({ id: stale, expired: true });
    expect(textOf(expired)).toContain(`EXPIRED since ${past.toISOString()}`);
  });

  test('list_notifications and mark_notifications_read answer and change what the REST API does', async () => {
    await system.routed();
    await system.services.notifications.runtime.relay.flush();
    const client = await connect(asker.token);
    const listed = await call(client, 'list_notifications', {});
    const same = await rest(asker.token, (api) => api.get(`${API}/notifications`));
    expect(same.total).toBeGreaterThanOrEqual(1);
    expect(listed.structuredContent.notifications.map((n: { id: number }) => n.id)).toEqual(same.items.map((n: { id: number }) => n.id));
    expect(listed.structuredContent.notifications[0].link).toBe(`${system.url}${same.items[0].url}`);
    const first = same.items[0].id as number;
    await call(client, 'mark_notifications_read', { id: first });
    expect(
      (await rest(asker.token, (api) => api.get(`${API}/notifications`))).items.find((n: { id: number }) => n.id === first).is_read,
    ).toBe(true);
    const all = await call(client, 'mark_notifications_read', {});
    expect(all.isError).toBeFalsy();
    expect((await rest(asker.token, (api) => api.get(`${API}/notifications/count`))).notifications).toBe(0);
    expect((await call(client, 'list_notifications', { ignore_read: true })).structuredContent.total).toBe(0);
  });
});

describe('bad input to the MCP server', () => {
  const myQuestions = async () => (await rest(asker.token, (api) => api.get(`${API}/questions`).query({ filter: 'my-questions' }))).total;

  test('an unknown tool, arguments that break the schema, a text too long and a bad cursor are errors that say what is wrong, and change nothing', async () => {
    const client = await connect(asker.token);
    const before = await myQuestions();
    const unknown = await call(client, 'delete_everything', {});
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/delete_everything not found/);
    const wrongType = await call(client, 'get_question', { id: 'the first' });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/Input validation error.*id/s);
    const tooLong = await call(client, 'draft_question', { title: 'x'.repeat(101) });
    expect(tooLong.isError).toBe(true);
    expect(textOf(tooLong)).toMatch(/title/);
    const longText = await call(client, 'similar_questions', { text: 'y'.repeat(10_001) });
    expect(longText.isError).toBe(true);
    expect(textOf(longText)).toMatch(/text/);
    const nul = await call(client, 'draft_question', { title: 'A title of a question', description: 'a NUL \u0000 in it' });
    expect(nul.isError).toBe(true);
    expect(textOf(nul)).toMatch(/^ValidationError: .*NUL/);
    const cursor = await call(client, 'search_questions', { cursor: 'not-ours' });
    expect(textOf(cursor)).toMatch(/^ValidationError: cursor/);
    const unpublished = await call(client, 'publish_question', { id: q.cache });
    expect(unpublished.isError).toBe(true);
    expect(textOf(unpublished)).toMatch(/^Conflict: /);
    const stranger = await call(client, 'forward_question', { question_id: q.cache, recipient: 2_000_000_000 });
    expect(textOf(stranger)).toMatch(/^NotFound: /);
    expect(await myQuestions()).toBe(before);
  });

  test('without a token: 401 with the challenge that leads to the resource metadata, which names the authorization server', async () => {
    const res = await system.api
      .post('/mcp')
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('Unauthorized');
    const header = res.headers['www-authenticate'] as string;
    expect(header).toBe(`Bearer resource_metadata="${system.url}/.well-known/oauth-protected-resource/mcp", scope="mcp"`);
    const metadata = await system.api.get('/.well-known/oauth-protected-resource/mcp');
    expect(metadata.status).toBe(200);
    expect(metadata.body).toMatchObject({
      resource: `${system.url}/mcp`,
      authorization_servers: [`${system.url}/oauth`],
      bearer_methods_supported: ['header'],
    });
    await expect(connect(undefined)).rejects.toThrow();
  });

  test('a revoked or unknown token is 401 invalid_token; the web session cookie is no credential here; GET is 405', async () => {
    const user = await system.createUser();
    const client = await connect(user.token);
    expect((await call(client, 'search_questions', {})).isError).toBeFalsy();
    await rest(user.token, (api) => api.delete(`${API}/auth/token`), 204);
    await expect(call(client, 'search_questions', {})).rejects.toThrow();
    const refused = await system.api
      .post('/mcp')
      .set(...bearer(user.token))
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="[^"]+", scope="mcp", error="invalid_token"$/);
    const session = await system.api.post('/session').send({ email: asker.user.email, password: 'password-1234' });
    const cookie = (session.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    const withCookie = await system.api
      .post('/mcp')
      .set('cookie', cookie)
      .set('x-csrf-token', session.body.csrf)
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(withCookie.status).toBe(401);
    const get = await system.api.get('/mcp').set(...bearer(asker.token));
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });

  test('calls count against the caller’s rate limit as REST requests do: a tool of several operations counts each', async () => {
    const user = await system.createUser();
    const client = await connect(user.token);
    await rest(system.adminToken, (api) => api.put(`${API}/settings`).send({ rate_limit_per_minute: 2 }));
    try {
      await system.services.users.runtime.relay.flush();
      // Each probe starts from a full allowance (the clock moved past the minute), and takes one of
      // the two. A probe whose decision came late (under load, let through unanswered) says nothing
      // of what is left, so the wait is for one that says one is left.
      await waitFor(
        async () => {
          system.clock.advance(60_000);
          return (await system.api.get(`${API}/users/me`).set(...bearer(user.token))).headers['ratelimit-remaining'] === '1';
        },
        { what: 'the new limit, one request of two left' },
      );
      // The probe was the first request counted; this call is the second, its second operation the third.
      const answer = await call(client, 'answer_from_knowledge', { text: 'build cache', questions: 3 });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/^RateLimited: /);
      await expect(call(client, 'search_questions', {})).rejects.toThrow(/RateLimited/);
    } finally {
      await rest(system.adminToken, (api) => api.put(`${API}/settings`).send({ rate_limit_per_minute: 0 }));
      await system.services.users.runtime.relay.flush();
    }
  });
});
