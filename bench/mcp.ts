// The MCP layer's cost (docs/mcp.md): the search tool called over /mcp beside the same search as a
// REST request (GET /api/v1/questions?query=…), in one run on one system (users, content, search and
// the gateway as separate processes); then the gateway's memory with 100 MCP clients connected
// (initialized, one tool call each, their connections held open). The search tool a third time with
// an access token of a single sign-on provider (a stand-in, test/oidc-provider.ts): the JWT checks
// and the identity look-up beside the API token's path.
// Run: pnpm bench:mcp   (BENCH_SECONDS=5 for a quick run)
import { readFileSync, rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startOidcProvider } from '../test/oidc-provider.ts';
import { bearer, benchSpace, load, login, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const QUESTIONS = 300;
const SESSIONS = 100;
const WORDS = ['cache', 'build', 'deploy', 'hops', 'yeast', 'token', 'index', 'queue', 'backup', 'proxy'];
const space = await benchSpace();
const dir = `/tmp/kn-bench-mcp-${space.id}`;
const port = 18194;
const provider = await startOidcProvider({ id: 'knowledge-network', secret: 'bench-client-secret' });
const env = {
  ...serviceEnv(space, port),
  OIDC_ISSUER: provider.issuer,
  OIDC_CLIENT_ID: 'knowledge-network',
  OIDC_CLIENT_SECRET: 'bench-client-secret',
  SEARCH_INDEX_PATH: `${dir}/index.sqlite`,
  EMBEDDING_MODEL_PATH: `${dir}/no-model`,
};
const processes = [
  await startProcess('services/users/src/main.ts', env, 'users service ready'),
  await startProcess('services/content/src/main.ts', env, 'content service ready'),
  await startProcess('services/search/src/main.ts', env, 'search service ready'),
];
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const base = `http://127.0.0.1:${port}`;
/** The gateway's resident memory (MiB, /proc). */
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gateway.pid}/status`, 'utf8'))![1]) / 1024;
try {
  const admin = await login(`${base}/api/v1`);
  for (let i = 0; i < QUESTIONS; i++) {
    const [a, b] = [WORDS[i % WORDS.length], WORDS[(i * 7 + 3) % WORDS.length]];
    const q = await admin.call('createQuestion', {
      body: { title: `How do I tune the ${a} of the ${b} number ${i}?`, description: `<p>The ${a} and the ${b} are slow.</p>`, tags: [a!] },
    });
    await admin.call('publishQuestion', { params: { id: q.id } });
  }
  const headers = bearer(admin);
  const rest = `/api/v1/questions?query=${encodeURIComponent('cache build')}&limit=10`;
  const mcp = {
    method: 'POST' as const,
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_questions', arguments: { query: 'cache build', limit: 10 } },
    }),
  };
  // The search index has every question once this finds all that match (the feed follows the stream).
  for (;;) {
    const page = await admin.call('listQuestions', { query: { query: 'cache build', limit: 1 } });
    if (page.total >= QUESTIONS / WORDS.length) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const pids = { gateway: gateway.pid!, users: processes[0]!.pid!, content: processes[1]!.pid!, search: processes[2]!.pid! };
  // Warm-up of both, then the two loads one after the other, alike.
  await load({ url: `${base}${rest}`, connections: CONNECTIONS, seconds: 2, headers });
  await load({ url: base, connections: CONNECTIONS, seconds: 2, headers, requests: [mcp] });
  const restResult = await load({ url: `${base}${rest}`, connections: CONNECTIONS, seconds: SECONDS, headers, processes: pids });
  const mcpResult = await load({ url: base, connections: CONNECTIONS, seconds: SECONDS, headers, requests: [mcp], processes: pids });
  // The administrator's account, linked by its verified address on the token's first use.
  const now = Math.floor(Date.now() / 1000);
  const jwt = await provider.accessToken({
    sub: 'bench-admin',
    aud: `${base}/mcp`,
    iat: now,
    exp: now + 3600,
    email: 'admin@example.com',
    email_verified: true,
  });
  const providerHeaders = { authorization: `Bearer ${jwt}` };
  await load({ url: base, connections: CONNECTIONS, seconds: 2, headers: providerHeaders, requests: [mcp] });
  const ssoResult = await load({
    url: base,
    connections: CONNECTIONS,
    seconds: SECONDS,
    headers: providerHeaders,
    requests: [mcp],
    processes: pids,
  });
  report(`question search, ${CONNECTIONS} connections, ${SECONDS} s each, ${QUESTIONS} questions`, 'pnpm bench:mcp', [
    { request: `REST GET ${rest}`, ...restResult },
    { request: 'MCP tools/call search_questions (same query, limit)', ...mcpResult },
    { request: "the same MCP call with the provider's JWT access token", ...ssoResult },
  ]);

  // Memory: 100 clients as assistants hold them (initialize, one call, the connection kept).
  const before = rssMiB();
  const clients: Client[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const client = new Client({ name: `bench-${i}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
    await client.callTool({ name: 'search_questions', arguments: { query: WORDS[i % WORDS.length], limit: 5 } });
    clients.push(client);
  }
  const after = rssMiB();
  report(`gateway memory, ${SESSIONS} MCP clients connected`, 'pnpm bench:mcp', [
    { state: 'after the loads, before the clients', rss_mib: before.toFixed(1) },
    {
      state: `${SESSIONS} clients initialized, one call each, open`,
      rss_mib: after.toFixed(1),
      per_client_kib: (((after - before) * 1024) / SESSIONS).toFixed(1),
    },
  ]);
  await Promise.all(clients.map((c) => c.close()));
  console.log(
    `headline: MCP search p50 ${mcpResult.p50_ms} ms / p99 ${mcpResult.p99_ms} ms vs REST p50 ${restResult.p50_ms} ms / p99 ${restResult.p99_ms} ms; throughput MCP/REST ${(mcpResult.requests_per_second / restResult.requests_per_second).toFixed(2)}; with the provider's JWT p50 ${ssoResult.p50_ms} ms / p99 ${ssoResult.p99_ms} ms; gateway RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB with ${SESSIONS} clients`,
  );
} finally {
  await stopProcess(gateway);
  for (const p of processes.reverse()) await stopProcess(p);
  await space.drop();
  await provider.stop();
  rmSync(dir, { recursive: true, force: true });
}
