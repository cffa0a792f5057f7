// Similar questions of a text through the running system, on either search engine: SemEval-2016
// task 3 subtask B (datasets/README.md) asked of GET /search/questions-similar, the protocol of
// bench/retrieval-cv.ts. The 670 related questions are imported into a fresh system (startBenchSystem,
// the sentence encoder on) through the content service's import, as eval:retrieval loads a BEIR folder
// (loadIndexed of infra/retrieval-eval.ts, which maps each related id to its question id by the
// import's external id): subject as title, body as description, the thread's comments (RelComment)
// as the question's comments, as retrieval-cv indexes them. Once the index has them all, embeddings
// included, and its topic vectors are trained on all (a rebuild when not, below), each of the 67
// original questions (subject and body, at most 1,000 characters, as retrieval-cv) asks,
// paging at the API's limit (100) until its 10 related questions are all answered or the answer ends
// (the service ranks 200 at most); they are ranked by the answer's order, those not answered last,
// ties by tieBreak of the id. MAP and MRR in percent over all 67 (no relevant question: AP 0), as
// bench/semeval.ts scores. The engine is the local index, or OpenSearch with ELASTICSEARCH_URL set
// (indices of this run's own, dropped at the end). Run: pnpm bench:semeval-similar

import { SEARCH_REBUILD_SUBJECT } from '@kn/contracts';
import { indexStatus } from '@kn/search';
import { type Corpus, loadIndexed, pollIndex } from '../infra/retrieval-eval.ts';
import { startBenchSystem } from './beer-system.ts';
import { report } from './lib.ts';
import { evaluate, type Original, semevalOriginals } from './retrieval-data.ts';

const originals = semevalOriginals();
const corpus: Corpus = {
  kind: 'beir',
  name: 'semeval2016-task3-similar',
  documents: originals.flatMap((o) => o.related.map((r) => ({ id: r.id, title: r.subject, texts: [r.body], comments: r.comments }))),
  queries: [],
};
const asked = (o: Original) => `${o.subject}\n${o.body}`.slice(0, 1000);
/** The API's largest page of similar questions. */
const PAGE = 100;

const engine = process.env.ELASTICSEARCH_URL ? `OpenSearch (${process.env.ELASTICSEARCH_URL})` : 'local';
const system = await startBenchSystem(Number(process.env.EVAL_PORT ?? 18097), { beer: false });
try {
  const me = await system.api.call('getMe', {});
  const questionOf = new Map(
    [...(await loadIndexed(corpus, { bus: system.bus, authorId: me.id, language: 'en' }))].map(([question, id]) => [id, question]),
  );
  const missing = corpus.documents.filter((d) => !questionOf.has(d.id));
  if (missing.length) throw new Error(`${missing.length} related questions were not imported (${missing[0]!.id}, …)`);
  // The topic vectors (question search's blend) are trained once the index has caught up, again after
  // 25% growth: when it caught up between two import batches they hold fewer than all questions, and
  // the figure would depend on the timing. A rebuild replays the streams and trains them once on all.
  let status = await indexStatus(system.bus);
  if (status.topics && status.topics.trained_on < status.questions) {
    await system.bus.nc.request(system.bus.subject(SEARCH_REBUILD_SUBJECT), '{}', { timeout: 30_000 });
    await pollIndex(system.bus)(status.questions);
    status = await indexStatus(system.bus);
    if (status.topics && status.topics.trained_on < status.questions)
      throw new Error(`the topic vectors hold ${status.topics.trained_on} of ${status.questions} questions after a rebuild`);
  }

  /** Each original's answer: the position of each of its related questions that was answered. */
  const positions = new Map<string, Map<string, number>>();
  let requests = 0;
  const started = performance.now();
  for (const o of originals) {
    const wanted = new Map(o.related.map((r) => [questionOf.get(r.id)!, r.id]));
    const found = new Map<string, number>();
    for (let offset = 0; found.size < wanted.size; offset += PAGE) {
      const page = await system.api.call('similarToText', { query: { query: asked(o), limit: PAGE, offset } });
      requests++;
      page.items.forEach((item, i) => {
        const id = wanted.get(item.id);
        if (id !== undefined && !found.has(id)) found.set(id, offset + i);
      });
      if (page.items.length < PAGE || offset + PAGE >= page.total) break;
    }
    positions.set(o.id, found);
  }
  const seconds = (performance.now() - started) / 1000;
  const position = (o: Original, id: string) => positions.get(o.id)!.get(id);
  // Answered ones by their order (1 / (1 + position)), the others 0: last, ties by tieBreak.
  const { MAP, MRR } = evaluate(originals, (o, r) => {
    const at = position(o, r.id);
    return at === undefined ? 0 : 1 / (1 + at);
  });
  const answered = originals.reduce((sum, o) => sum + positions.get(o.id)!.size, 0);
  report(
    `SemEval-2016 similar (GET /search/questions-similar): MAP ${MAP.toFixed(2)}, MRR ${MRR.toFixed(2)} (${originals.length} queries)`,
    `${process.env.ELASTICSEARCH_URL ? 'ELASTICSEARCH_URL=… ' : ''}pnpm bench:semeval-similar`,
    [
      {
        engine,
        model: status.embeddings.model ?? `none (${status.embeddings.reason})`,
        questions: status.questions,
        'topics trained on': status.topics?.trained_on ?? '–',
        MAP: MAP.toFixed(2),
        MRR: MRR.toFixed(2),
        'related answered': `${answered} of ${corpus.documents.length}`,
        requests,
        'asked in s': seconds.toFixed(1),
      },
    ],
  );
} finally {
  await system.stop();
}
