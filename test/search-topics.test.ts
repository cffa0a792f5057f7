import { waitFor } from '@kn/testing';
import { API, newQuestion } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

// Topic vectors (services/search/src/domain/topics.ts) in question search's blend, on the engine
// this run uses (infra/test.sh runs the file on both).
let system: System;
let token: string;
const probes: Record<string, number> = {};

beforeAll(async () => {
  system = await startSystem();
  token = (await system.createUser()).token;
  const ask = (title: string, description: string) => newQuestion(system, token, { title, description });
  // "simulator" and "emulator" share their questions' other words; "bottled" is another topic's.
  for (let i = 0; i < 12; i++) await ask(`Fast simulator for circuits ${i}`, 'qubits gates simulator noise');
  for (let i = 0; i < 12; i++) await ask(`Which emulator for circuits ${i}`, 'qubits gates emulator depth');
  for (let i = 0; i < 12; i++) await ask(`Priming sugar for bottles ${i}`, 'carbonation of bottled beer');
  // Alike to words: each has "zebra" and one word of its topic, the same number of times. Equal
  // scores rank the later question first: without its topic, the emulator one would come second.
  probes.emulator = (await ask('Zebra emulator', 'zebra emulator')).id;
  probes.bottled = (await ask('Zebra bottled', 'zebra bottled')).id;
  await system.searchCaughtUp();
}, 120_000);
afterAll(() => system?.stop());

const indexView = async () => (await system.api.get(`${API}/search/index`).set(...bearer(system.adminToken))).body;

test('trained once the index has caught up; the index view says on how many questions', async () => {
  // Trained again at each quarter of growth: the last training read at least four fifths of the 38.
  const { topics } = await waitFor(
    async () => {
      const view = await indexView();
      return view.topics.trained_on >= 31 && !view.topics.training && view;
    },
    { timeoutMs: 30_000, what: 'the topic vectors trained' },
  );
  expect(topics.trained_on).toBeLessThanOrEqual(38);
});

test('of two questions alike to the words of a query, the one on its topic ranks first', async () => {
  await waitFor(async () => (await indexView()).topics.trained_on >= 31, { timeoutMs: 30_000, what: 'the topic vectors trained' });
  const res = await system.api
    .get(`${API}/questions`)
    .query({ query: 'simulator zebra' })
    .set(...bearer(token));
  expect(res.status).toBe(200);
  const ranked = res.body.items.map((q: { id: number }) => q.id).filter((id: number) => id === probes.emulator || id === probes.bottled);
  expect(ranked).toEqual([probes.emulator, probes.bottled]);
});
