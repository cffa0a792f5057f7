// The web page a chat app's link code leads to (docs/chat.md, "What people do in Slack"): it shows
// whose chat account the code would make act as the signed-in person, and links only on their
// confirmation (a code someone else passed on would link that person's account).
import { createLinkCode, installationOf } from '../services/chat/src/domain/links.ts';
import { API } from './fixtures.ts';
import { bearer } from './system.ts';
import { startWebApp, type WebApp } from './web-app.ts';

jest.setTimeout(180_000);

let web: WebApp;

beforeAll(async () => {
  web = await startWebApp('chat-web');
});

afterAll(async () => {
  await web?.stop();
});

test('the link page names the chat account first; nothing is linked until the person confirms', async () => {
  const { system } = web;
  const person = await web.person('Lina', 'Linker');
  const db = system.services.chat.runtime.db;
  const installation = await installationOf(db, 'teams', 'tenant-web', null);
  const code = await createLinkCode(db, {
    installationId: installation.id,
    chatUserId: '29:someone-else',
    chatUserName: 'Mallory Mallet',
    workspaceName: null,
    conversationId: null,
    ttlMs: 10 * 60_000,
    now: system.clock.now(),
  });
  const links = async () =>
    (
      await system.api
        .get(`${API}/chat/links`)
        .set(...bearer(person.token))
        .expect(200)
    ).body.items;

  const page = await web.newPage(390, 844);
  await web.signIn(page, person.email, `/chat/link?code=${code}`);
  const account = page.locator('dl.chat-link-account');
  await account.getByText('Mallory Mallet (29:someone-else)').waitFor();
  await account.getByText('Microsoft Teams').waitFor();
  await account.getByText('tenant-web').waitFor();
  await page.getByText('Link it only if this is your own account').waitFor();
  await web.accessible(page, 'chat-link-390');
  await web.shot(page, 'chat-link-390');
  // Shown, not confirmed: nothing is linked (and a reload shows it again: the code is not spent).
  expect(await links()).toEqual([]);
  await page.reload();
  await account.getByText('Mallory Mallet (29:someone-else)').waitFor();
  expect(await links()).toEqual([]);

  await page.getByRole('button', { name: 'Link this chat account' }).click();
  await page.getByText('Your Teams account is linked. Go back to Teams.').waitFor();
  expect(await links()).toEqual([expect.objectContaining({ platform: 'teams', workspace: 'tenant-web', chat_user_id: '29:someone-else' })]);

  // A spent code: the page says so, with no button to press.
  await page.reload();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('button', { name: 'Link this chat account' }).count()).toBe(0);
});
