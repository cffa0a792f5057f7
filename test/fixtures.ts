// What the integration tests make through the API (questions, solutions) and read back (the
// content service's events): one set, so a test file does not write its own.
import { waitFor } from '@kn/testing';
import { bearer, type System } from './system.ts';

/** The API's base path: every route the tests call is below it. */
export const API = '/api/v1';

/** The question the fixtures ask where a test does not care which. */
const DEFAULT_QUESTION = {
  title: 'How do I configure the build cache?',
  description: '<p>The build is slow and I want to cache the dependencies.</p>',
  tags: ['build'],
};

/**
 * A question of the user with this token, with this body (POST /questions), published unless
 * `publish` is false: its id, the created resource and the publish answer. Throws when either is refused.
 */
export async function newQuestion(system: System, token: string, body: Record<string, unknown>, { publish = true } = {}) {
  const created = await system.api
    .post(`${API}/questions`)
    .set(...bearer(token))
    .send(body);
  if (created.status !== 201) throw new Error(`creating a question failed: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as number;
  if (!publish) return { id, created: created.body, published: undefined };
  const published = await system.api.put(`${API}/questions/${id}/publish`).set(...bearer(token));
  if (published.status !== 200) throw new Error(`publishing a question failed: ${published.status} ${JSON.stringify(published.body)}`);
  return { id, created: created.body, published: published.body };
}

/** A published question of the user with this token (the fixtures' question, under this title). */
export async function publishedQuestion(system: System, token: string, title = DEFAULT_QUESTION.title) {
  return (await newQuestion(system, token, { ...DEFAULT_QUESTION, title })).id;
}

export async function draftQuestion(system: System, token: string) {
  return (await newQuestion(system, token, { title: 'A draft question title', description: '<p>draft</p>' }, { publish: false })).id;
}

/** A published solution by the user with this token. */
export async function publishedSolution(
  system: System,
  token: string,
  questionId: number,
  description = '<p>Use a remote cache for the build.</p>',
) {
  const created = await system.api
    .post(`${API}/questions/${questionId}/solutions`)
    .set(...bearer(token))
    .send({ description });
  if (created.status !== 201) throw new Error(`creating a solution failed: ${created.status} ${JSON.stringify(created.body)}`);
  const published = await system.api.put(`${API}/solutions/${created.body.id}/publish`).set(...bearer(token));
  if (published.status !== 200) throw new Error(`publishing a solution failed: ${published.status} ${JSON.stringify(published.body)}`);
  return created.body.id as number;
}

/** Events the content service wrote to its outbox and published, read back from the stream. */
export async function contentEvents(
  system: System,
  subject: string,
): Promise<Array<{ subject: string; actor_id: number | null; data: any }>> {
  const { runtime } = system.services.content;
  await runtime.relay.flush();
  const bus = runtime.bus;
  const stream = bus.streamName('content');
  const info = await bus.jsm.streams.info(stream);
  const out: Array<{ subject: string; actor_id: number | null; data: any }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (!msg) continue;
    const envelope = msg.json<{ subject: string; actor_id: number | null; data: any }>();
    if (envelope.subject === subject) out.push(envelope);
  }
  return out;
}

/**
 * Signs in to the web app (POST /session) as a browser of this gateway would, with `headers`
 * besides (Origin, a proxy's X-Forwarded-*): the answer, the `kn_session=…` cookie to send back
 * and the session's CSRF token. Throws unless it is 201.
 */
export async function webSession(
  api: System['api'],
  credentials: { email: string; password: string },
  headers: Record<string, string> = {},
) {
  const res = await api.post('/session').set(headers).send(credentials);
  if (res.status !== 201) throw new Error(`signing in ${credentials.email} failed: ${res.status} ${JSON.stringify(res.body)}`);
  const setCookie = (res.headers['set-cookie'] as unknown as string[])[0]!;
  return { res, setCookie, cookie: setCookie.split(';')[0]!, csrf: res.body.csrf as string };
}

/**
 * A closed knowledge space (made by the content admin with this token) with one published question
 * of theirs in it: the ids of both.
 */
export async function closedSpaceQuestion(system: System, token: string, title: string) {
  const space = await system.api
    .post(`${API}/knowledge-spaces`)
    .set(...bearer(token))
    .send({ name: `Closed: ${title}`, is_closed: true });
  if (space.status !== 201) throw new Error(`creating a knowledge space failed: ${space.status} ${JSON.stringify(space.body)}`);
  const { id } = await newQuestion(system, token, {
    title,
    description: '<p>Only the members of the space read this.</p>',
    tags: ['build'],
    knowledge_space: space.body.id,
  });
  return { space: space.body.id as number, question: id };
}

/**
 * Whether the caller (a bearer token's or a web session's header) reads the question: the status
 * of GET /questions/:id, and whether a search for `word` lists it once search has caught up.
 */
export async function readsQuestion(system: System, header: [string, string], id: number, word: string) {
  await system.searchCaughtUp();
  const get = await system.api.get(`${API}/questions/${id}`).set(...header);
  const search = await system.api.get(`${API}/questions?query=${encodeURIComponent(word)}`).set(...header);
  if (search.status !== 200) throw new Error(`searching failed: ${search.status} ${JSON.stringify(search.body)}`);
  return { get: get.status, listed: (search.body.items as Array<{ id: number }>).some((q) => q.id === id) };
}

/**
 * What idp_group_mappings' `knowledge_spaces` promise, as a sign-in of either protocol shows it: a
 * person signed in with a group mapped to a closed space reads its question; signed in again
 * without the group, no longer. `signIn` signs the same person in with these groups and gives the
 * session's cookie header; `group` is the mapping's name, `claimed` the group as the provider sends it.
 */
export async function expectGroupGivesSpace(
  system: System,
  { group, claimed, word }: { group: string; claimed: string; word: string },
  signIn: (groups: string[]) => Promise<string>,
) {
  const { space, question } = await closedSpaceQuestion(system, system.adminToken, `Closed register of the ${group} ${word}`);
  const mappings = (idp_group_mappings: unknown[]) =>
    system.api
      .put(`${API}/settings`)
      .set(...bearer(system.adminToken))
      .send({ idp_group_mappings });
  const mapped = await mappings([{ group, roles: [], knowledge_spaces: [space] }]);
  if (mapped.status !== 200) throw new Error(`mapping the group failed: ${mapped.status} ${JSON.stringify(mapped.body)}`);
  try {
    const session = await signIn([claimed]);
    const reads = () => readsQuestion(system, ['cookie', session], question, word);
    await waitFor(async () => (await reads()).get === 200, { what: 'the group member reads the closed space' });
    expect(await reads()).toEqual({ get: 200, listed: true });
    await signIn(['sales']);
    await waitFor(async () => (await reads()).get === 404, { what: 'the membership went with the group' });
    expect(await reads()).toEqual({ get: 404, listed: false });
  } finally {
    await mappings([]);
  }
}
