import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Role } from '@kn/contracts';
import { createDb, sql } from '@kn/db';
import { createLogger } from '@kn/telemetry';
import { waitFor } from '@kn/testing';
import { type Caller, expected, httpOperations, type Outcome, outcomeOf, type Request, type Scenario } from './access-matrix.ts';
import { API, draftQuestion, publishedQuestion, publishedSolution } from './fixtures.ts';
import { ADMIN, bearer, type System, startSystem } from './system.ts';

const PASSWORD = 'password-1234';
// A range for the analytics reports (they require one).
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z' };
type U = Awaited<ReturnType<System['createUser']>>;

let system: System;
let admin: [string, string];
let owner: U;
let answerer: U;
const byRole = {} as Record<Role | 'other', U>;
const callers: Caller[] = [];

// Shared fixtures (owner = `owner` unless said otherwise).
const f = {} as {
  question: number; // published, by owner
  draft: number; // draft question, by owner
  deletedQuestion: number; // by owner
  answererQuestion: number; // published, by answerer
  ownSolution: number; // published solution of owner (on the answerer's question)
  answererSolution: number; // published solution of answerer on the owner's question
  draftSolution: number; // owner's draft solution (on the answerer's question)
  deletedSolution: number;
  comment: number; // owner's comment on the owner's question
  attachment: number; // owner's attachment on the owner's question
  notification: number; // a notification of the owner
  category: number;
  space: number;
  topicExport: number;
  contentExport: number;
};

const as = (token: string) => bearer(token);
async function ok<T = any>(res: Promise<{ status: number; body: any }> | { status: number; body: any }, status?: number): Promise<T> {
  const r = await res;
  if (status ? r.status !== status : r.status >= 300) throw new Error(`fixture request failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

// Fresh fixtures for cells whose allowed request consumes its resource.
const fresh = {
  question: () => publishedQuestion(system, owner.token, `A fresh question ${Math.random().toString(36).slice(2, 8)} about caching`),
  draft: () => draftQuestion(system, owner.token),
  async deletedQuestion() {
    const id = await fresh.question();
    await ok(system.api.delete(`${API}/questions/${id}`).set(...owner.auth), 204);
    return id;
  },
  async solution() {
    const q = await publishedQuestion(system, answerer.token, `Another question ${Math.random().toString(36).slice(2, 8)} on caching`);
    return publishedSolution(system, owner.token, q, `<p>fresh ${Math.random()}</p>`);
  },
  async draftSolution() {
    const q = await publishedQuestion(system, answerer.token, `Another question ${Math.random().toString(36).slice(2, 8)} on caching`);
    const s = await ok(
      system.api
        .post(`${API}/questions/${q}/solutions`)
        .set(...owner.auth)
        .send({ description: '<p>draft answer</p>' }),
    );
    return s.id as number;
  },
  async deletedSolution() {
    const id = await fresh.solution();
    await ok(system.api.delete(`${API}/solutions/${id}`).set(...owner.auth), 204);
    return id;
  },
  async comment() {
    const c = await ok(
      system.api
        .post(`${API}/questions/${f.answererQuestion}/comments`)
        .set(...owner.auth)
        .send({ description: `<p>a comment ${Math.random()}</p>` }),
    );
    return c.id as number;
  },
  async attachment() {
    const a = await ok(
      system.api
        .post(`${API}/questions/${f.question}/attachments`)
        .set(...owner.auth)
        .attach('file', Buffer.from('some text'), 'notes.txt'),
    );
    return a.id as number;
  },
  async category() {
    const c = await ok(
      system.api
        .post(`${API}/categories`)
        .set(...admin)
        .send({ name: `Category ${Math.random()}` }),
    );
    return c.id as number;
  },
  async user() {
    const u = await ok(
      system.api
        .post(`${API}/users`)
        .set(...admin)
        .send({ email: `gone-${Math.random().toString(36).slice(2)}@example.com`, firstname: 'Gone', lastname: 'Soon', language: 'en' }),
    );
    return u.id as number;
  },
  async scimToken() {
    const t = await ok(
      system.api
        .post(`${API}/scim/tokens`)
        .set(...admin)
        .send({ name: 'the identity provider' }),
      201,
    );
    return t.id as string;
  },
};

/** How each operation is called in the matrix; the test fails when an operation has none. */
const scenarios: Record<string, Scenario[]> = {
  login: [{ request: () => ({ path: '/auth/login', body: { email: owner.user.email, password: PASSWORD } }) }],
  revokeToken: [{ request: () => ({ path: '/auth/token' }) }],
  createTokenOnBehalf: [{ request: () => ({ path: '/auth/tokens', body: { user_id: owner.user.id } }) }],
  createUser: [
    {
      request: () => ({
        path: '/users',
        body: { email: `new-${Math.random().toString(36).slice(2)}@example.com`, firstname: 'New', lastname: 'User', language: 'en' },
      }),
    },
  ],
  listUsers: [
    { request: () => ({ path: '/users' }) },
    {
      variant: 'deanonymize_users_email=true',
      roles: ['user_admin'],
      request: () => ({ path: '/users', query: { deanonymize_users_email: 'true' } }),
    },
    {
      variant: 'include=deleted,hidden,system',
      roles: ['user_admin'],
      request: () => ({ path: '/users', query: { include: 'deleted,hidden,system' } }),
    },
    { variant: 'role=super_admin', roles: ['user_admin'], request: () => ({ path: '/users', query: { role: 'super_admin' } }) },
  ],
  getMe: [{ request: () => ({ path: '/users/me' }) }],
  getLanguageSettings: [{ request: () => ({ path: '/users/me/settings' }) }],
  updateLanguageSettings: [{ request: () => ({ path: '/users/me/settings', body: { has_all_languages: true } }) }],
  getEmailSettings: [{ request: () => ({ path: '/users/me/settings/communication/email' }) }],
  updateEmailSettings: [{ request: () => ({ path: '/users/me/settings/communication/email', body: { new_solution: 'on' } }) }],
  resetEmailSettings: [{ request: () => ({ path: '/users/me/settings/communication/email' }) }],
  getUser: [{ request: () => ({ path: `/users/${owner.user.id}` }) }],
  listUsersById: [{ request: () => ({ path: '/users/by-id', query: { ids: String(owner.user.id) } }) }],
  updateUser: [{ rule: 'self-or-user-admin', request: () => ({ path: `/users/${owner.user.id}`, body: { about: 'About me' } }) }],
  deleteUser: [{ request: async () => ({ path: `/users/${await fresh.user()}` }) }],
  createScimToken: [{ request: () => ({ path: '/scim/tokens', body: { name: 'the identity provider' } }) }],
  listScimTokens: [{ request: () => ({ path: '/scim/tokens' }) }],
  revokeScimToken: [{ request: async () => ({ path: `/scim/tokens/${await fresh.scimToken()}` }) }],
  getNetworkSettings: [{ request: () => ({ path: '/settings' }) }],
  updateNetworkSettings: [{ request: () => ({ path: '/settings', body: { network_name: 'Access network' } }) }],
  getNotificationChannels: [{ request: () => ({ path: '/users/me/settings/communication/channels' }) }],
  updateNotificationChannels: [
    { request: () => ({ path: '/users/me/settings/communication/channels', body: { share_question: 'both' } }) },
  ],
  // No chat account waits for these: whoever may call gets 404 for the code or the link.
  previewChatLink: [{ expect: () => 'hidden', request: () => ({ path: '/chat/links/preview', body: { code: 'no-such-link-code' } }) }],
  linkChatAccount: [{ expect: () => 'hidden', request: () => ({ path: '/chat/links', body: { code: 'no-such-link-code' } }) }],
  listChatLinks: [{ request: () => ({ path: '/chat/links' }) }],
  deleteChatLink: [{ expect: () => 'hidden', request: () => ({ path: '/chat/links/424242' }) }],

  createQuestion: [{ request: () => ({ path: '/questions', body: { title: 'A question from the matrix', description: '<p>x</p>' } }) }],
  listQuestions: [
    { request: () => ({ path: '/questions' }) },
    { variant: 'filter=flagged', roles: ['content_admin'], request: () => ({ path: '/questions', query: { filter: 'flagged' } }) },
  ],
  getQuestion: [
    { request: () => ({ path: `/questions/${f.question}` }) },
    { variant: 'a draft', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/questions/${f.draft}` }) },
    { variant: 'deleted', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/questions/${f.deletedQuestion}` }) },
  ],
  updateQuestion: [
    {
      rule: 'owner-or-content-admin',
      request: () => ({ path: `/questions/${f.question}`, body: { title: 'How do I configure the build cache?' } }),
    },
  ],
  deleteQuestion: [{ rule: 'owner-or-content-admin', request: async () => ({ path: `/questions/${await fresh.question()}` }) }],
  publishQuestion: [
    { rule: 'owner-or-content-admin', deny: 'hidden', request: async () => ({ path: `/questions/${await fresh.draft()}/publish` }) },
  ],
  restoreQuestion: [
    {
      rule: 'owner-or-content-admin',
      deny: 'hidden',
      request: async () => ({ path: `/questions/${await fresh.deletedQuestion()}/restore` }),
    },
  ],
  flagQuestion: [{ request: () => ({ path: `/questions/${f.question}/flag`, body: { message: 'please check' } }) }],
  followQuestion: [{ request: () => ({ path: `/questions/${f.question}/follow` }) }],
  // Not me on the answerer's question: anyone asked may say it; saying it again answers 204 too.
  declineQuestion: [{ alsoAllowed: [409], request: () => ({ path: `/questions/${f.answererQuestion}/decline` }) }],
  unfollowQuestion: [{ request: () => ({ path: `/questions/${f.question}/follow` }) }],
  listCategories: [{ request: () => ({ path: '/categories' }) }],
  createCategory: [{ request: () => ({ path: '/categories', body: { name: `Matrix ${Math.random()}` } }) }],
  updateCategory: [{ request: () => ({ path: `/categories/${f.category}`, body: { name: 'Renamed category' } }) }],
  deleteCategory: [{ request: async () => ({ path: `/categories/${await fresh.category()}` }) }],
  listTags: [{ request: () => ({ path: '/tags' }) }],
  getTagLinks: [{ request: () => ({ path: '/tag-labels/build/links' }) }],
  putTagLinks: [{ request: () => ({ path: '/tag-labels/build/links', body: ['cache'] }) }],
  getTagLabel: [{ request: () => ({ path: '/tag-labels/build' }) }],
  updateTagLabel: [{ request: () => ({ path: '/tag-labels/build', body: { excluded_from_suggestions: false } }) }],
  listKnowledgeSpaces: [{ request: () => ({ path: '/knowledge-spaces' }) }],
  createKnowledgeSpace: [{ request: () => ({ path: '/knowledge-spaces', body: { name: `Space ${Math.random()}` } }) }],
  updateKnowledgeSpace: [{ request: () => ({ path: `/knowledge-spaces/${f.space}`, body: { name: 'Open space' } }) }],
  setKnowledgeSpaceMembers: [{ request: () => ({ path: `/knowledge-spaces/${f.space}/members`, body: { user_ids: [owner.user.id] } }) }],

  createSolution: [
    { request: () => ({ path: `/questions/${f.answererQuestion}/solutions`, body: { description: '<p>my answer draft</p>' } }) },
  ],
  getSolutionDraft: [{ request: () => ({ path: `/questions/${f.answererQuestion}/solutions/draft` }) }],
  getCompleteQuestion: [
    { request: () => ({ path: `/questions/${f.question}/complete` }) },
    { variant: 'a draft', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/questions/${f.draft}/complete` }) },
  ],
  getSolution: [
    { request: () => ({ path: `/solutions/${f.ownSolution}` }) },
    { variant: 'a draft', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/solutions/${f.draftSolution}` }) },
    { variant: 'deleted', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/solutions/${f.deletedSolution}` }) },
  ],
  updateSolution: [
    {
      rule: 'owner-or-content-admin',
      request: () => ({ path: `/solutions/${f.ownSolution}`, body: { description: '<p>Use a remote cache.</p>' } }),
    },
  ],
  deleteSolution: [{ rule: 'owner-or-content-admin', request: async () => ({ path: `/solutions/${await fresh.solution()}` }) }],
  publishSolution: [
    {
      rule: 'owner-or-content-admin',
      deny: 'hidden',
      request: async () => ({ path: `/solutions/${await fresh.draftSolution()}/publish` }),
    },
  ],
  restoreSolution: [
    {
      rule: 'owner-or-content-admin',
      deny: 'hidden',
      request: async () => ({ path: `/solutions/${await fresh.deletedSolution()}/restore` }),
    },
  ],
  rateSolution: [{ rule: 'not-owner', request: () => ({ path: `/solutions/${f.ownSolution}/rating`, body: { rating: 4 } }) }],
  acceptSolution: [{ rule: 'owner', request: () => ({ path: `/solutions/${f.answererSolution}/accept` }) }],
  upvoteSolution: [{ rule: 'not-owner', request: () => ({ path: `/solutions/${f.ownSolution}/upvote` }) }],
  // Taking back an upvote that was never given is idempotent: 200 for the author too.
  removeSolutionUpvote: [{ request: () => ({ path: `/solutions/${f.ownSolution}/upvote` }) }],
  listMyUpvotes: [{ request: () => ({ path: `/questions/${f.question}/upvotes/mine` }) }],
  validateSolution: [
    { rule: 'owner-or-content-admin', request: () => ({ path: `/solutions/${f.ownSolution}/validate`, body: { validity: 'months_six' } }) },
  ],
  getAnalyticsFlow: [{ request: () => ({ path: '/analytics/flow', query: RANGE }) }],
  getContentHealth: [{ request: () => ({ path: '/analytics/health' }) }],
  listReviewQueue: [{ request: () => ({ path: '/analytics/health/queue' }) }],
  getRoutingAnalytics: [{ request: () => ({ path: '/analytics/routing', query: RANGE }) }],
  getAnalyticsGaps: [{ request: () => ({ path: '/analytics/gaps', query: RANGE }) }],
  getAnalyticsReuse: [{ request: () => ({ path: '/analytics/reuse', query: RANGE }) }],
  getAnalyticsDigestSetting: [{ request: () => ({ path: '/users/me/settings/communication/analytics-digest' }) }],
  updateAnalyticsDigestSetting: [
    { request: () => ({ path: '/users/me/settings/communication/analytics-digest', body: { weekly_digest: false } }) },
  ],
  rebuildAnalytics: [{ request: () => ({ path: '/analytics/rebuild' }) }],
  // The review queue's actions are content's validation and deletion, done as the caller: content's rules decide.
  verifySolution: [
    {
      rule: 'owner-or-content-admin',
      request: () => ({ path: `/analytics/health/solutions/${f.ownSolution}/verify`, body: { validity: 'months_six' } }),
    },
  ],
  markSolutionObsolete: [
    { rule: 'owner-or-content-admin', request: async () => ({ path: `/analytics/health/solutions/${await fresh.solution()}/obsolete` }) },
  ],
  shareSolution: [{ request: () => ({ path: `/solutions/${f.ownSolution}/share`, body: { recipients: [answerer.user.id] } }) }],
  createQuestionComment: [{ request: () => ({ path: `/questions/${f.question}/comments`, body: { description: '<p>a comment</p>' } }) }],
  listQuestionComments: [
    { request: () => ({ path: `/questions/${f.question}/comments` }) },
    { variant: 'a draft', rule: 'owner-or-content-admin', deny: 'hidden', request: () => ({ path: `/questions/${f.draft}/comments` }) },
  ],
  createSolutionComment: [{ request: () => ({ path: `/solutions/${f.ownSolution}/comments`, body: { description: '<p>a comment</p>' } }) }],
  convertCommentToSolution: [
    { rule: 'owner-or-content-admin', request: async () => ({ path: `/comments/${await fresh.comment()}/to-solution` }) },
  ],
  updateComment: [
    { rule: 'owner-or-content-admin', request: () => ({ path: `/comments/${f.comment}`, body: { description: '<p>changed</p>' } }) },
  ],
  deleteComment: [{ rule: 'owner-or-content-admin', request: async () => ({ path: `/comments/${await fresh.comment()}` }) }],
  addQuestionAttachment: [
    {
      rule: 'owner-or-content-admin',
      request: () => ({ path: `/questions/${f.question}/attachments`, upload: { name: 'a.txt', content: 'x' } }),
    },
  ],
  listQuestionAttachments: [{ request: () => ({ path: `/questions/${f.question}/attachments` }) }],
  addSolutionAttachment: [
    {
      rule: 'owner-or-content-admin',
      request: () => ({ path: `/solutions/${f.ownSolution}/attachments`, upload: { name: 'b.txt', content: 'y' } }),
    },
  ],
  listSolutionAttachments: [{ request: () => ({ path: `/solutions/${f.ownSolution}/attachments` }) }],
  downloadAttachment: [{ request: () => ({ path: `/attachments/${f.attachment}/file` }) }],
  deleteAttachment: [{ rule: 'owner-or-content-admin', request: async () => ({ path: `/attachments/${await fresh.attachment()}` }) }],
  forwardQuestion: [{ request: () => ({ path: `/questions/${f.question}/forward`, body: { recipient: answerer.user.id } }) }],
  listQuestionForwards: [{ request: () => ({ path: `/questions/${f.question}/forward` }) }],
  shareQuestion: [{ request: () => ({ path: `/questions/${f.question}/share`, body: { recipients: [answerer.user.id] } }) }],
  getValidationRequest: [{ request: () => ({ path: `/questions/${f.question}/request-validation` }) }],
  requestValidation: [{ request: () => ({ path: `/questions/${f.question}/request-validation` }) }],
  getQuestionLinks: [{ request: () => ({ path: `/questions/${f.question}/links` }) }],
  similarToQuestion: [
    { request: () => ({ path: `/questions/${f.question}/similar` }) },
    // Similar to a published question only: a draft is not found, whoever asks.
    { variant: 'a draft', expect: () => 'hidden', request: () => ({ path: `/questions/${f.draft}/similar` }) },
  ],
  similarToText: [{ request: () => ({ path: '/search/questions-similar', query: { query: 'build cache' } }) }],
  getQuestionExperts: [
    { request: () => ({ path: `/questions/${f.question}/experts` }) },
    // Unpublished: 404 for everybody, the author included (interface).
    { variant: 'a draft', expect: () => 'hidden', request: () => ({ path: `/questions/${f.draft}/experts` }) },
  ],

  countUnreadNotifications: [
    { request: () => ({ path: '/notifications/count' }) },
    {
      variant: 'user_id',
      roles: ['on_behalf_user'],
      ownerExempt: true,
      request: () => ({ path: '/notifications/count', query: { user_id: String(owner.user.id) } }),
    },
  ],
  countUnseenNotifications: [
    { request: () => ({ path: '/notifications/count/unseen' }) },
    {
      variant: 'user_id',
      roles: ['on_behalf_user'],
      ownerExempt: true,
      request: () => ({ path: '/notifications/count/unseen', query: { user_id: String(owner.user.id) } }),
    },
  ],
  listNotifications: [
    { request: () => ({ path: '/notifications' }) },
    {
      variant: 'user_id',
      roles: ['on_behalf_user'],
      ownerExempt: true,
      request: () => ({ path: '/notifications', query: { user_id: String(owner.user.id) } }),
    },
  ],
  markAllNotificationsRead: [{ request: () => ({ path: '/notifications' }) }],
  markAllNotificationsSeen: [{ request: () => ({ path: '/notifications/seen' }) }],
  markNotificationRead: [{ rule: 'owner', deny: 'hidden', request: () => ({ path: `/notifications/${f.notification}/read` }) }],
  markNotificationSeen: [{ rule: 'owner', deny: 'hidden', request: () => ({ path: `/notifications/${f.notification}/seen` }) }],
  listWebhookDeliveries: [{ request: () => ({ path: '/webhooks/deliveries' }) }],

  autocompleteQuestions: [{ request: () => ({ path: '/search/questions-autocomplete', query: { query: 'How do' } }) }],
  suggestTags: [{ request: () => ({ path: '/search/tags/suggestions', body: { title: 'How do I configure the build cache' } }) }],
  findExperts: [{ request: () => ({ path: '/search/experts', body: { query: 'build cache' } }) }],
  getExpertModel: [{ request: () => ({ path: '/search/experts/model' }) }],
  fitExpertModel: [{ request: () => ({ path: '/search/experts/model/fit' }) }],
  indexStatus: [{ request: () => ({ path: '/search/index' }) }],

  createTopicContentExport: [
    { request: () => ({ path: '/export/topic-content', body: { topics: [{ global_concept_id: 'build', label: 'build' }] } }) },
  ],
  listTopicContentExports: [{ request: () => ({ path: '/export/topic-content' }) }],
  getTopicContentExport: [{ request: () => ({ path: `/export/topic-content/${f.topicExport}` }) }],
  downloadTopicContentExport: [{ alsoAllowed: [409], request: () => ({ path: `/export/topic-content/${f.topicExport}/file` }) }],
  createContentExport: [{ request: () => ({ path: '/export/content' }) }],
  listContentExports: [{ request: () => ({ path: '/export/content' }) }],
  getContentExport: [{ request: () => ({ path: `/export/content/${f.contentExport}` }) }],
  downloadContentExport: [{ alsoAllowed: [409], request: () => ({ path: `/export/content/${f.contentExport}/file` }) }],
  getContentExportSchema: [{ request: () => ({ path: '/public/export/content_export.xsd' }) }],
};

async function send(method: string, req: Request, headers: Array<[string, string]>) {
  const m = method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
  let call = system.api[m](`${API}${req.path}`);
  for (const h of headers) call = call.set(...h);
  if (req.query) call = call.query(req.query);
  if (req.upload) return call.attach('file', Buffer.from(req.upload.content), req.upload.name);
  if (req.body !== undefined) return call.send(req.body as object);
  return call;
}

/**
 * Everything the services log (pino writes JSON lines to fd 1 through sonic-boom, which calls
 * fs.write / fs.writeSync) is captured for the whole file, at level trace: no password or token
 * may ever appear in it.
 */
const logLines: string[] = [];
const realWrite = fs.write;
const realWriteSync = fs.writeSync;
const realStdoutWrite = process.stdout.write;
const isLog = (fd: unknown, data: unknown) => (fd === 1 || fd === 2) && String(data).startsWith('{"level":');
function captureLogs() {
  // pino writes to process.stdout when it has been replaced (jest does), else to fd 1 directly.
  process.stdout.write = ((data: any, ...rest: any[]) => {
    if (!isLog(1, data)) return (realStdoutWrite as any).call(process.stdout, data, ...rest);
    logLines.push(String(data));
    const callback = rest.at(-1);
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }) as typeof process.stdout.write;
  (fs as any).writeSync = (fd: number, data: any, ...rest: any[]) => {
    if (!isLog(fd, data)) return (realWriteSync as any)(fd, data, ...rest);
    logLines.push(String(data));
    return Buffer.byteLength(data);
  };
  (fs as any).write = (fd: number, data: any, ...rest: any[]) => {
    if (!isLog(fd, data)) return (realWrite as any)(fd, data, ...rest);
    logLines.push(String(data));
    const callback = rest.at(-1);
    process.nextTick(() => callback(null, Buffer.byteLength(data)));
  };
}

beforeAll(async () => {
  captureLogs();
  system = await startSystem({ LOG_LEVEL: 'trace' });
  admin = bearer(system.adminToken);
  // The matrix sends more than the default per-token budget in a minute; limits have tests of their own.
  await ok(
    system.api
      .put(`${API}/settings`)
      .set(...admin)
      .send({ rate_limit_per_minute: 0, login_attempts_per_minute: 0 }),
  );
  await system.services.users.runtime.relay.flush();

  owner = await system.createUser({ firstname: 'Olivia', lastname: 'Owner' }, ['user']);
  answerer = await system.createUser({ firstname: 'Arne', lastname: 'Answerer' }, ['user']);
  byRole.other = await system.createUser({ firstname: 'Otto', lastname: 'Other' }, ['user']);
  const roles: Role[] = ['manager', 'api_user', 'on_behalf_user', 'super_admin', 'user_admin', 'content_admin', 'settings_admin'];
  for (const role of roles) byRole[role] = await system.createUser({ firstname: role, lastname: 'Holder' }, [role]);

  const fixed = (h: Array<[string, string]>) => async () => h;
  const loginAgain = (u: U) => async (freshToken?: boolean) => [as(freshToken ? await system.login(u.user.email, PASSWORD) : u.token)];
  const revoked = await system.createUser({}, ['user']);
  await ok(system.api.delete(`${API}/auth/token`).set(...revoked.auth), 204);
  callers.push(
    { name: 'anonymous', roles: null, owner: false, headers: fixed([]) },
    { name: 'unknown token', roles: null, owner: false, headers: fixed([as('an-unknown-token-0123456789')]) },
    { name: 'malformed authorization', roles: null, owner: false, headers: fixed([['authorization', 'Basic dXNlcjpwYXNz']]) },
    { name: 'revoked token', roles: null, owner: false, headers: fixed([revoked.auth]) },
    { name: 'owner', roles: ['api_user', 'user'], owner: true, headers: loginAgain(owner) },
    { name: 'not the owner (user)', roles: ['api_user', 'user'], owner: false, headers: loginAgain(byRole.other) },
    ...roles.map((role) => ({
      name: role,
      roles: ['api_user', role] as Role[],
      owner: false,
      headers: loginAgain(byRole[role]),
    })),
    {
      name: 'owner through on_behalf_user',
      roles: ['api_user', 'user'],
      owner: true,
      headers: async (freshToken?: boolean) => [
        ...(await loginAgain(byRole.on_behalf_user)(freshToken)),
        ['x-on-behalf-of-user-id', String(owner.user.id)],
      ],
    },
    {
      name: 'act-on-behalf header without on_behalf_user',
      roles: ['api_user', 'user'],
      owner: false,
      refusedOnBehalf: true,
      headers: async () => [byRole.other.auth, ['x-on-behalf-of-user-id', String(owner.user.id)]],
    },
  );

  f.question = await publishedQuestion(system, owner.token);
  f.draft = await draftQuestion(system, owner.token);
  f.deletedQuestion = await fresh.deletedQuestion();
  f.answererQuestion = await publishedQuestion(system, answerer.token, 'Why is the build cache never hit on CI?');
  f.ownSolution = await publishedSolution(system, owner.token, f.answererQuestion);
  f.answererSolution = await publishedSolution(system, answerer.token, f.question);
  f.draftSolution = await fresh.draftSolution();
  f.deletedSolution = await fresh.deletedSolution();
  f.comment = (
    await ok(
      system.api
        .post(`${API}/questions/${f.question}/comments`)
        .set(...owner.auth)
        .send({ description: '<p>mine</p>' }),
    )
  ).id;
  f.attachment = await fresh.attachment();
  f.category = await fresh.category();
  f.space = (
    await ok(
      system.api
        .post(`${API}/knowledge-spaces`)
        .set(...admin)
        .send({ name: 'An open space' }),
    )
  ).id;
  f.topicExport = (
    await ok(
      system.api
        .post(`${API}/export/topic-content`)
        .set(...admin)
        .send({ topics: [{ global_concept_id: 'b', label: 'build' }] }),
    )
  ).export_id;
  f.contentExport = (await ok(system.api.post(`${API}/export/content`).set(...admin))).export_id;
  // The answerer comments on the owner's question: the owner is notified.
  await ok(
    system.api
      .post(`${API}/questions/${f.question}/comments`)
      .set(...answerer.auth)
      .send({ description: '<p>hello</p>' }),
  );
  f.notification = await waitFor(
    async () => (await system.api.get(`${API}/notifications`).set(...owner.auth)).body.items?.[0]?.id as number | undefined,
    { what: 'a notification of the owner' },
  );
}, 60_000);
afterAll(async () => {
  await system?.stop();
  fs.write = realWrite;
  fs.writeSync = realWriteSync;
  process.stdout.write = realStdoutWrite;
});

describe('the access matrix', () => {
  test('every operation has a scenario', () => {
    const missing = httpOperations.map(([name]) => name).filter((name) => !scenarios[name]);
    expect(missing).toEqual([]);
  });

  test('every operation by every caller answers as the rules say', async () => {
    const mismatches: string[] = [];
    let cells = 0;
    for (const [name, op] of httpOperations) {
      for (const scenario of scenarios[name] ?? []) {
        // The callers of one row run concurrently: each cell has its own fixtures where it needs them.
        await Promise.all(
          callers.map(async (caller) => {
            const want: Outcome = expected(op, scenario, caller);
            const request = await scenario.request(caller);
            const headers = await caller.headers(name === 'revokeToken');
            const res = await send(op.http.method, request, headers);
            const got = outcomeOf(res.status, scenario);
            cells++;
            if (got !== want)
              mismatches.push(
                `${op.http.method} ${op.http.path}${scenario.variant ? ` (${scenario.variant})` : ''} as ${caller.name}: expected ${want}, got ${got} ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`,
              );
            if (want !== 'allowed' && res.status >= 400)
              expect(res.body.code).toBe({ unauthorized: 'Unauthorized', forbidden: 'Forbidden', hidden: 'NotFound' }[want]);
          }),
        );
      }
    }
    console.log(`access matrix: ${cells} cells checked (${httpOperations.length} operations × ${callers.length} callers, with variants)`);
    expect(mismatches).toEqual([]);
  }, 120_000);
});

const get = (path: string, auth: [string, string]) => system.api.get(`${API}${path}`).set(...auth);
const ids = (res: { body: { items: Array<{ id: number }> } }) => res.body.items.map((i) => i.id);

describe('deleted, draft and closed-space content is invisible to those who may not see it', () => {
  let other: U;
  let contentAdmin: U;
  const qd = { id: 0, title: 'Quokka hovercraft maintenance deleted schedule' };
  const draft = { id: 0, title: 'Quokka hovercraft draft never published' };
  const live = { id: 0, solution: 0, comment: 0 };
  const closed = { id: 0, space: 0, title: 'Quokka hovercraft secrets of a closed space' };

  beforeAll(async () => {
    other = byRole.other;
    contentAdmin = byRole.content_admin;
    qd.id = await publishedQuestion(system, owner.token, qd.title);
    await ok(system.api.delete(`${API}/questions/${qd.id}`).set(...owner.auth), 204);
    draft.id = (
      await ok(
        system.api
          .post(`${API}/questions`)
          .set(...owner.auth)
          .send({ title: draft.title, description: '<p>zyxomatic</p>' }),
      )
    ).id;
    live.id = await publishedQuestion(system, owner.token, 'Quokka hovercraft engine keeps stalling');
    live.solution = await publishedSolution(system, answerer.token, live.id, '<p>Replace the flibbertigibbet valve.</p>');
    await ok(system.api.delete(`${API}/solutions/${live.solution}`).set(...answerer.auth), 204);
    live.comment = (
      await ok(
        system.api
          .post(`${API}/questions/${live.id}/comments`)
          .set(...answerer.auth)
          .send({ description: '<p>snorkelwhistle</p>' }),
      )
    ).id;
    await ok(system.api.delete(`${API}/comments/${live.comment}`).set(...answerer.auth), 204);
    // A closed space with the answerer as its only member, and a question in it.
    closed.space = (
      await ok(
        system.api
          .post(`${API}/knowledge-spaces`)
          .set(...admin)
          .send({ name: 'Closed', is_closed: true }),
      )
    ).id;
    await ok(
      system.api
        .put(`${API}/knowledge-spaces/${closed.space}/members`)
        .set(...admin)
        .send({ user_ids: [answerer.user.id] }),
    );
    const c = await ok(
      system.api
        .post(`${API}/questions`)
        .set(...answerer.auth)
        .send({ title: closed.title, description: '<p>only members</p>', knowledge_space: closed.space, tags: ['build'] }),
    );
    closed.id = c.id;
    await ok(system.api.put(`${API}/questions/${closed.id}/publish`).set(...answerer.auth));
    await system.searchCaughtUp();
  });

  test('single reads: 404 for deleted, draft and closed-space questions, deleted solutions and comments', async () => {
    for (const path of [
      `/questions/${qd.id}`,
      `/questions/${qd.id}/complete`,
      `/questions/${qd.id}/comments`,
      `/questions/${draft.id}`,
      `/questions/${draft.id}/complete`,
      `/questions/${closed.id}`,
      `/questions/${closed.id}/complete`,
      `/questions/${closed.id}/experts`,
      `/questions/${closed.id}/similar`,
      `/solutions/${live.solution}`,
      `/solutions/${live.solution}/attachments`,
    ]) {
      const res = await get(path, other.auth);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NotFound']);
    }
    expect((await get(`/questions/${closed.id}`, answerer.auth)).status).toBe(200);
    expect((await get(`/questions/${qd.id}`, contentAdmin.auth)).status).toBe(200);
    // The question's own page leaves the deleted solution and comment out.
    const complete = await get(`/questions/${live.id}/complete`, other.auth);
    expect(complete.status).toBe(200);
    expect(complete.body.solutions.map((s: { id: number }) => s.id)).not.toContain(live.solution);
    expect(complete.body.comments.map((c: { id: number }) => c.id)).not.toContain(live.comment);
    expect(ids(await get(`/questions/${live.id}/comments`, other.auth))).not.toContain(live.comment);
    // Editing what one cannot see is 404 too, not 403: the caller learns nothing.
    const edit = await system.api
      .put(`${API}/questions/${draft.id}`)
      .set(...other.auth)
      .send({ title: 'Someone else edits this draft' });
    expect(edit.status).toBe(404);
  });

  test('lists, search, autocomplete and similar leave them out (include_deleted only for content admins)', async () => {
    const hidden = [qd.id, draft.id, closed.id];
    for (const query of ['', '?query=quokka', '?query=quokka&include_deleted=true', '?query=zyxomatic', '?limit=100']) {
      const res = await get(`/questions${query}`, other.auth);
      expect(res.status).toBe(200);
      expect(ids(res).filter((id) => hidden.includes(id))).toEqual([]);
    }
    // Text of a deleted solution or comment does not find the question.
    for (const word of ['flibbertigibbet', 'snorkelwhistle']) expect(ids(await get(`/questions?query=${word}`, other.auth))).toEqual([]);
    const auto = await get('/search/questions-autocomplete?query=quokka%20hov&limit=20', other.auth);
    expect(auto.status).toBe(200);
    expect(auto.body.items).not.toEqual(expect.arrayContaining([qd.title]));
    expect(auto.body.items.filter((t: string) => [qd.title, draft.title, closed.title].includes(t))).toEqual([]);
    const similar = await get('/search/questions-similar?query=quokka%20hovercraft%20maintenance%20schedule&limit=100', other.auth);
    expect(ids(similar).filter((id) => hidden.includes(id))).toEqual([]);
    expect(ids(await get(`/questions/${live.id}/similar?limit=100`, other.auth)).filter((id) => hidden.includes(id))).toEqual([]);
    // The member finds the closed-space question; a content admin finds the deleted one on request.
    expect(ids(await get('/questions?query=quokka', answerer.auth))).toContain(closed.id);
    expect(ids(await get('/questions?query=quokka&include_deleted=true', contentAdmin.auth))).toContain(qd.id);
    expect(ids(await get('/questions?query=quokka', contentAdmin.auth))).not.toContain(qd.id);
  });

  test('deleted and hidden users are not listed for other users (a deleted user stays readable by id, marked)', async () => {
    const gone = await fresh.user();
    await ok(system.api.delete(`${API}/users/${gone}`).set(...admin), 204);
    // Content keeps pointing at its authors: the profile answers with is_deleted (test/users.test.ts decides so).
    expect((await get(`/users/${gone}`, byRole.other.auth)).body.is_deleted).toBe(true);
    const hidden = await ok(
      system.api
        .post(`${API}/users`)
        .set(...admin)
        .send({ email: 'hidden-person@example.com', firstname: 'Hilda', lastname: 'Hiddenperson', language: 'en', is_hidden: true }),
    );
    for (const caller of [byRole.other, byRole.content_admin]) {
      expect(ids(await get('/users?query=Hiddenperson', caller.auth))).not.toContain(hidden.id);
      expect(ids(await get(`/users?query=Soon&limit=100`, caller.auth))).not.toContain(gone);
      expect((await get('/users?include=hidden', caller.auth)).status).toBe(403);
    }
    expect(ids(await get('/users?query=Hiddenperson&include=hidden', byRole.user_admin.auth))).toContain(hidden.id);
  });

  test("another user's draft solution is never shown", async () => {
    const q = await publishedQuestion(system, answerer.token, 'Quokka hovercraft: which fuel is best?');
    const draftSolution = await ok(
      system.api
        .post(`${API}/questions/${q}/solutions`)
        .set(...owner.auth)
        .send({ description: '<p>unfinished</p>' }),
    );
    expect((await get(`/solutions/${draftSolution.id}`, other.auth)).status).toBe(404);
    expect((await get(`/questions/${q}/solutions/draft`, other.auth)).status).toBe(204);
    expect((await get(`/questions/${q}/solutions/draft`, owner.auth)).body.id).toBe(draftSolution.id);
    expect((await get(`/questions/${q}/complete`, other.auth)).body.solutions).toEqual([]);
    expect((await get(`/questions/${q}/complete`, answerer.auth)).body.solutions).toEqual([]);
  });
});

describe("other users' notifications and settings", () => {
  test('notifications: never listed, counted or marked for another user', async () => {
    const other = byRole.other;
    const mine = await get('/notifications?limit=1000', owner.auth);
    const ownerIds = ids(mine);
    expect(ownerIds).toContain(f.notification);
    expect(ids(await get('/notifications?limit=1000', other.auth)).filter((id) => ownerIds.includes(id))).toEqual([]);
    const before = (await get('/notifications/count', owner.auth)).body.notifications;
    // A fresh unread notification of the owner.
    await ok(
      system.api
        .post(`${API}/questions/${f.question}/share`)
        .set(...answerer.auth)
        .send({ recipients: [owner.user.id] }),
    );
    const fresh = await waitFor(
      async () => {
        const items = (await get('/notifications?ignore_read=true', owner.auth)).body.items as Array<{ id: number; type: string }>;
        return items.find((n) => n.type === 'share_question');
      },
      { what: 'a share notification' },
    );
    for (const path of [`/notifications/${fresh.id}/read`, `/notifications/${fresh.id}/seen`]) {
      const res = await system.api.put(`${API}${path}`).set(...other.auth);
      expect(res.status).toBe(404);
    }
    await ok(system.api.put(`${API}/notifications`).set(...other.auth));
    await ok(system.api.put(`${API}/notifications/seen`).set(...other.auth));
    const after = await get('/notifications?ignore_read=true', owner.auth);
    expect(after.body.items.find((n: { id: number }) => n.id === fresh.id)).toMatchObject({ is_read: false, is_seen: false });
    expect((await get('/notifications/count', owner.auth)).body.notifications).toBeGreaterThan(before - 1);
    // user_id of somebody else needs on_behalf_user.
    for (const path of ['/notifications', '/notifications/count', '/notifications/count/unseen'])
      expect((await get(`${path}?user_id=${owner.user.id}`, other.auth)).status).toBe(403);
  });

  test('settings belong to the caller: no path reaches another user’s, and changing one’s own leaves others alone', async () => {
    const other = byRole.other;
    for (const path of [`/users/${owner.user.id}/settings`, `/users/${owner.user.id}/settings/communication/email`])
      expect((await get(path, other.auth)).status).toBe(404);
    await ok(
      system.api
        .put(`${API}/users/me/settings/communication/email`)
        .set(...owner.auth)
        .send({ new_solution: 'on' }),
    );
    await ok(
      system.api
        .put(`${API}/users/me/settings/communication/email`)
        .set(...other.auth)
        .send({ new_solution: 'off' }),
    );
    expect((await get('/users/me/settings/communication/email', owner.auth)).body.new_solution).toBe('on');
    // Another user's profile shows neither roles nor anything secret.
    const profile = await get(`/users/${owner.user.id}`, other.auth);
    expect(profile.status).toBe(200);
    expect(profile.body).not.toHaveProperty('roles');
    expect(Object.keys(profile.body).filter((k) => /password|token|hash|secret/i.test(k))).toEqual([]);
    expect(JSON.stringify(profile.body)).not.toMatch(/scrypt/);
  });
});

/** Every string in a response that looks like an email address. */
function emails(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(...(value.match(/[^\s"<>@]+@[a-z0-9.-]+\.[a-z]+/gi) ?? []));
  else if (Array.isArray(value)) for (const v of value) emails(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) emails(v, out);
  return out;
}

describe('anonymize_users_email', () => {
  beforeAll(async () => {
    await ok(
      system.api
        .put(`${API}/settings`)
        .set(...admin)
        .send({ anonymize_users_email: true }),
    );
    await system.services.users.runtime.relay.flush();
    await system.routed();
  });
  afterAll(async () => {
    await ok(
      system.api
        .put(`${API}/settings`)
        .set(...admin)
        .send({ anonymize_users_email: false }),
    );
  });

  test('every response that embeds users disguises their email for unprivileged callers', async () => {
    const other = byRole.other;
    // The other user gets a notification caused by the owner (its `user` is the owner).
    await ok(
      system.api
        .post(`${API}/questions/${f.question}/share`)
        .set(...owner.auth)
        .send({ recipients: [other.user.id] }),
    );
    await ok(
      system.api
        .post(`${API}/questions/${f.question}/forward`)
        .set(...owner.auth)
        .send({ recipient: other.user.id }),
    );
    await waitFor(async () => (await get('/notifications', other.auth)).body.total > 0, { what: 'a notification of the other user' });
    const callers = [other, byRole.manager, byRole.content_admin, byRole.settings_admin, byRole.user_admin];
    const paths = [
      '/users?limit=100',
      `/users/${owner.user.id}`,
      `/users?query=${encodeURIComponent(owner.user.email)}`,
      `/questions/${f.question}/complete`,
      `/questions/${f.question}/comments`,
      `/questions/${f.question}/forward`,
      `/questions/${f.question}/experts`,
      '/notifications?limit=100',
    ];
    let checked = 0;
    let disguised = 0;
    for (const caller of callers) {
      const own = String(caller.user.email).toLowerCase();
      for (const path of paths) {
        const res = await get(path, caller.auth);
        expect([path, res.status]).toEqual([path, 200]);
        const clear = emails(res.body).filter((e) => e.toLowerCase() !== own && !/^.\*\*\*@/.test(e));
        expect([caller.user.email, path, clear]).toEqual([caller.user.email, path, []]);
        disguised += emails(res.body).filter((e) => /^.\*\*\*@/.test(e)).length;
        checked++;
      }
      const experts = await system.api
        .post(`${API}/search/experts`)
        .set(...caller.auth)
        .send({ query: 'build cache' });
      expect(emails(experts.body).filter((e) => e.toLowerCase() !== own && !/^.\*\*\*@/.test(e))).toEqual([]);
    }
    // The disguise has the contract's shape, and the owner still sees their own address.
    expect((await get(`/users/${owner.user.id}`, other.auth)).body.email).toMatch(/^o\*\*\*@example\.com$|^u\*\*\*@example\.com$/);
    expect((await get('/users/me', owner.auth)).body.email).toBe(owner.user.email);
    // Only user_admin may ask for the real addresses.
    expect((await get('/users?deanonymize_users_email=true', other.auth)).status).toBe(403);
    const deanonymized = await get(
      `/users?deanonymize_users_email=true&query=${encodeURIComponent(owner.user.email)}`,
      byRole.user_admin.auth,
    );
    expect(deanonymized.body.items.map((u: { email: string }) => u.email)).toContain(owner.user.email);
    expect(checked).toBe(callers.length * paths.length);
    expect(disguised).toBeGreaterThan(callers.length * 3);
    // Notifications carry the disguised causer.
    const notes = (await get('/notifications?limit=100', other.auth)).body.items as Array<{ user: { id: number; email: string } | null }>;
    const byOwner = notes.filter((n) => n.user?.id === owner.user.id);
    expect(byOwner.length).toBeGreaterThan(0);
    for (const n of byOwner) expect(n.user!.email).toMatch(/^.\*\*\*@example\.com$/);
  });
});

describe('secrets', () => {
  test('the logger redacts passwords, tokens, secrets and authorization headers', () => {
    const before = logLines.length;
    const logger = createLogger('access-test', 'trace');
    logger.info(
      {
        password: 'pw-top-secret',
        token: 'tok-top-secret',
        webhook_secret: 'hook-top-secret',
        authorization: 'Bearer auth-top-secret',
        headers: { authorization: 'Bearer hdr-top-secret' },
        req: { headers: { authorization: 'Bearer req-top-secret' } },
        body: { password: 'body-pw-secret', token: 'body-tok-secret' },
      },
      'a line with secrets',
    );
    logger.flush();
    const line = logLines.slice(before).join('');
    expect(line).toContain('a line with secrets');
    expect(line).toContain('[redacted]');
    expect(line).not.toMatch(/top-secret|body-pw-secret|body-tok-secret/);
  });

  test('no password or token ever reached the services’ logs', async () => {
    // A failing login and password changes happen while the logs are captured, too.
    await system.api.post(`${API}/auth/login`).send({ email: owner.user.email, password: 'a-wrong-password-xyz' });
    await ok(
      system.api
        .put(`${API}/users/${answerer.user.id}`)
        .set(...admin)
        .send({ password: 'a-new-password-5678' }),
    );
    const own = await system.createUser();
    await ok(
      system.api
        .put(`${API}/users/${own.user.id}`)
        .set(...own.auth)
        .send({ password: 'an-own-password-5678', current_password: PASSWORD }),
    );
    await system.flushLogs();
    expect(logLines.length).toBeGreaterThan(0);
    const text = logLines.join('\n');
    const secrets = [
      PASSWORD,
      ADMIN.password,
      'a-wrong-password-xyz',
      'a-new-password-5678',
      'an-own-password-5678',
      system.adminToken,
      owner.token,
      answerer.token,
      ...Object.values(byRole).map((u) => u.token),
    ];
    for (const secret of secrets) expect(text.includes(secret) ? secret : null).toBeNull();
  });

  test('passwords are stored as scrypt hashes and tokens as sha256 hashes; no table anywhere holds them in clear', async () => {
    const db = createDb<any>({ url: system.env.DATABASE_URL, schema: 'users', poolSize: 1 });
    try {
      const users = await db.selectFrom('users').select(['email', 'password_hash']).execute();
      for (const u of users.filter((r) => r.password_hash !== null))
        expect(u.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
      const tokens = await db.selectFrom('tokens').select('token_hash').execute();
      const hashes = new Set(tokens.map((t) => t.token_hash));
      for (const u of [owner, answerer]) expect(hashes.has(createHash('sha256').update(u.token).digest('hex'))).toBe(true);
      // Every row of every table of every service, as text: no password, no token.
      const tables = await sql<{ table_schema: string; table_name: string }>`
        select table_schema, table_name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db);
      const secrets = [PASSWORD, ADMIN.password, 'a-new-password-5678', system.adminToken, owner.token, answerer.token, byRole.other.token];
      let scanned = 0;
      for (const t of tables.rows) {
        const rows = await sql<{
          row: string;
        }>`select row_to_json(t)::text as row from ${sql.table(`${t.table_schema}.${t.table_name}`)} t`.execute(db);
        for (const { row } of rows.rows) {
          scanned++;
          for (const secret of secrets)
            if (row.includes(secret)) throw new Error(`${t.table_schema}.${t.table_name} holds a secret: ${row.slice(0, 200)}`);
        }
      }
      expect(scanned).toBeGreaterThan(100);
    } finally {
      await db.destroy();
    }
  });
});
