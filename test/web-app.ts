import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { API } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * The web app in Debian's Chromium against the whole system, for the test files that look at its
 * pages: built into a folder of its own, served by the gateway (WEB_ROOT). Screenshots go to a
 * folder outside the repository (printed once), for a person to review.
 */

export const PASSWORD = 'web-password-1234';

export interface Person {
  id: number;
  email: string;
  token: string;
  name: string;
}

export interface WebApp {
  system: System;
  /** Where this run's screenshots are. */
  shots: string;
  /** A person of the network with the default roles only, and a token to prepare things on their behalf. */
  person(firstname: string, lastname: string, language?: string): Promise<Person>;
  /** A new browser profile at this width; a script error of the app fails the test. */
  newPage(width?: number, height?: number): Promise<Page>;
  signIn(page: Page, email: string, next?: string): Promise<void>;
  /** No serious or critical accessibility violation on the page as it stands. */
  accessible(page: Page, name: string): Promise<void>;
  shot(page: Page, name: string): Promise<unknown>;
  /** The person's interface language, as the settings page sets it. */
  speak(who: Person, language: string): Promise<void>;
  stop(): Promise<void>;
}

/** The web app built into a new folder (the gateway's WEB_ROOT); the caller removes it. */
export function buildWebApp(prefix = 'kn-web-'): string {
  const webRoot = mkdtempSync(path.join(tmpdir(), prefix));
  const build = spawnSync(process.execPath, ['web/build.ts', '--out', webRoot], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`building the web app failed: ${build.stderr}`);
  return webRoot;
}

/** Debian's Chromium, headless, without the calls home a test does not want. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

export async function startWebApp(name: string, env: Record<string, string> = {}): Promise<WebApp> {
  const webRoot = buildWebApp();
  const shots = path.join(tmpdir(), `kn-screenshots-${name}`);
  mkdirSync(shots, { recursive: true });
  const system = await startSystem({ WEB_ROOT: webRoot, ...env });
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  return {
    system,
    shots,
    async person(firstname, lastname, language = 'en') {
      const email = `${firstname.toLowerCase()}.${lastname.toLowerCase()}-${Math.random().toString(36).slice(2, 7)}@example.com`;
      const res = await system.api
        .post(`${API}/users`)
        .set(...bearer(system.adminToken))
        .send({ email, firstname, lastname, language, password: PASSWORD, roles: ['user'] });
      if (res.status !== 201) throw new Error(`creating ${firstname} failed: ${res.status} ${JSON.stringify(res.body)}`);
      const token = await system.api
        .post(`${API}/auth/tokens`)
        .set(...bearer(system.adminToken))
        .send({ user_id: res.body.id });
      return { id: res.body.id, email, token: token.body.token, name: `${firstname} ${lastname}` };
    },
    async newPage(width = 1280, height = 900) {
      const context = await browser.newContext({ baseURL: system.url, viewport: { width, height } });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (err) => {
        throw err;
      });
      return page;
    },
    async signIn(page, email, next = '/') {
      await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
      await page.getByLabel(/email|e-mail/i).fill(email);
      await page.getByLabel(/password|passwort/i).fill(PASSWORD);
      await page.locator('form button[type=submit]').click();
      await page.locator('header nav').waitFor();
    },
    async accessible(page, what) {
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${what}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      expect(bad).toEqual([]);
    },
    shot: (page, what) => page.screenshot({ path: path.join(shots, `${what}.png`), fullPage: true }),
    async speak(who, language) {
      const res = await system.api
        .put(`${API}/users/me/settings`)
        .set(...bearer(who.token))
        .send({ interface_language: language });
      expect(res.status).toBe(200);
    },
    async stop() {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
      await system.stop();
      rmSync(webRoot, { recursive: true, force: true });
    },
  };
}
