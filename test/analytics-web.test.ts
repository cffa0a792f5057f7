import { readFileSync, rmSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { en } from '../web/src/i18n/en.ts';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';
import { buildWebApp, launchChromium } from './web-app.ts';

/* The analytics and review-queue pages of the web app in Chromium, against the whole system. */

const PASSWORD = 'web-password-1234';
let system: System;
let browser: Browser;
let webRoot: string;

async function person(roles: string[]) {
  const email = `analytics-${Math.random().toString(36).slice(2, 9)}@example.com`;
  const res = await system.api
    .post(`${API}/users`)
    .set(...bearer(system.adminToken))
    .send({ email, firstname: 'Web', lastname: roles.join(' '), language: 'en', password: PASSWORD, roles: [...roles, 'api_user'] });
  if (res.status !== 201) throw new Error(`creating a person failed: ${res.status} ${JSON.stringify(res.body)}`);
  const token = await system.login(email, PASSWORD);
  return { id: res.body.id as number, email, token };
}

async function signedIn(email: string, next: string): Promise<Page> {
  const page = await (await browser.newContext({ baseURL: system.url, acceptDownloads: true })).newPage();
  page.on('pageerror', (err) => {
    throw err;
  });
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel(/email/i).fill(email);
  await page.getByLabel(/password/i).fill(PASSWORD);
  await page.locator('form button[type=submit]').click();
  await page.locator('header nav').waitFor();
  return page;
}

async function accessible(page: Page) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
}

beforeAll(async () => {
  webRoot = buildWebApp('kn-web-analytics-');
  system = await startSystem({ WEB_ROOT: webRoot, ANALYTICS_CACHE_MS: '0' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
  rmSync(webRoot, { recursive: true, force: true });
});

test('a manager reads the flow as a chart and a table, and downloads it as CSV', async () => {
  const manager = await person(['user', 'manager']);
  const asker = await person(['user']);
  await newQuestion(system, asker.token, { title: 'How long does a lager take to condition?', tags: ['lager'] });
  await system.analyticsCaughtUp();
  const page = await signedIn(manager.email, '/analytics');
  await page.getByRole('heading', { name: en['analytics.flow'] }).waitFor();
  expect(await page.getByRole('img').count()).toBeGreaterThan(0);
  // One asker: the row is withheld from a manager, in the table as in the file.
  await page.getByRole('cell', { name: en['analytics.withheld'] }).first().waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: en['analytics.csv'] }).click()]);
  const csv = readFileSync((await download.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toContain(
    ['period', 'group', 'asked'].map((c) => `"${en[`analytics.col.${c}` as keyof typeof en]}"`).join(','),
  );
  expect(csv).toContain(en['analytics.withheld']);
  await accessible(page);
  // Someone without the role has no such link.
  const plain = await signedIn(asker.email, '/');
  expect(await plain.getByRole('link', { name: en['nav.analytics'] }).count()).toBe(0);
}, 120_000);

test('the author validates a solution from their review queue', async () => {
  const poser = await person(['user']);
  const author = await person(['user']);
  const question = (await newQuestion(system, poser.token, { title: 'Is this still the right hop schedule?', tags: ['hops'] })).id;
  const solution = await publishedSolution(system, author.token, question, '<p>Add the hops at ten minutes.</p>');
  expect((await system.api.put(`${API}/questions/${question}/request-validation`).set(...bearer(poser.token))).status).toBe(200);
  await system.analyticsCaughtUp();
  const page = await signedIn(author.email, '/review');
  await page.getByRole('link', { name: 'Is this still the right hop schedule?' }).waitFor();
  await accessible(page);
  await page.getByLabel(en['validity.label']).selectOption('year_one');
  await page.getByRole('button', { name: en['review.verify'] }).click();
  await page.getByText(en['review.verified']).waitFor();
  const read = await system.api.get(`${API}/solutions/${solution}`).set(...bearer(author.token));
  expect(read.body.validity_period).toBe('year_one');
  await system.analyticsCaughtUp();
  const queue = await system.api.get(`${API}/analytics/health/queue?mine=true`).set(...bearer(author.token));
  expect(queue.body.total).toBe(0);
}, 120_000);
