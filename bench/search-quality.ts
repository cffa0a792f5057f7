// Search quality on the imported beer site: for each duplicate pair whose both ends exist, ask
// with the duplicate's title through GET /questions?query= and through GET /questions/:id/similar,
// and find the original. Reports recall@10 and MRR. Run: pnpm bench:search-quality
import { call } from '@kn/bus';
import { importOperations } from '@kn/contracts';
import { startBeerSystem } from './beer-system.ts';
import { report } from './lib.ts';

const system = await startBeerSystem(18093);
try {
  const links = await call(system.bus, 'listQuestionLinks', importOperations.listQuestionLinks, {
    actor: null,
    params: undefined,
    query: { kind: 'duplicate', limit: 10000, offset: 0 },
    body: undefined,
    requestId: 'bench',
    url: '',
  });
  const rank = (items: Array<{ id: number }>, self: number, wanted: number) => {
    const others = items.filter((i) => i.id !== self);
    const at = others.findIndex((i) => i.id === wanted);
    return at < 0 ? null : at + 1;
  };
  const results = { query: [] as Array<number | null>, similar: [] as Array<number | null> };
  for (const link of links.items) {
    const duplicate = await system.api.call('getQuestion', { params: { id: link.question_id } }).catch(() => null);
    const original = await system.api.call('getQuestion', { params: { id: link.linked_question_id } }).catch(() => null);
    if (!duplicate || !original) continue;
    const byQuery = await system.api.call('listQuestions', { query: { limit: 11, query: duplicate.title } });
    const bySimilar = await system.api.call('similarToQuestion', { params: { id: duplicate.id }, query: { limit: 10 } });
    results.query.push(rank(byQuery.items, duplicate.id, original.id));
    results.similar.push(rank(bySimilar.items, duplicate.id, original.id));
  }
  const metrics = (ranks: Array<number | null>) => ({
    pairs: ranks.length,
    'recall@10': Number((ranks.filter((r) => r !== null && r <= 10).length / ranks.length).toFixed(3)),
    MRR: Number((ranks.reduce<number>((s, r) => s + (r !== null && r <= 10 ? 1 / r : 0), 0) / ranks.length).toFixed(3)),
    'found first': ranks.filter((r) => r === 1).length,
  });
  report('Beer site duplicates: the original among the top 10 for the duplicate', 'pnpm bench:search-quality', [
    { method: 'GET /questions?query=<duplicate title>', ...metrics(results.query) },
    { method: 'GET /questions/:duplicate/similar', ...metrics(results.similar) },
  ]);
} finally {
  await system.stop();
}
