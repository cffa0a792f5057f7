// SCIM provisioning at a company's size: 10,000 users and 100 groups (of 100 members each) through
// /scim/v2 one by one, as an identity provider's first synchronisation sends them, with the users
// service's memory (resident set) sampled meanwhile. Run: pnpm bench:scim
// (BENCH_USERS, BENCH_GROUPS, BENCH_CONNECTIONS change the sizes).

import { readFileSync } from 'node:fs';
import { bearer, benchSpace, login, referenceText, report, serviceEnv, startProcess, stopProcess } from './lib.ts';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const GROUPS = Number(process.env.BENCH_GROUPS ?? 100);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

const space = await benchSpace();
const env = serviceEnv(space, 18090);

/** The resident set of a process in MiB (Linux). */
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const usersService = await startProcess('services/users/src/main.ts', env, 'users service ready');
const gateway = await startProcess('gateway/src/main.ts', env, 'gateway listening');
const base = 'http://127.0.0.1:18090';
try {
  const admin = await login(`${base}/api/v1`);
  const minted = await fetch(`${base}/api/v1/scim/tokens`, {
    method: 'POST',
    headers: { ...bearer(admin), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const { token } = (await minted.json()) as { token: string };
  // Half of the groups give a role: their members' roles are worked out as they join.
  await admin.call('updateNetworkSettings', {
    body: { idp_group_mappings: Array.from({ length: GROUPS / 2 }, (_, g) => ({ group: `Team ${g}`, roles: ['api_user' as const] })) },
  });
  const scim = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  const rss = { before: rssMiB(usersService.pid!), peak: 0 };
  const sampler = setInterval(() => {
    rss.peak = Math.max(rss.peak, rssMiB(usersService.pid!));
  }, 200);
  /** Runs `count` requests over CONNECTIONS concurrent loops; their latencies in ms. */
  const run = async (count: number, one: (i: number) => Promise<unknown>) => {
    const times: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let i = next++; i < count; i = next++) {
          const t = performance.now();
          await one(i);
          times.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
    return {
      requests: count,
      seconds: Math.round(seconds * 10) / 10,
      per_second: Math.round(count / seconds),
      p50_ms: at(0.5),
      p99_ms: at(0.99),
    };
  };

  const ids: string[] = [];
  const users = await run(USERS, async (i) => {
    const created = await scim('POST', '/Users', {
      schemas: [USER],
      userName: `person${i}@corp.example`,
      externalId: `idp-${i}`,
      name: { givenName: `Given${i}`, familyName: `Family${i}` },
      emails: [{ value: `person${i}@corp.example`, primary: true }],
      active: true,
    });
    ids[i] = created.id as string;
  });
  const perGroup = Math.floor(USERS / GROUPS);
  const groups = await run(GROUPS, (g) =>
    scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: `Team ${g}`,
      members: ids.slice(g * perGroup, (g + 1) * perGroup).map((value) => ({ value })),
    }),
  );
  // What an identity provider asks before each change: is this person there already?
  const lookups = await run(1000, (i) =>
    scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "person${(i * 7) % USERS}@corp.example"`)}`),
  );
  clearInterval(sampler);
  const total = (await scim('GET', '/Users?count=0')).totalResults;

  report(
    `SCIM provisioning through /scim/v2: ${USERS} users, then ${GROUPS} groups of ${perGroup} (half of them mapped to a role), ${CONNECTIONS} concurrent`,
    'pnpm bench:scim',
    [
      { step: 'POST /Users', ...users },
      { step: 'POST /Groups (with members)', ...groups },
      { step: 'GET /Users?filter=userName eq', ...lookups },
    ],
  );
  console.log(
    `headline: ${USERS} users in ${users.seconds} s and ${GROUPS} groups in ${groups.seconds} s (${total} users listed); users service RSS ${Math.round(rss.before)} MiB before, peak ${Math.round(rss.peak)} MiB; ${referenceText()}`,
  );
} finally {
  await stopProcess(gateway);
  await stopProcess(usersService);
  await space.drop();
}
