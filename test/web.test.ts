import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { waitFor } from '@kn/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { ADMIN, bearer, type System, startSystem } from './system.ts';
import { buildWebApp, launchChromium } from './web-app.ts';

/*
 * The web app (web/) end to end in Debian's Chromium (infra/ensure-browser.sh), against the whole
 * system: built into a folder of this file's own and served by the gateway (WEB_ROOT). Screenshots
 * of the main pages go to test-results/screenshots/ (gitignored) for a developer to look at.
 */

const SHOTS = path.join('test-results', 'screenshots');
const PASSWORD = 'web-password-1234';
/** The largest attachment this file's system takes (ATTACHMENT_MAX_BYTES), small so a browser upload over it is quick. */
const MAX_ATTACHMENT = 64 * 1024;

let system: System;
let browser: Browser;
let webRoot: string;
const contexts: BrowserContext[] = [];

interface Person {
  id: number;
  email: string;
  token: string;
}

/** A person of the network with the default roles only (no api_user: the web app is for everyone). */
async function person(firstname: string, lastname: string): Promise<Person> {
  const email = `${firstname.toLowerCase()}.${lastname.toLowerCase()}-${Math.random().toString(36).slice(2, 7)}@example.com`;
  const res = await system.api
    .post(`${API}/users`)
    .set(...bearer(system.adminToken))
    .send({ email, firstname, lastname, language: 'en', password: PASSWORD, roles: ['user'] });
  if (res.status !== 201) throw new Error(`creating ${firstname} failed: ${res.status} ${JSON.stringify(res.body)}`);
  // What the test prepares through the API it does on the person's behalf (they have no API access of their own).
  const token = await system.api
    .post(`${API}/auth/tokens`)
    .set(...bearer(system.adminToken))
    .send({ user_id: res.body.id });
  return { id: res.body.id, email, token: token.body.token };
}

async function newPage(width = 1280, height = 900): Promise<Page> {
  const context = await browser.newContext({ baseURL: system.url, viewport: { width, height } });
  contexts.push(context);
  const page = await context.newPage();
  // Any script error of the app fails the test that caused it.
  page.on('pageerror', (err) => {
    throw err;
  });
  return page;
}

async function signIn(page: Page, email: string, password = PASSWORD, next = '/') {
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel(/email/i).fill(email);
  await page.getByLabel(/password|passwort/i).fill(password);
  await page.locator('form button[type=submit]').click();
  await page.locator('header nav').waitFor();
}

/** No serious or critical accessibility violation on the page as it stands. */
async function accessible(page: Page, name: string) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${name}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad).toEqual([]);
}

/** The person's interface language, set through the API (as the settings page does). */
async function speak(who: Person, language: string) {
  const res = await system.api
    .put(`${API}/users/me/settings`)
    .set(...bearer(who.token))
    .send({ interface_language: language });
  expect(res.status).toBe(200);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  webRoot = buildWebApp();
  mkdirSync(SHOTS, { recursive: true });
  // AUTH_CACHE_MS 0: a session that expires is refused at its next request (the expiry test).
  system = await startSystem({ WEB_ROOT: webRoot, AUTH_CACHE_MS: '0', ATTACHMENT_MAX_BYTES: String(MAX_ATTACHMENT) });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await system?.stop();
  rmSync(webRoot, { recursive: true, force: true });
});

describe('safe by default', () => {
  test('pages carry a Content-Security-Policy without inline scripts or styles; the session cookie is HttpOnly and SameSite=Strict', async () => {
    const page = await system.api.get('/ask');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="app">');
    const csp = page.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>|<style|style=/);
    // Assets go gzipped to browsers that take it, cached for good (their names change with their content).
    const script = /src="(\/assets\/app-\w+\.js)"/.exec(page.text)![1]!;
    const asset = await system.api.get(script).set('accept-encoding', 'gzip');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-encoding']).toBe('gzip');
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toContain('immutable');

    const signIn = await system.api.post('/session').send(ADMIN);
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers['set-cookie'][0] as string;
    expect(cookie).toMatch(/^kn_session=[\w-]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const session = cookie.split(';')[0]!;
    const csrf = signIn.body.csrf as string;

    // Reads need the cookie only; changes need the CSRF token too, and from this origin.
    expect((await system.api.get(`${API}/users/me`).set('cookie', session)).body.email).toBe(ADMIN.email);
    const change = () =>
      system.api.put(`${API}/users/me/settings/communication/email`).set('cookie', session).send({ question_edited: 'off' });
    expect((await change()).status).toBe(403);
    expect((await change().set('x-csrf-token', 'forged')).status).toBe(403);
    expect((await change().set('x-csrf-token', csrf).set('origin', 'https://evil.example')).status).toBe(403);
    expect((await change().set('x-csrf-token', csrf)).status).toBe(200);
    // The session token is no bearer token, and a bearer token is no session cookie.
    const token = decodeURIComponent(session.split('=')[1]!);
    expect((await system.api.get(`${API}/users/me`).set(...bearer(token))).status).toBe(401);
    expect((await system.api.get(`${API}/users/me`).set('cookie', `kn_session=${system.adminToken}`)).status).toBe(401);
    // Signing in from another site is refused; signing out revokes the session.
    expect((await system.api.post('/session').set('origin', 'https://evil.example').send(ADMIN)).status).toBe(403);
    expect((await system.api.delete('/session').set('cookie', session)).status).toBe(403);
    expect((await system.api.delete('/session').set('cookie', session).set('x-csrf-token', csrf)).status).toBe(204);
    expect((await system.api.get(`${API}/users/me`).set('cookie', session)).status).toBe(401);
  });
});

describe('what a page may lead to and load', () => {
  test('after signing in, `next` leads only to a page of this origin: anything else to the questions, without a script error', async () => {
    const who = await person('Nora', 'Next');
    const origin = new URL(system.url).origin;
    for (const [next, path] of [
      ['/\\evil.example', '/'],
      ['//evil.example', '/'],
      ['/\t/evil.example', '/'],
      ['https://evil.example/', '/'],
      ['javascript:alert(1)', '/'],
      ['//[', '/'],
      ['/sign-in?next=/admin', '/'],
      ['/experts?from=next', '/experts?from=next'],
    ] as const) {
      const page = await browser.newPage({ baseURL: system.url });
      const errors: Error[] = [];
      page.on('pageerror', (err) => errors.push(err));
      try {
        await signIn(page, who.email, PASSWORD, next);
        const url = new URL(page.url());
        expect({ next, errors: errors.map(String), at: url.origin + url.pathname + url.search }).toEqual({
          next,
          errors: [],
          at: origin + path,
        });
      } finally {
        await page.close();
      }
    }
  });

  test('the API reference page draws the operations under its Content-Security-Policy, asking no other host', async () => {
    const page = await newPage();
    const refused: string[] = [];
    const elsewhere: string[] = [];
    // What the policy refused, as the page learns it.
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => console.error('refused: ' + e.violatedDirective + ' ' + e.blockedURI))",
    );
    page.on('console', (msg) => {
      if (msg.text().startsWith('refused: ')) refused.push(msg.text());
    });
    page.on('request', (req) => {
      if (!req.url().startsWith(system.url) && !req.url().startsWith('data:')) elsewhere.push(req.url());
    });
    await page.goto(`${API}/docs`);
    const operation = page.locator('.opblock', { hasText: '/questions/{id}' }).first();
    await operation.locator('.opblock-summary').click();
    // Try it out: the request goes to this gateway (without a token: 401, drawn with its highlighting).
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('input[placeholder="id"]').fill('1');
    await operation.getByRole('button', { name: 'Execute' }).click();
    await operation.locator('.live-responses-table .response-col_status', { hasText: '401' }).waitFor();
    expect(refused).toEqual([]);
    expect(elsewhere).toEqual([]);
    await shot(page, 'api-docs');
  });
});

describe('people of the network', () => {
  let asker: Person;
  let expert: Person;
  let questionUrl: string;

  beforeAll(async () => {
    asker = await person('Anna', 'Asker');
    expert = await person('Erik', 'Expert');
    // Erik has answered about hops before: publishing a hops question routes it to him.
    const earlier = await system.api
      .post(`${API}/questions`)
      .set(...bearer(asker.token))
      .send({ title: 'When should I add hops to the boil?', description: '<p>hops bitterness aroma</p>', tags: ['hops'] });
    await system.api.put(`${API}/questions/${earlier.body.id}/publish`).set(...bearer(asker.token));
    await publishedSolution(system, expert.token, earlier.body.id, '<p>Bittering hops early, aroma hops at flameout.</p>');
    await system.searchCaughtUp();
  });

  test('one person asks, an expert is notified without reloading, answers, and the asker accepts and rates', async () => {
    const expertPage = await newPage();
    await signIn(expertPage, expert.email);
    await expertPage.locator('h1').waitFor();

    const page = await newPage();
    await signIn(page, asker.email);
    await shot(page, 'questions');
    await accessible(page, 'questions');
    await page.getByRole('link', { name: 'Ask', exact: true }).click();
    await page.getByLabel('Title').fill('Which hops give a citrus aroma to a pale ale?');
    await page.getByLabel('Description').fill('I brew a pale ale and want more citrus from the hops.');
    // Similar questions while typing: the earlier hops question.
    await page.locator('ul.similar a', { hasText: 'When should I add hops to the boil?' }).waitFor();
    await page.getByLabel(/^Tags/).fill('hops');
    await shot(page, 'ask');
    await accessible(page, 'ask');
    await page.getByRole('button', { name: 'Publish' }).click();
    await expect(page.getByTestId('experts-asked').textContent()).resolves.toMatch(
      /^(1 expert was|[2-9]\d* experts were|1\d+ experts were) asked/,
    );
    await page.locator('li', { hasText: 'Erik Expert' }).waitFor();
    await page.getByRole('link', { name: 'Open your question' }).click();
    await page.locator('h1', { hasText: 'Which hops give a citrus aroma' }).waitFor();
    questionUrl = new URL(page.url()).pathname;

    // The expert's unseen count comes by itself (polling), then the notification leads to the question.
    await system.routed();
    await expertPage.getByTestId('unseen').waitFor({ timeout: 40_000 });
    await expertPage.getByRole('link', { name: /Notifications/ }).click();
    await accessible(expertPage, 'notifications');
    await shot(expertPage, 'notifications');
    await expertPage.locator('ul.notifications a', { hasText: /citrus/ }).click();
    await expertPage.getByRole('textbox', { name: 'Your solution' }).fill('Citra and Mosaic late in the boil and as dry hops.');
    await expertPage.getByRole('button', { name: 'Publish solution' }).click();
    await expertPage.getByRole('status').filter({ hasText: 'Solution published.' }).waitFor();
    // Only the asker may accept: the expert is offered no Accept, not even on their own solution.
    await expertPage.locator('article.solution', { hasText: 'Citra and Mosaic' }).waitFor();
    expect(await expertPage.getByRole('button', { name: 'Accept' }).count()).toBe(0);

    await page.reload();
    const solution = page.locator('article.solution', { hasText: 'Citra and Mosaic' });
    await solution.waitFor();
    await solution.getByRole('button', { name: 'Accept' }).click();
    await solution.getByText('Accepted by the asker').waitFor();
    // One click upvotes.
    await solution.getByRole('button', { name: 'Helpful' }).click();
    await solution.getByText('1 vote', { exact: true }).waitFor();
    await shot(page, 'question');
    await accessible(page, 'question');
    // Two people in two browsers, the routing and the unseen count's polling between them.
  }, 120_000);

  test('a search shows highlighted results, without the internal score, kept in the address', async () => {
    await system.searchCaughtUp();
    const page = await newPage();
    await signIn(page, asker.email);
    await page.getByLabel('Search questions').fill('citrus');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const hit = page.locator('ol.questions li', { hasText: 'Which hops give a citrus aroma' });
    await hit.waitFor();
    await expect(hit.locator('em').first().textContent()).resolves.toMatch(/citrus/i);
    expect(await hit.textContent()).not.toMatch(/Relevance|\d\.\d\d/);
    await page.getByRole('navigation', { name: 'Sort by' }).getByRole('link', { name: 'Relevance' }).waitFor();
    expect(new URL(page.url()).searchParams.get('q')).toBe('citrus');
    await shot(page, 'search');
    await accessible(page, 'search');
  });

  test('attachments of a question: listed, uploaded by the asker, downloaded; a file too large is refused in the person’s language and nothing is attached', async () => {
    const questionId = Number(questionUrl.split('/').pop());
    const page = await newPage();
    await signIn(page, asker.email, PASSWORD, questionUrl);
    const menu = () => page.locator('article.question summary', { hasText: 'Attachments and sharing' }).click();
    await menu();
    await page.getByText('No attachments.').waitFor();
    await page
      .getByLabel('File to attach')
      .setInputFiles({ name: 'hop-schedule.txt', mimeType: 'text/plain', buffer: Buffer.from('Citra 20 g at flameout') });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('status').filter({ hasText: 'hop-schedule.txt is attached.' }).waitFor();
    const link = page.getByRole('link', { name: 'hop-schedule.txt' });
    // The link downloads the bytes with the session cookie alone.
    const download = await page.request.get((await link.getAttribute('href'))!);
    expect(download.status()).toBe(200);
    expect(await download.text()).toBe('Citra 20 g at flameout');
    await accessible(page, 'attachments');

    const tooLarge = { name: 'too-large.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(MAX_ATTACHMENT + 1, 7) };
    await page.getByLabel('File to attach').setInputFiles(tooLarge);
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('alert').getByText('The file is too large: nothing was attached.').waitFor();
    await shot(page, 'attachment-too-large');
    // In German after a change of language: the same answer of the API in German.
    await speak(asker, 'de');
    try {
      await page.reload();
      await page.locator('article.question summary', { hasText: 'Anhänge und Teilen' }).click();
      await page.getByLabel('Datei zum Anhängen').setInputFiles(tooLarge);
      await page.getByRole('button', { name: 'Hochladen' }).click();
      await page.getByRole('alert').getByText('Die Datei ist zu groß: Es wurde nichts angehängt.').waitFor();
    } finally {
      await speak(asker, 'en');
    }
    // Nothing half-done: the list, in the page and in the API, holds the first file only.
    await expect(page.locator('.attachments li').allTextContents()).resolves.toEqual([expect.stringContaining('hop-schedule.txt')]);
    const listed = await system.api.get(`${API}/questions/${questionId}/attachments`).set(...bearer(asker.token));
    expect(listed.body.items.map((a: { name: string }) => a.name)).toEqual(['hop-schedule.txt']);

    // Anyone may download; only the asker (and content administrators) may attach.
    const expertPage = await newPage();
    await signIn(expertPage, expert.email, PASSWORD, questionUrl);
    await expertPage.locator('article.question summary', { hasText: 'Attachments and sharing' }).click();
    await expertPage.getByRole('link', { name: 'hop-schedule.txt' }).waitFor();
    expect(await expertPage.getByLabel('File to attach').count()).toBe(0);
  });

  test('validity: the author validates a solution, its validity and its expiry are shown, a validation is requested; a comment becomes a solution', async () => {
    const questionId = Number(questionUrl.split('/').pop());
    const expertPage = await newPage();
    await signIn(expertPage, expert.email, PASSWORD, questionUrl);
    const solution = expertPage.locator('article.solution', { hasText: 'Citra and Mosaic' });
    await solution.locator('summary', { hasText: 'Change validity' }).click();
    await solution.getByLabel('Valid for').selectOption('year_one');
    await solution.getByRole('button', { name: 'Validate' }).click();
    await solution.getByText(/^Valid until /).waitFor();
    // The author attaches a file to the solution (its attachments are loaded once opened).
    await solution.locator('summary', { hasText: 'Attachments and sharing' }).click();
    await solution.getByText('No attachments.').waitFor();
    await solution
      .getByLabel('File to attach')
      .setInputFiles({ name: 'mosaic.txt', mimeType: 'text/plain', buffer: Buffer.from('Mosaic 30 g') });
    await solution.getByRole('button', { name: 'Upload' }).click();
    await solution.getByRole('status').filter({ hasText: 'mosaic.txt is attached.' }).waitFor();
    await solution.getByRole('link', { name: 'mosaic.txt' }).waitFor();

    // The solution's validity runs out (as a year later).
    await system.services.content.runtime.db
      .updateTable('solutions')
      .set({ expires: new Date(Date.now() - 60_000) })
      .where('question_id', '=', questionId)
      .execute();
    await expertPage.reload();
    await expertPage
      .locator('article.solution', { hasText: 'Citra and Mosaic' })
      .getByText(/^Expired on /)
      .waitFor();

    // The asker may not validate another's solution, but may request a validation.
    const page = await newPage();
    await signIn(page, asker.email, PASSWORD, questionUrl);
    await page
      .locator('article.solution', { hasText: 'Citra and Mosaic' })
      .getByText(/^Expired on /)
      .waitFor();
    expect(await page.getByRole('button', { name: 'Validate' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Request validation' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Validation requested/ })
      .waitFor();

    // The expert comments; the asker turns the comment into a solution.
    const questionComments = expertPage.getByRole('region', { name: 'Comments on the question' });
    await questionComments.getByRole('button', { name: 'Add a comment' }).click();
    await questionComments.getByLabel('Your comment').fill('A whirlpool addition at 80 °C keeps the citrus too.');
    await expertPage.getByRole('button', { name: 'Comment', exact: true }).click();
    await expertPage.locator('ul.comments li', { hasText: 'whirlpool addition' }).waitFor();
    await page.reload();
    await page.locator('ul.comments li', { hasText: 'whirlpool addition' }).getByRole('button', { name: 'Make it a solution' }).click();
    await page.locator('article.solution', { hasText: 'whirlpool addition' }).waitFor();
    expect(await page.locator('ul.comments li', { hasText: 'whirlpool addition' }).count()).toBe(0);
    await shot(page, 'question-validity');
    await accessible(page, 'question-validity');
  });

  test('sharing a question with several people and forwarding it to one; authors are read once, together, however often the page is shown', async () => {
    const questionId = Number(questionUrl.split('/').pop());
    const carl = await person('Carl', 'Colleague');
    const page = await newPage();
    const userReads: string[] = [];
    page.on('request', (req) => {
      if (/\/api\/v1\/users\/(\d+|by-id)$/.test(new URL(req.url()).pathname)) userReads.push(req.url());
    });
    await signIn(page, asker.email, PASSWORD, questionUrl);
    await page.locator('article.question summary', { hasText: 'Attachments and sharing' }).click();
    const share = page.getByRole('region', { name: 'Share or forward' });
    await share.getByLabel('Find people (name or email)').fill('Erik');
    await share.getByLabel('Erik Expert').check();
    await share.getByLabel('Find people (name or email)').fill('Carl');
    await share.getByLabel('Carl Colleague').check();
    // The first person chosen stays chosen while others are looked for.
    await expect(share.getByLabel('Erik Expert').isChecked()).resolves.toBe(true);
    await share.getByLabel(/^Message/).fill('Have a look at this one.');
    await share.getByRole('button', { name: 'Share', exact: true }).click();
    await share.getByRole('status').filter({ hasText: 'Shared with Erik Expert, Carl Colleague.' }).waitFor();
    for (const who of [expert, carl])
      await waitFor(
        async () => {
          const res = await system.api.get(`${API}/notifications`).set(...bearer(who.token));
          return res.body.items.some(
            (n: { type: string; question_id: number }) => n.type === 'share_question' && n.question_id === questionId,
          );
        },
        { what: 'the share notification' },
      );

    await share.getByLabel('Find people (name or email)').fill('Carl');
    await share.getByLabel('Carl Colleague').check();
    await share.getByRole('button', { name: 'Forward', exact: true }).click();
    await share.getByRole('status').filter({ hasText: 'Forwarded to Carl Colleague.' }).waitFor();
    const forwards = await system.api.get(`${API}/questions/${questionId}/forward`).set(...bearer(asker.token));
    expect(forwards.body.items.map((f: { user: { id: number } }) => f.user.id)).toContain(carl.id);
    await accessible(page, 'share');

    // Back to the list and to the question again: no author is asked for a second time.
    await page.locator('article.solution').first().waitFor();
    const readsBefore = userReads.length;
    expect(readsBefore).toBeGreaterThan(0);
    await page.getByRole('link', { name: 'Questions', exact: true }).click();
    await page.locator('ol.questions a', { hasText: 'citrus' }).click();
    await page.locator('article.solution').first().waitFor();
    await page.getByRole('region', { name: 'Comments on the question' }).waitFor();
    expect(userReads.length).toBe(readsBefore);
    expect(new Set(userReads).size).toBe(userReads.length);
  });

  test('search filters for a language and a knowledge space, kept in the address', async () => {
    const space = await system.api
      .post(`${API}/knowledge-spaces`)
      .set(...bearer(system.adminToken))
      .send({ name: 'Brewery crew', description: 'The brewers of the house' });
    expect(space.status).toBe(201);
    await newQuestion(system, asker.token, {
      title: 'Which yeast suits a Belgian tripel best?',
      description: '<p>A dry, spicy tripel.</p>',
      knowledge_space: space.body.id,
    });
    const page = await newPage();
    await signIn(page, asker.email);
    // Filters are behind a disclosure and apply at once.
    await page.locator('summary', { hasText: 'Filters' }).click();
    await page.getByLabel('Knowledge space').selectOption({ label: 'Brewery crew' });
    await page.getByRole('heading', { name: '1 question', exact: true }).waitFor();
    await page.locator('ol.questions a', { hasText: 'Belgian tripel' }).waitFor();
    expect(new URL(page.url()).searchParams.get('space')).toBe(String(space.body.id));

    await page.getByLabel('Knowledge space').selectOption('');
    await page.getByLabel('Language', { exact: true }).selectOption({ label: 'German' });
    await page.getByText('No questions found.').waitFor();
    expect(new URL(page.url()).searchParams.get('language')).toBe('de');
    await page.getByLabel('Language', { exact: true }).selectOption({ label: 'English' });
    await page.locator('ol.questions a', { hasText: 'citrus' }).waitFor();
    await accessible(page, 'filters');
  });

  test('experts, settings and administration pages', async () => {
    const page = await newPage();
    await signIn(page, asker.email, PASSWORD, '/experts');
    await page.getByLabel('What is it about?').fill('hops for a pale ale');
    await page.getByRole('button', { name: 'Find experts' }).click();
    await page.locator('ol.experts h3', { hasText: 'Erik Expert' }).waitFor();
    await shot(page, 'experts');
    await accessible(page, 'experts');

    const admin = await newPage();
    await signIn(admin, ADMIN.email, ADMIN.password, '/admin');
    await admin.getByLabel('Name of the network').waitFor();
    await admin.getByRole('button', { name: 'Start a content export' }).click();
    await admin.locator('ul.exports li', { hasText: 'done' }).waitFor();
    await admin.getByText(/^Ready: searches are answered/).waitFor();
    await shot(admin, 'admin');
    await accessible(admin, 'admin');
  });

  test('the German UI, with what the API said about a title too short in German', async () => {
    const page = await newPage();
    await signIn(page, asker.email, PASSWORD, '/settings');
    await page.getByLabel('Language of the interface').selectOption('de');
    // The settings page has a form per group, each with its Save: the language's.
    await page
      .locator('form', { has: page.getByLabel('Language of the interface') })
      .getByRole('button', { name: 'Save' })
      .click();
    await page.getByRole('link', { name: 'Fragen', exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Gespeichert.' }).waitFor();
    await shot(page, 'settings-de');
    await accessible(page, 'settings');

    await page.getByRole('link', { name: 'Frage stellen' }).click();
    await page.getByLabel('Titel').fill('Zu kurz');
    await page.getByRole('button', { name: 'Veröffentlichen' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Die Frage kann noch nicht veröffentlicht werden.').waitFor();
    await alert.getByText('Der Titel muss 10 bis 100 Zeichen haben.').waitFor();
    await shot(page, 'ask-error-de');
    // Nothing half-done: the draft stays a draft, and no one was asked.
    const mine = await system.api.get(`${API}/questions?filter=my-questions&limit=100`).set(...bearer(asker.token));
    expect(mine.body.items.map((q: { title: string }) => q.title)).not.toContain('Zu kurz');
    await system.api
      .put(`${API}/users/me/settings`)
      .set(...bearer(asker.token))
      .send({ interface_language: 'en' });
  });

  test('a phone (390 px) and a desktop (1280 px) show the question without sideways scrolling', async () => {
    for (const width of [390, 1280]) {
      const page = await newPage(width, 844);
      await signIn(page, asker.email, PASSWORD, questionUrl);
      await page.locator('h1', { hasText: 'citrus' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await shot(page, `question-${width}`);
      await page.goto('/');
      await page.locator('ol.questions').waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await shot(page, `questions-${width}`);
    }
  });

  test('a session that expired: the person is asked to sign in again, in their language, and comes back', async () => {
    const page = await newPage();
    await page.goto('/sign-in');
    await accessible(page, 'sign-in');
    await shot(page, 'sign-in');
    await signIn(page, expert.email, PASSWORD, '/notifications');
    await page.locator('h1', { hasText: 'Notifications' }).waitFor();
    // The session's token expires (as after TOKEN_TTL).
    await system.services.users.runtime.db
      .updateTable('tokens')
      .set({ expires: new Date(system.clock.now().getTime() - 1000) })
      .where('user_id', '=', expert.id)
      .where('kind', '=', 'session')
      .execute();
    // The next call finds it expired: this click's, or the unseen count's refresh if that comes first
    // (then the button is gone before it is clicked).
    const expired = page.getByText('Your session has expired. Please sign in again.').waitFor();
    await Promise.race([
      page
        .getByRole('button', { name: 'Mark all as read' })
        .click()
        .then(() => expired)
        .catch(() => expired),
      expired,
    ]);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.getByLabel(/email/i).fill(expert.email);
    await page.getByLabel(/password/i).fill(PASSWORD);
    await page.locator('form button[type=submit]').click();
    await page.locator('h1', { hasText: 'Notifications' }).waitFor();
  });

  test('a wrong password is told on the sign-in page', async () => {
    const page = await newPage();
    await page.goto('/sign-in');
    await page.getByLabel(/email/i).fill(asker.email);
    await page.getByLabel(/password/i).fill('not-the-password');
    await page.locator('form button[type=submit]').click();
    await page.getByRole('alert').getByText('Wrong email address or password.').waitFor();
  });

  test('while the search index loads, a search says so in the person’s language', async () => {
    await speak(asker, 'de');
    const { backend } = system.services.search;
    try {
      const page = await newPage();
      await signIn(page, asker.email);
      await backend.close();
      await page.getByLabel('Fragen durchsuchen').fill('citrus');
      await page.getByRole('button', { name: 'Suchen', exact: true }).click();
      await page.getByRole('alert').getByText('Der Suchindex wird noch geladen. Bitte versuchen Sie es gleich noch einmal.').waitFor();
      await shot(page, 'search-loading-de');
    } finally {
      await backend.open();
      await speak(asker, 'en');
    }
    await system.searchCaughtUp();
  });
});

describe('single sign-on settings', () => {
  const settings = async () => (await system.api.get(`${API}/settings`).set(...bearer(system.adminToken))).body;
  const space = async (name: string, is_closed: boolean) =>
    (
      await system.api
        .post(`${API}/knowledge-spaces`)
        .set(...bearer(system.adminToken))
        .send({ name, is_closed })
    ).body.id as number;

  test('an administrator maps a group to roles and a closed knowledge space and limits password sign-in; the API’s refusals are shown', async () => {
    const brewlab = await space('Brewlab', true);
    await space('Tap room', false);
    const page = await newPage();
    try {
      await signIn(page, ADMIN.email, ADMIN.password, '/admin');
      const region = page.getByRole('region', { name: 'Sign-in and identity-provider groups' });
      await region.getByText('No group gives roles or knowledge spaces yet.').waitFor();
      await region.getByRole('button', { name: 'Add a group mapping' }).click();
      const mapping = region.locator('form > fieldset').first();
      // Open spaces are not what a mapping is for: only closed ones are offered.
      expect(await mapping.getByText('Tap room').count()).toBe(0);
      // Saved without a group name: the API refuses it, the page says so at the mapping, nothing is stored.
      await region.getByRole('button', { name: 'Save' }).click();
      await region.getByRole('alert').getByText('Please check your input.').waitFor();
      await mapping.getByText('Give the group name as the identity provider writes it (not empty, no control characters).').waitFor();
      expect(await mapping.getByLabel('Group name at the identity provider').getAttribute('aria-invalid')).toBe('true');
      expect((await settings()).idp_group_mappings).toEqual([]);
      await accessible(page, 'sign-in settings refused');

      await mapping.getByLabel('Group name at the identity provider').fill('Brewers');
      await mapping.getByLabel('Content administrator').check();
      await mapping.getByLabel('Brewlab').check();
      await region.getByLabel('Who may sign in with a password').selectOption('administrators');
      await region.getByRole('button', { name: 'Save' }).click();
      await region.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect(await settings()).toMatchObject({
        password_sign_in: 'administrators',
        idp_group_mappings: [{ group: 'Brewers', roles: ['content_admin'], knowledge_spaces: [brewlab] }],
      });
      await shot(page, 'sign-in-settings');
      await accessible(page, 'sign-in settings');

      // What is stored is what the page shows next time; removing the mapping removes it.
      await page.reload();
      await region.getByRole('group', { name: 'Brewers' }).getByLabel('Brewlab').waitFor();
      expect(await region.getByLabel('Who may sign in with a password').inputValue()).toBe('administrators');
      await region.getByRole('button', { name: 'Remove the mapping Brewers' }).click();
      await region.getByLabel('Who may sign in with a password').selectOption('everyone');
      await region.getByRole('button', { name: 'Save' }).click();
      await region.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect(await settings()).toMatchObject({ password_sign_in: 'everyone', idp_group_mappings: [] });
    } finally {
      await system.api
        .put(`${API}/settings`)
        .set(...bearer(system.adminToken))
        .send({ password_sign_in: 'everyone', idp_group_mappings: [] });
    }
  });

  test('in German, with what the API refused in German', async () => {
    const email = `einstellungen-${Math.random().toString(36).slice(2, 7)}@example.com`;
    const created = await system.api
      .post(`${API}/users`)
      .set(...bearer(system.adminToken))
      .send({
        email,
        firstname: 'Edda',
        lastname: 'Einstellung',
        language: 'de',
        password: PASSWORD,
        roles: ['user', 'api_user', 'settings_admin'],
      });
    expect(created.status).toBe(201);
    await speak({ id: created.body.id, email, token: await system.login(email, PASSWORD) }, 'de');
    const page = await newPage();
    await signIn(page, email, PASSWORD, '/admin');
    const region = page.getByRole('region', { name: 'Anmeldung und Gruppen des Identitätsanbieters' });
    await region.getByRole('button', { name: 'Gruppenzuordnung hinzufügen' }).click();
    await region.getByRole('button', { name: 'Speichern' }).click();
    await region
      .locator('form > fieldset')
      .first()
      .getByText('Geben Sie den Gruppennamen so an, wie der Identitätsanbieter ihn schreibt (nicht leer, ohne Steuerzeichen).')
      .waitFor();
    await accessible(page, 'sign-in settings (de)');
    expect((await settings()).idp_group_mappings).toEqual([]);
  });
});
