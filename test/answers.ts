import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { answersOf, type Operation, operations } from '@kn/contracts';
import { scrapeMetric } from '@kn/testing';

/**
 * What the gateway answered in a test run, checked against what each operation declares
 * (`answersOf`, the statuses of docs/openapi.json): every system a test file starts writes its
 * gateway's (method, route, status) counts into the run's folder when it stops, and the run's
 * global teardown fails on any status an operation does not declare.
 */
const folder = (runId: string) => path.join(tmpdir(), `kn-test-${runId}-answers`);

/** Appends the answers counted by a gateway (its Prometheus page) to the run's record. */
export async function recordAnswers(metricsUrl: string) {
  const runId = process.env.KN_TEST_RUN;
  if (!runId) return;
  const samples = await scrapeMetric(metricsUrl, 'kn_http_requests_total');
  const lines: string[] = [];
  for (const [labels, count] of samples) {
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1];
    const [method, route, status] = [label('method'), label('route'), label('status')];
    if (method && route && status && count > 0) lines.push(JSON.stringify({ method, route, status: Number(status) }));
  }
  mkdirSync(folder(runId), { recursive: true });
  // One line per answer kind: appends of whole lines from parallel workers do not interleave.
  if (lines.length) appendFileSync(path.join(folder(runId), `${process.pid}.jsonl`), `${lines.join('\n')}\n`);
}

/** The answers of the run that their operation does not declare; removes the record. */
export function undeclaredAnswers(runId: string): string[] {
  const dir = folder(runId);
  if (!existsSync(dir)) return [];
  const declared = new Map<string, Set<number>>();
  for (const op of Object.values(operations) as Operation[])
    if (op.http) declared.set(`${op.http.method} /api/v1${op.http.path}`, new Set(answersOf(op).keys()));
  const undeclared = new Set<string>();
  try {
    for (const file of readdirSync(dir))
      for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)) {
        const { method, route, status } = JSON.parse(line) as { method: string; route: string; status: number };
        // Only the API's operations declare their answers (SCIM's are RFC 7644's).
        if (route === 'unmatched' || !route.startsWith('/api/v1')) continue;
        const statuses = declared.get(`${method === 'HEAD' ? 'GET' : method} ${route}`);
        if (!statuses?.has(status)) undeclared.add(`${method} ${route} answered ${status}`);
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [...undeclared].sort();
}
