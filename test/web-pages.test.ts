import { waitFor } from '@kn/testing';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { ADMIN, bearer } from './system.ts';
import { type Person, startWebApp, type WebApp } from './web-app.ts';

/*
 * The web app's pages as people read them (issue 64), in Chromium at a phone's and a desktop's
 * width, in English and German: the question page (accepted solution first, comments under each
 * solution, one-click upvote, the follow switch, authors read in one request), the not-found page,
 * profiles linked from names. Screenshots: the folder this file prints.
 */

// Each test drives Chromium through several pages, often at both widths: minutes on a loaded machine.
jest.setTimeout(240_000);

let web: WebApp;
let asker: Person;
let erik: Person;
let carl: Person;
let dora: Person;
let questionId: number;
const solutions: Record<'erik' | 'carl' | 'dora', number> = { erik: 0, carl: 0, dora: 0 };

const as = (who: Person) => bearer(who.token);

beforeAll(async () => {
  web = await startWebApp('web-pages');
  console.log(`screenshots: ${web.shots}`);
  const { system } = web;
  asker = await web.person('Anna', 'Asker');
  erik = await web.person('Erik', 'Expert');
  carl = await web.person('Carl', 'Colleague');
  dora = await web.person('Dora', 'Drinker');
  questionId = (
    await newQuestion(system, asker.token, {
      title: 'How cold should a lager ferment?',
      description: '<p>My lager tastes of <em>sulphur</em> after two weeks.</p>',
      tags: ['lager'],
    })
  ).id;
  solutions.erik = await publishedSolution(system, erik.token, questionId, '<p>Erik says: 10 °C, then a diacetyl rest.</p>');
  solutions.carl = await publishedSolution(system, carl.token, questionId, '<p>Carl says: patience, lager it for six weeks.</p>');
  solutions.dora = await publishedSolution(system, dora.token, questionId, '<p>Dora says: pitch more yeast.</p>');
  // Dora's gets two votes, Carl's none, Erik's one; the asker accepts Carl's.
  for (const [who, id] of [
    [erik, solutions.dora],
    [carl, solutions.dora],
    [dora, solutions.erik],
  ] as const)
    expect((await system.api.put(`${API}/solutions/${id}/upvote`).set(...as(who))).status).toBe(200);
  expect((await system.api.put(`${API}/solutions/${solutions.carl}/accept`).set(...as(asker))).status).toBe(200);
  // Five comments on Erik's solution, by three people; one on the question.
  for (const [i, who] of [carl, dora, asker, carl, dora].entries())
    expect(
      (
        await system.api
          .post(`${API}/solutions/${solutions.erik}/comments`)
          .set(...as(who))
          .send({ description: `<p>Solution comment number ${i + 1}</p>` })
      ).status,
    ).toBe(201);
  expect(
    (
      await system.api
        .post(`${API}/questions/${questionId}/comments`)
        .set(...as(erik))
        .send({ description: '<p>Which yeast strain do you use?</p>' })
    ).status,
  ).toBe(201);
}, 180_000);

afterAll(() => web?.stop());

const solutionTexts = (page: import('playwright-core').Page) =>
  page.locator('article.solution .solution-body > .content').allTextContents();

describe('the question page', () => {
  test.each([1280, 390])(
    'at %i px: the accepted solution first with its badge, then by votes; comments under each solution, beyond three behind "show all"; every author read in one request',
    async (width) => {
      const page = await web.newPage(width, 844);
      const userReads: string[] = [];
      page.on('request', (req) => {
        if (new URL(req.url()).pathname.startsWith(`${API}/users/`) && !req.url().includes('/users/me')) userReads.push(req.url());
      });
      await web.signIn(page, dora.email, `/questions/${questionId}`);
      await page.locator('h1', { hasText: 'How cold should a lager ferment?' }).waitFor();
      await page.locator('article.solution').nth(2).waitFor();
      expect(await solutionTexts(page)).toEqual([
        'Carl says: patience, lager it for six weeks.',
        'Dora says: pitch more yeast.',
        'Erik says: 10 °C, then a diacetyl rest.',
      ]);
      const accepted = page.locator('article.solution').first();
      await accepted.locator('.badge-accepted', { hasText: 'Accepted by the asker' }).waitFor();
      expect(await page.locator('.badge-accepted').count()).toBe(1);
      // Names link to profiles; the first solution is named for its author.
      await accepted.getByRole('link', { name: 'Carl Colleague' }).waitFor();
      expect(await accepted.getAttribute('aria-label')).toBe('Solution by Carl Colleague');

      const erikSolution = page.getByRole('article', { name: 'Solution by Erik Expert' });
      const comments = erikSolution.getByRole('region', { name: 'Comments on the solution' }).locator('ul.comments > li');
      await comments.nth(2).waitFor();
      expect(await comments.count()).toBe(3);
      await erikSolution.getByRole('button', { name: 'Show all 5 comments' }).click();
      await comments.nth(4).waitFor();
      expect(await comments.allTextContents()).toEqual([1, 2, 3, 4, 5].map((n) => expect.stringContaining(`Solution comment number ${n}`)));
      // The question's comment sits under the question, before the solutions.
      const questionComments = page.getByRole('region', { name: 'Comments on the question' });
      await questionComments.getByText('Which yeast strain do you use?').waitFor();
      const [commentTop, solutionsTop] = await Promise.all([
        questionComments.boundingBox(),
        page.getByRole('heading', { name: '3 solutions' }).boundingBox(),
      ]);
      expect(commentTop!.y).toBeLessThan(solutionsTop!.y);

      // Every author of the page (four people) in one request.
      await page.getByRole('link', { name: 'Anna Asker' }).first().waitFor();
      expect(userReads).toEqual([expect.stringContaining(`${API}/users/by-id?ids=`)]);
      // Italics of the content stay italics: only search hits are highlighted.
      // Page code as a string: the tests are type-checked without the DOM's types.
      const italic = await page.evaluate(
        "(() => { const s = getComputedStyle(document.querySelector('#question-body em')); return [s.fontStyle, s.backgroundColor]; })()",
      );
      expect(italic).toEqual(['italic', 'rgba(0, 0, 0, 0)']);
      // Related questions beside the content on a wide screen, after it on a phone.
      const [main, related] = await Promise.all([
        page.locator('.question-main').boundingBox(),
        page.locator('aside.related').boundingBox(),
      ]);
      if (width >= 960) expect(related!.x).toBeGreaterThan(main!.x + main!.width - 1);
      else expect(related!.y).toBeGreaterThan(main!.y + main!.height - 1);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      // Each solution's "Add a comment" and its menu (attachments, sharing: "…") are one small line.
      for (const solution of await page.locator('article.solution').all()) {
        const bar = solution.locator('.comment-bar');
        await bar.getByRole('button', { name: 'Add a comment' }).waitFor();
        expect(await bar.locator('summary').textContent()).toBe('…Attachments and sharing');
        expect((await bar.boundingBox())!.height).toBeLessThan(30);
      }
      // The answer box has one title, its field's label.
      await page.getByRole('form', { name: 'Your solution' }).getByRole('textbox', { name: 'Your solution' }).waitFor();
      expect(await page.getByText('Your solution', { exact: true }).count()).toBe(1);
      await web.accessible(page, `question-${width}`);
      await web.shot(page, `question-${width}`);
    },
  );

  test('one click upvotes (a second takes it back); Follow is one switch whose state holds after a reload', async () => {
    const page = await web.newPage();
    await web.signIn(page, asker.email, `/questions/${questionId}`);
    const erikSolution = page.getByRole('article', { name: 'Solution by Erik Expert' });
    const helpful = erikSolution.getByRole('button', { name: 'Helpful' });
    await erikSolution.getByText('1 vote', { exact: true }).waitFor();
    await helpful.click();
    await erikSolution.getByText('2 votes', { exact: true }).waitFor();
    expect(await helpful.getAttribute('aria-pressed')).toBe('true');
    const read = async () => (await web.system.api.get(`${API}/solutions/${solutions.erik}`).set(...as(asker))).body.upvote_count as number;
    expect(await read()).toBe(2);
    // After a reload the button still shows the person's upvote (GET /questions/{id}/upvotes/mine).
    await page.reload();
    await erikSolution.getByText('2 votes', { exact: true }).waitFor();
    await erikSolution.getByRole('button', { name: 'Helpful', pressed: true }).waitFor();
    await helpful.click();
    await erikSolution.getByText('1 vote', { exact: true }).waitFor();
    expect(await helpful.getAttribute('aria-pressed')).toBe('false');
    expect(await read()).toBe(1);
    // Nobody upvotes their own solution: the button is there, but off.
    const own = await web.newPage();
    await web.signIn(own, erik.email, `/questions/${questionId}`);
    await expect(
      own.getByRole('article', { name: 'Solution by Erik Expert' }).getByRole('button', { name: 'Helpful' }).isDisabled(),
    ).resolves.toBe(true);

    const follow = page.getByRole('button', { name: 'Follow', exact: true });
    await follow.click();
    const following = page.getByRole('button', { name: 'Following', exact: true });
    await following.waitFor();
    expect(await following.getAttribute('aria-pressed')).toBe('true');
    await page.reload();
    await following.waitFor();
    expect(await following.getAttribute('aria-pressed')).toBe('true');
    const followed = async () =>
      (await web.system.api.get(`${API}/questions?filter=following&limit=100`).set(...as(asker))).body.items.map(
        (q: { id: number }) => q.id,
      );
    expect(await followed()).toContain(questionId);
    await following.click();
    await follow.waitFor();
    expect(await follow.getAttribute('aria-pressed')).toBe('false');
    expect(await followed()).not.toContain(questionId);
    await web.shot(page, 'question-follow');
  });

  test('German: plurals, numbers and decimals as the language writes them', async () => {
    const content = web.system.services.content.runtime.db;
    await content.updateTable('questions').set({ view_count: 12345 }).where('id', '=', questionId).execute();
    for (const [who, rating] of [
      [asker, 4],
      [erik, 5],
    ] as const)
      expect(
        (
          await web.system.api
            .put(`${API}/solutions/${solutions.dora}/rating`)
            .set(...as(who))
            .send({ rating })
        ).status,
      ).toBe(200);
    await web.speak(carl, 'de');
    try {
      for (const width of [1280, 390]) {
        const page = await web.newPage(width, 844);
        await web.signIn(page, carl.email, `/questions/${questionId}`);
        await page.getByText('12.345 Aufrufe').waitFor();
        await page.getByRole('heading', { name: '3 Lösungen' }).waitFor();
        await page.getByRole('article', { name: 'Lösung von Erik Expert' }).getByText('1 Stimme', { exact: true }).waitFor();
        await page.getByText('Bewertet mit 4,5 (2 Bewertungen)').waitFor();
        await page.getByRole('link', { name: 'Frage stellen' }).waitFor();
        await web.accessible(page, `question-de-${width}`);
        await web.shot(page, `question-de-${width}`);
        await page.getByRole('link', { name: 'Fragen', exact: true }).click();
        await page.getByRole('heading', { name: /^\d+ Fragen?$/ }).waitFor();
        await page.locator('ol.questions li', { hasText: 'How cold should a lager ferment?' }).getByText('3 Lösungen').waitFor();
        expect(await page.locator('ol.questions li', { hasText: 'How cold should a lager ferment?' }).locator('.count').textContent()).toBe(
          '✓ 3 Lösungen, eine akzeptierte Lösung',
        );
        // The first question is on the first screen, on a phone too (filters wait behind their disclosure).
        const first = await page.locator('ol.questions li').first().boundingBox();
        expect(first!.y + 40).toBeLessThan(844);
        await web.accessible(page, `questions-de-${width}`);
        await web.shot(page, `questions-de-${width}`);
        // A profile in German: what the person is known for, what they answered (plural rules).
        await page.goto(`/users/${erik.id}`);
        await page
          .getByRole('region', { name: 'Bekannt für' })
          .getByText(/^Warum: lager \(/)
          .waitFor();
        await page.getByRole('heading', { name: /^Hat \d+ Fragen? beantwortet$/ }).waitFor();
        expect(await page.getByRole('region', { name: 'Bekannt für' }).textContent()).toMatch(
          /\d+ Lösung(en)?, durchschnittliche Bewertung [^,]+, \d+ Empfehlung(en)?Warum/,
        );
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        await web.accessible(page, `profile-de-${width}`);
        await web.shot(page, `profile-de-${width}`);
      }
    } finally {
      await web.speak(carl, 'en');
    }
  });
});

describe('the list', () => {
  let open: { id: number };
  beforeAll(async () => {
    open = await newQuestion(web.system, asker.token, { title: 'Does a lager need a cold crash?', tags: ['lager'] });
    await publishedSolution(web.system, erik.token, open.id, '<p>Not always.</p>');
  });

  test.each([1280, 390])(
    'at %i px: a question with an accepted solution is marked solved in its row, in words too; the API says so, searched or not',
    async (width) => {
      for (const query of ['', '&query=lager'])
        await waitFor(
          async () => {
            const res = await web.system.api.get(`${API}/questions?limit=100${query}`).set(...as(asker));
            const marks = new Map(
              res.body.items.map((q: { id: number; has_accepted_solution: boolean }) => [q.id, q.has_accepted_solution]),
            );
            return marks.get(questionId) === true && marks.get(open.id) === false;
          },
          { what: `the accepted marks in the list${query}` },
        );
      const page = await web.newPage(width, 844);
      await web.signIn(page, dora.email, '/?q=lager');
      const solved = page.locator('ol.questions li', { hasText: 'How cold should a lager ferment?' }).locator('.count');
      await solved.waitFor();
      expect(await solved.textContent()).toBe('✓ 3 solutions, an accepted solution');
      expect(await solved.getAttribute('class')).toContain('accepted');
      const unsolved = page.locator('ol.questions li', { hasText: 'Does a lager need a cold crash?' }).locator('.count');
      expect(await unsolved.textContent()).toBe('1 solution');
      // A hit in the title keeps the row's excerpt; the time is relative.
      const row = page.locator('ol.questions li', { hasText: 'How cold should a lager ferment?' });
      expect(await row.locator('.excerpt').textContent()).toBe('My lager tastes of sulphur after two weeks.');
      await row.getByText(/^active (this minute|now|\d+ minutes? ago)$/).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await web.accessible(page, `questions-${width}`);
      await web.shot(page, `questions-${width}`);
      // The order as tabs: one click, and the address keeps it.
      const tabs = page.getByRole('navigation', { name: 'Sort by' });
      await tabs.getByRole('link', { name: 'Newest' }).click();
      await tabs.locator('a[aria-current="page"]', { hasText: 'Newest' }).waitFor();
      expect(new URL(page.url()).searchParams.get('sort')).toBe('date_published.desc');
      // One's own profile is in the menu under the picture in the header.
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('button', { name: 'Your account' }).click();
      await nav.getByRole('link', { name: 'Your profile' }).click();
      await page.getByRole('heading', { name: 'Dora Drinker' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/users/${dora.id}`);
    },
  );
});

describe('asking', () => {
  test('tags as chips completed from the network’s tags; similar questions right under the title on a phone; asked from an expert’s result, the question goes to them too', async () => {
    await web.system.searchCaughtUp();
    const page = await web.newPage(390, 844);
    await web.signIn(page, asker.email, `/ask?to=${erik.id}`);
    await page.getByText('It will also be forwarded to Erik Expert.').waitFor();
    await page.getByLabel('Title').fill('How cold should a lager be served?');
    const similar = page.getByRole('region', { name: 'Similar questions that may already answer yours' });
    await similar.getByRole('link', { name: 'How cold should a lager ferment?' }).waitFor();
    const [box, description] = await Promise.all([similar.boundingBox(), page.getByLabel('Description').boundingBox()]);
    expect(box!.y).toBeLessThan(description!.y);

    const tags = page.getByRole('combobox', { name: 'Tags' });
    await tags.pressSequentially('lag');
    await page.locator('#ask-tags-known option[value="lager"]').waitFor({ state: 'attached' });
    await tags.pressSequentially('er,');
    await tags.fill('serving');
    await tags.press('Enter');
    const chips = page.getByRole('list', { name: 'Tags' }).locator('li');
    await expect(chips.allTextContents()).resolves.toEqual(['lager×', 'serving×']);
    await page.getByRole('button', { name: 'Remove the tag serving' }).click();
    await tags.fill('temperature');
    await web.accessible(page, 'ask-390');
    await web.shot(page, 'ask-390');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByTestId('experts-asked').waitFor();
    const mine = await web.system.api.get(`${API}/questions?filter=my-questions&sort=id.desc&limit=1`).set(...as(asker));
    const asked = mine.body.items[0] as { id: number; title: string; concepts: Array<{ primary_label: string }> };
    expect(asked.title).toBe('How cold should a lager be served?');
    expect(asked.concepts.map((c) => c.primary_label).sort()).toEqual(['lager', 'temperature']);
    const forwards = await web.system.api.get(`${API}/questions/${asked.id}/forward`).set(...as(asker));
    expect(forwards.body.items.map((f: { user: { id: number } }) => f.user.id)).toContain(erik.id);
  });
});

describe('experts', () => {
  test.each([390, 1280])(
    'at %i px: from a question, find experts and forward it (or another of one’s questions) to one of them, with a message',
    async (width) => {
      const other = await newQuestion(web.system, asker.token, { title: `Which glass for a Märzen? (${width})`, tags: ['lager'] });
      await web.system.searchCaughtUp();
      const page = await web.newPage(width, 844);
      await web.signIn(page, asker.email, `/questions/${questionId}`);
      await page.getByRole('link', { name: 'Find experts' }).click();
      await expect(page.getByLabel('What is it about?').inputValue()).resolves.toBe('How cold should a lager ferment?');
      const result = page.locator('ol.experts > li', { has: page.getByRole('heading', { name: 'Erik Expert' }) });
      await result.getByText('Forward a question to Erik Expert').click();
      const which = result.getByLabel('Which question');
      await expect(which.inputValue()).resolves.toBe(String(questionId));
      await which.selectOption({ label: `Which glass for a Märzen? (${width})` });
      await result.getByLabel('Message (optional)').fill('You know your glasses');
      await web.accessible(page, `experts-forward-${width}`);
      await result.getByRole('button', { name: 'Forward' }).click();
      await result.getByRole('status').filter({ hasText: 'Forwarded to Erik Expert.' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await web.shot(page, `experts-forward-${width}`);
      const forwards = await web.system.api.get(`${API}/questions/${other.id}/forward`).set(...as(asker));
      expect(forwards.body.items.map((f: { user: { id: number } }) => f.user.id)).toEqual([erik.id]);
      await waitFor(
        async () =>
          (await web.system.api.get(`${API}/notifications`).set(...as(erik))).body.items.some(
            (n: { type: string; question_id: number; message: string | null }) =>
              n.type === 'question_forwarded' && n.question_id === other.id && n.message === 'You know your glasses',
          ),
        { what: 'Erik’s notification of the forward, with its message' },
      );
    },
  );
});

describe('administration', () => {
  test('on a phone: no sideways scroll; every section readable within the width', async () => {
    const page = await web.newPage(390, 844);
    expect((await page.context().request.post('/session', { data: ADMIN })).ok()).toBe(true);
    await page.goto('/admin');
    await page.getByLabel('Name of the network').waitFor();
    await page.getByRole('heading', { name: 'Sign-in and identity-provider groups' }).waitFor();
    await page.getByText(/^Ready: searches are answered/).waitFor();
    // With what makes it wide: a group mapping (a row of roles and spaces) and a finished export (a long file name).
    await page.getByRole('button', { name: 'Add a group mapping' }).click();
    await page.getByRole('button', { name: 'Start a content export' }).click();
    await page.locator('ul.exports li', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    // Counts in the language's plural forms ("1 question", not "1 questions").
    const exported = (await page.locator('ul.exports li span', { hasText: / bytes?$/ }).textContent()) ?? '';
    const [, n, word] = /^(\d+) (questions?),/.exec(exported) ?? [];
    expect(word).toBe(n === '1' ? 'question' : 'questions');
    // Nothing drawn past the right edge (the failure names what is).
    const wide = await page.evaluate(
      "[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > 391 && getComputedStyle(e).position !== 'absolute').map((e) => e.tagName + '.' + e.className + ' ' + (e.id || ''))",
    );
    expect(wide).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await web.accessible(page, 'admin-390');
    await web.shot(page, 'admin-390');
  });
});

describe('the editor', () => {
  test('formats and previews Markdown, loaded only where there is an editor; what it sends is sanitised by the API, and HTML typed stays text', async () => {
    const page = await web.newPage();
    const chunks: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname.startsWith('/assets/chunk-')) chunks.push(req.url());
    });
    await web.signIn(page, asker.email);
    await page.locator('ol.questions li').first().waitFor();
    expect(chunks).toEqual([]);
    await page.getByRole('link', { name: 'Ask', exact: true }).click();
    await page.getByLabel('Title').fill('Which yeast for a cold lager ferment?');
    const description = page.getByRole('textbox', { name: 'Description' });
    await description.fill('Use Saflager <img src=x onerror="document.title=1"> and [this](javascript:alert(1)) ');
    await page.getByRole('button', { name: 'Bold' }).click();
    await description.press('End');
    await expect(description.inputValue()).resolves.toMatch(/\*\*\*\*$/);
    await description.fill('Use **Saflager** <img src=x onerror="document.title=1"> and [this](javascript:alert(1))');
    expect(chunks.length).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview of Description' });
    await preview.locator('strong', { hasText: 'Saflager' }).waitFor();
    await preview.getByText('<img src=x onerror="document.title=1">').waitFor();
    expect(await preview.locator('img').count()).toBe(0);
    expect(await preview.getByRole('link', { name: 'this' }).getAttribute('href')).toBe('#');
    await web.accessible(page, 'editor-preview');
    await web.shot(page, 'editor-preview');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByTestId('experts-asked').waitFor();
    const mine = await web.system.api.get(`${API}/questions?filter=my-questions&sort=id.desc&limit=1`).set(...as(asker));
    const stored = (await web.system.api.get(`${API}/questions/${mine.body.items[0].id}`).set(...as(asker))).body.description as string;
    expect(stored).toContain('<strong>Saflager</strong>');
    // The typed tag arrives as text; no element, no script address.
    expect(stored).toContain('&lt;img src=x');
    expect(stored).not.toMatch(/<img|javascript:/i);
    await page.getByRole('link', { name: 'Open your question' }).click();
    await page.locator('#question-body strong', { hasText: 'Saflager' }).waitFor();
    await page.locator('#question-body').getByText('<img src=x onerror="document.title=1">').waitFor();
    expect(await page.title()).not.toBe('1');
  });
});

describe('mentions', () => {
  test.each([390, 1280])(
    'at %i px: @ and a name offers people; the one chosen is mentioned, notified, and linked to their profile',
    async (width) => {
      const page = await web.newPage(width, 844);
      await web.signIn(page, asker.email, '/ask');
      const title = `Who knows decoction mashing? (${width})`;
      await page.getByLabel('Title').fill(title);
      const description = page.getByRole('textbox', { name: 'Description' });
      await description.pressSequentially('Maybe @Carl Coll');
      const offered = page.getByRole('list', { name: 'People to mention' });
      await offered.getByRole('button', { name: 'Mention Carl Colleague' }).waitFor();
      await web.accessible(page, `mention-offered-${width}`);
      await web.shot(page, `mention-offered-${width}`);
      await description.press('ArrowDown');
      await page.keyboard.press('Enter');
      await expect(description.inputValue()).resolves.toBe(`Maybe @[Carl Colleague](mention:${carl.id}) `);
      await offered.waitFor({ state: 'detached' });
      await description.pressSequentially('knows.');
      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByTestId('experts-asked').waitFor();
      const mine = await web.system.api.get(`${API}/questions?filter=my-questions&sort=id.desc&limit=1`).set(...as(asker));
      const asked = mine.body.items[0] as { id: number; title: string };
      expect(asked.title).toBe(title);
      const stored = (await web.system.api.get(`${API}/questions/${asked.id}`).set(...as(asker))).body.description as string;
      expect(stored).toContain(`<span data-mention-user-id="${carl.id}">@Carl Colleague</span>`);
      await waitFor(
        async () =>
          (await web.system.api.get(`${API}/notifications`).set(...as(carl))).body.items.some(
            (n: { type: string; question_id: number }) => n.type === 'mention_in_question' && n.question_id === asked.id,
          ),
        { what: 'Carl’s mention notification' },
      );
      await page.getByRole('link', { name: 'Open your question' }).click();
      const link = page.locator('#question-body').getByRole('link', { name: '@Carl Colleague' });
      await link.click();
      await page.getByRole('heading', { name: 'Carl Colleague' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/users/${carl.id}`);
    },
  );
});

describe('notifications', () => {
  test('by day, each with what happened and who did it; one "mark as read"; the count goes once they are shown; in German on a phone', async () => {
    const share = await web.system.api
      .post(`${API}/questions/${questionId}/share`)
      .set(...as(erik))
      .send({ recipients: [dora.id], message: 'Have a look' });
    expect(share.status).toBeLessThan(300);
    await waitFor(
      async () =>
        (await web.system.api.get(`${API}/notifications`).set(...as(dora))).body.items.some(
          (n: { type: string }) => n.type === 'share_question',
        ),
      { what: 'the share notification' },
    );
    const page = await web.newPage();
    await web.signIn(page, dora.email, '/notifications');
    const today = page.getByRole('region', { name: 'Today' });
    const item = today.locator('ul.notifications li', { hasText: 'A question was shared with you' });
    await item.getByRole('link', { name: 'Erik Expert', exact: true }).waitFor();
    await item.getByRole('link', { name: /shared the question/ }).waitFor();
    // The sharer's own words, under what happened.
    expect(await item.getByRole('blockquote', { name: 'Their message' }).textContent()).toBe('Have a look');
    // Shown, so seen: the count in the navigation goes.
    await waitFor(async () => (await page.getByTestId('unseen').count()) === 0, { what: 'the unseen count gone' });
    await web.accessible(page, 'notifications');
    await web.shot(page, 'notifications');
    // One unread signal: the bar and the bold words ("unread" for screen readers only); one "mark as read", for all.
    expect(await item.getAttribute('class')).toBe('unread');
    expect(await item.getByRole('button').count()).toBe(0);
    expect(await item.locator('.what > .visually-hidden').textContent()).toBe('unread ');
    await page.getByRole('button', { name: 'Mark all as read' }).click();
    await item.getByText('unread').waitFor({ state: 'detached' });
    expect(await item.getAttribute('class')).toBe('read');
    const stored = await web.system.api.get(`${API}/notifications`).set(...as(dora));
    const shared = stored.body.items.find((n: { type: string }) => n.type === 'share_question');
    expect([shared.is_read, shared.is_seen, shared.message]).toEqual([true, true, 'Have a look']);

    await web.speak(dora, 'de');
    try {
      const phone = await web.newPage(390, 844);
      await web.signIn(phone, dora.email, '/notifications');
      await phone.getByRole('heading', { name: 'Heute' }).waitFor();
      await phone.getByText('Eine Frage wurde mit Ihnen geteilt').first().waitFor();
      expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await web.accessible(phone, 'notifications-de-390');
      await web.shot(phone, 'notifications-de-390');
    } finally {
      await web.speak(dora, 'en');
    }
  });
});

describe('settings', () => {
  test('the kinds of email grouped under the switch for email at all, which governs them', async () => {
    const page = await web.newPage(390, 844);
    await web.signIn(page, dora.email, '/settings');
    const group = page.getByRole('group', { name: 'About your questions' });
    const kind = group.getByLabel('A comment on your question');
    await kind.waitFor();
    await page.getByRole('group', { name: 'Mentions' }).getByLabel('You were mentioned in a comment').waitFor();
    expect(await kind.isDisabled()).toBe(false);
    await page.getByLabel('Email at all').uncheck();
    await page.getByText('Email is off: no email is sent, whatever is ticked below.').waitFor();
    expect(await kind.isDisabled()).toBe(true);
    const form = page.locator('form', { has: page.getByLabel('Email at all') });
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await web.system.api.get(`${API}/users/me/settings/communication/email`).set(...as(dora));
    expect(saved.body.email_enabled).toBe(false);
    await page.reload();
    await kind.waitFor();
    expect(await kind.isDisabled()).toBe(true);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await web.accessible(page, 'settings-390');
    await web.shot(page, 'settings-390');
    await page.getByLabel('Email at all').check();
    expect(await kind.isDisabled()).toBe(false);
  });
});

describe('the header', () => {
  test.each([
    ['en', { account: 'Your account', settings: 'Settings', review: 'Review', signOut: 'Sign out' }],
    ['de', { account: 'Ihr Konto', settings: 'Einstellungen', review: 'Prüfen', signOut: 'Abmelden' }],
  ] as const)(
    'on a phone in %s: one line; settings, review and signing out in a menu under the picture, by keyboard too',
    async (lang, names) => {
      const who = await web.person('Hanna', `Header-${lang}`);
      await web.speak(who, lang);
      const page = await web.newPage(390, 844);
      await web.signIn(page, who.email, '/');
      const nav = page.getByRole('navigation', { name: lang === 'en' ? 'Main' : 'Hauptnavigation' });
      const account = nav.getByRole('button', { name: names.account });
      await account.waitFor();
      // One line: every item of the header's top level at the same height.
      const centres = [];
      for (const item of await page.locator('header nav > ul > li').all()) {
        const box = (await item.boundingBox())!;
        centres.push(box.y + box.height / 2);
      }
      expect(centres.length).toBe(5);
      expect(Math.max(...centres) - Math.min(...centres)).toBeLessThan(4);
      expect((await page.locator('header').boundingBox())!.height).toBeLessThan(60);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      for (const name of [names.settings, names.review]) expect(await nav.getByRole('link', { name }).count()).toBe(0);
      expect(await nav.getByRole('button', { name: names.signOut }).count()).toBe(0);
      // A disclosure: Enter opens it, Tab walks into it, Escape closes it and focus is back on its button.
      expect(await account.getAttribute('aria-expanded')).toBe('false');
      await account.focus();
      await page.keyboard.press('Enter');
      await nav.getByRole('link', { name: names.settings }).waitFor();
      expect(await account.getAttribute('aria-expanded')).toBe('true');
      await nav.getByRole('link', { name: names.review }).waitFor();
      await nav.getByRole('button', { name: names.signOut }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.getAttribute("href")')).toBe(`/users/${who.id}`);
      await web.accessible(page, `header-menu-${lang}`);
      await web.shot(page, `header-menu-390-${lang}`);
      await page.keyboard.press('Escape');
      await nav.getByRole('link', { name: names.settings }).waitFor({ state: 'hidden' });
      expect(await page.evaluate('document.activeElement.getAttribute("aria-controls")')).toBe('account-menu');
      // Chosen from the menu, a page opens and the menu closes.
      await account.click();
      await nav.getByRole('link', { name: names.settings }).click();
      await page.waitForURL((url) => url.pathname === '/settings');
      expect(await account.getAttribute('aria-expanded')).toBe('false');
    },
  );
});

describe('states and people', () => {
  test('while the question loads, grey bars stand where it will be ("Loading" to screen readers); then they go', async () => {
    const page = await web.newPage(390, 844);
    await web.signIn(page, dora.email, '/');
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(`**${API}/questions/${questionId}/complete`, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`/questions/${questionId}`);
    const skeleton = page.locator('main .skeleton[aria-busy="true"]').first();
    await skeleton.waitFor();
    expect(await skeleton.getAttribute('role')).toBe('status');
    expect(await skeleton.textContent()).toBe('Loading…');
    expect(await page.locator('main .skeleton-line').count()).toBeGreaterThanOrEqual(3);
    await web.shot(page, 'question-loading');
    release();
    await page.locator('h1', { hasText: 'How cold should a lager ferment?' }).waitFor();
    await page.locator('main .skeleton').first().waitFor({ state: 'detached' });
  });

  test('an unknown address and an unknown question show the app’s not-found page with a way back; the API still answers JSON', async () => {
    const raw = await web.system.api.get('/no-such-page').set('accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(raw.status).toBe(404);
    expect(raw.text).toContain('<div id="app">');
    expect(raw.headers['content-security-policy']).toContain("script-src 'self'");
    const api = await web.system.api.get('/no-such-page');
    expect([api.status, api.body.code]).toEqual([404, 'NotFound']);
    const apiPath = await web.system.api.get(`${API}/no-such-thing`).set('accept', 'text/html');
    expect([apiPath.status, apiPath.body.code]).toEqual([404, 'NotFound']);

    for (const width of [1280, 390]) {
      const page = await web.newPage(width, 844);
      await web.signIn(page, asker.email, '/no-such-page');
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await web.accessible(page, `not-found-${width}`);
      await web.shot(page, `not-found-${width}`);
      await page.goto('/questions/987654321');
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await page.getByRole('link', { name: 'Back to the questions' }).click();
      await page.locator('ol.questions').waitFor();
    }
  });

  test('API answers of 1 KiB or more go gzipped to clients that take gzip; smaller ones, and to others, as they are', async () => {
    const get = (path: string, encoding?: string) => {
      const req = web.system.api.get(`${API}${path}`).set(...as(asker));
      return encoding === undefined ? req.unset('accept-encoding') : req.set('accept-encoding', encoding);
    };
    const large = await get(`/questions/${questionId}/complete`, 'gzip, deflate, br');
    expect(large.status).toBe(200);
    expect(large.headers['content-encoding']).toBe('gzip');
    expect(large.headers.vary).toMatch(/accept-encoding/i);
    expect(large.body.solutions).toHaveLength(3);
    const plain = await get(`/questions/${questionId}/complete`, undefined);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toEqual(large.body);
    expect((await get(`/questions/${questionId}/complete`, 'gzip;q=0, identity')).headers['content-encoding']).toBeUndefined();
    const small = await get('/notifications/count/unseen', 'gzip');
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  test('a name leads to the person’s profile', async () => {
    const res = await web.system.api
      .put(`${API}/users/${erik.id}`)
      .set(...as(erik))
      .send({ position: 'Head brewer', about: 'Brews <b>lagers</b> since 2004.' });
    expect(res.status).toBe(200);
    for (const width of [1280, 390]) {
      const page = await web.newPage(width, 844);
      await web.signIn(page, asker.email, `/questions/${questionId}`);
      await page.locator('article.solution').first().waitFor();
      await page.getByRole('article', { name: 'Solution by Erik Expert' }).getByRole('link', { name: 'Erik Expert' }).click();
      await page.getByRole('heading', { name: 'Erik Expert' }).waitFor();
      await page.getByText('Head brewer').waitFor();
      // What a profile says is read as text, never drawn as markup.
      await page.getByText('Brews lagers since 2004.').waitFor();
      expect(await page.locator('.about b').count()).toBe(0);
      expect(new URL(page.url()).pathname).toBe(`/users/${erik.id}`);
      // What he is known for (the tags he answers), and expert search's reasons on them.
      const known = page.getByRole('region', { name: 'Known for' });
      await known.getByRole('link', { name: 'lager', exact: true }).waitFor();
      await known.getByText(/^Why: lager \(/).waitFor();
      await known.getByText(/solutions?, average rating/).waitFor();
      const solved = page.getByRole('region', { name: /^Answered \d+ questions?$/ });
      await solved.getByRole('link', { name: 'How cold should a lager ferment?' }).waitFor();
      await page.getByText('Questions are asked anonymously: nobody’s profile lists them but their own.').waitFor();
      await page.getByRole('link', { name: 'Ask Erik Expert' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      await web.accessible(page, `profile-${width}`);
      await web.shot(page, `profile-${width}`);
    }
    // One's own profile lists one's questions.
    const own = await web.newPage(390, 844);
    await web.signIn(own, asker.email, `/users/${asker.id}`);
    await own.getByRole('region', { name: 'Questions' }).getByRole('link', { name: 'How cold should a lager ferment?' }).waitFor();
    await web.accessible(own, 'profile-own-390');
  });

  test('the questions a person answered: solution_author, also in a search; refused when not an id', async () => {
    await web.system.searchCaughtUp();
    const ids = async (query: string) => {
      const res = await web.system.api.get(`${API}/questions?${query}`).set(...as(dora));
      expect(res.status).toBe(200);
      return res.body.items.map((q: { id: number }) => q.id);
    };
    await expect(ids(`solution_author=${carl.id}`)).resolves.toEqual([questionId]);
    await expect(ids(`solution_author=${carl.id}&query=lager`)).resolves.toEqual([questionId]);
    await expect(ids(`solution_author=${asker.id}`)).resolves.toEqual([]);
    const bad = await web.system.api.get(`${API}/questions?solution_author=carl`).set(...as(dora));
    expect([bad.status, bad.body.code]).toEqual([400, 'ValidationError']);
  });
});
