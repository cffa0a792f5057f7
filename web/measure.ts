// Measures the web app on a running system (docs/measurements.md): what the first load ships
// (JS and CSS as transferred, gzipped), how long until the question list is usable (a new browser
// profile, signed in, opening /, until the first question is shown), and how many requests the
// largest page makes (the question with the most solutions, until the network is idle), and how many
// requests and milliseconds that page takes until its first solution shows (a new profile each round).
//   node web/measure.ts [base URL] [email] [password] [selector of a solution's author name]
//   (defaults: http://127.0.0.1:8080, the administrator, `article.solution .author`)
import { chromium, type Page } from 'playwright-core';

const [base = 'http://127.0.0.1:8080', email = 'admin@example.com', password = 'change-me-now', authorShown] = process.argv.slice(2);
const ROUNDS = 5;
/** The first solution with its author's name: the page as a person reads it. */
const AUTHOR_SHOWN = authorShown ?? 'article.solution .author';

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  const fresh = async () => {
    const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    const signedIn = await context.request.post('/session', { data: { email, password } });
    if (!signedIn.ok()) throw new Error(`signing in failed: ${signedIn.status()} ${await signedIn.text()}`);
    return { context, page: await context.newPage() };
  };
  const listTimes: number[] = [];
  let shipped = { js: 0, css: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const { context, page } = await fresh();
    const sizes = { js: 0, css: 0 };
    page.on('response', async (res) => {
      const type = res.headers()['content-type'] ?? '';
      const kind = type.includes('javascript') ? 'js' : type.includes('css') ? 'css' : null;
      if (kind) sizes[kind] += (await res.request().sizes()).responseBodySize;
    });
    const started = performance.now();
    await page.goto('/');
    await page.locator('ol.questions li').first().waitFor({ timeout: 60_000 });
    listTimes.push(performance.now() - started);
    shipped = sizes;
    await context.close();
  }
  const { context, page } = await fresh();
  const top = await context.request.get('/api/v1/questions?sort=solution_count.desc&limit=1');
  const question = ((await top.json()) as { items: Array<{ id: number; solution_count: number }> }).items[0]!;
  const requests = await countRequests(page, `/questions/${question.id}`);
  await context.close();
  const firstSolution: Array<{ ms: number; named: number; requests: number }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { context, page } = await fresh();
    await page.goto('/experts');
    await page.locator('h1').waitFor();
    firstSolution.push(await untilFirstSolution(page, `/questions/${question.id}`));
    await context.close();
  }
  firstSolution.sort((a, b) => a.ms - b.ms);
  const median = firstSolution[Math.floor(ROUNDS / 2)]!;
  listTimes.sort((a, b) => a - b);
  console.log(`web app at ${base}`);
  console.log(`first load: JS ${shipped.js} B, CSS ${shipped.css} B as transferred (gzipped), ${shipped.js + shipped.css} B together`);
  console.log(
    `question list usable: median ${Math.round(listTimes[Math.floor(ROUNDS / 2)]!)} ms, best ${Math.round(listTimes[0]!)} ms, worst ${Math.round(listTimes.at(-1)!)} ms (${ROUNDS} new profiles)`,
  );
  console.log(`largest page: /questions/${question.id} (${question.solution_count} solutions): ${requests} requests`);
  console.log(
    `largest page until its first solution shows (moving there in the app, ${ROUNDS} new profiles): median ${Math.round(median.ms)} ms, its author's name at ${Math.round(median.named)} ms, ${median.requests} requests by then (best ${Math.round(firstSolution[0]!.ms)} ms, worst ${Math.round(firstSolution.at(-1)!.ms)} ms)`,
  );
} finally {
  await browser.close();
}

async function countRequests(page: Page, path: string) {
  let n = 0;
  page.on('request', () => n++);
  await page.goto(path, { waitUntil: 'networkidle' });
  await page.locator('article.solution').first().waitFor();
  return n;
}

/**
 * From a click on a link of the app (no page load: what a person moving in it waits for) until the
 * first solution shows, then until its author's name shows; the requests made until then.
 */
async function untilFirstSolution(page: Page, path: string) {
  let requests = 0;
  page.on('request', () => requests++);
  const started = performance.now();
  await page.evaluate((href) => {
    const a = document.createElement('a');
    a.href = href;
    document.body.append(a);
    a.click();
  }, path);
  await page.locator('article.solution').first().waitFor();
  const ms = performance.now() - started;
  await page.locator(AUTHOR_SHOWN).first().waitFor();
  return { ms, named: performance.now() - started, requests };
}
