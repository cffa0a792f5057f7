import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadConfig as loadGatewayConfig, start as startGateway } from '@kn/gateway';
import supertest from 'supertest';
import { API, webSession } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

/*
 * The web-facing surface as an outside security review saw it (issue 55): static files, the docs
 * page, the metrics listener, the session's body and origin rules, web sessions' limits and the
 * headers of every answer. The gateway runs behind a "proxy" on loopback (TRUST_PROXY), with a
 * web app of a few files of its own.
 */

let system: System;
let webRoot: string;
/** What system.createUser gives every user. */
const PASSWORD = 'password-1234';
/** The metrics' address: a loopback address other than 127.0.0.1, so that listening on all interfaces shows. */
const METRICS_HOST = '127.0.0.2';

beforeAll(async () => {
  webRoot = mkdtempSync(path.join(tmpdir(), 'kn-web-surface-'));
  mkdirSync(path.join(webRoot, 'assets'));
  writeFileSync(path.join(webRoot, 'index.html'), '<!doctype html><div id="app"></div><script src="/assets/app-1.js"></script>');
  writeFileSync(path.join(webRoot, 'assets', 'app-1.js'), 'console.log(1);');
  writeFileSync(path.join(webRoot, 'assets', 'app-1.js.gz'), gzipSync('console.log(1);'));
  system = await startSystem({ WEB_ROOT: webRoot, TRUST_PROXY: 'loopback', METRICS_HOST });
});
afterAll(async () => {
  await system?.stop();
  rmSync(webRoot, { recursive: true, force: true });
});

const admin = () => bearer(system.adminToken);
async function settings(change: Record<string, unknown>) {
  const res = await system.api
    .put(`${API}/settings`)
    .set(...admin())
    .send(change);
  expect(res.status).toBe(200);
}

describe('static files', () => {
  test('a missing or malformed asset is 404 (or 400) in the error shape, and nothing is logged as an error', async () => {
    const errors = jest.spyOn(system.gateway.logger, 'error');
    try {
      for (const address of [
        '/assets/missing.js',
        '/assets/%2e%2e/index.html',
        '/assets/..%2findex.html',
        '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
        '/assets/app-1.js%00.html',
        '/assets/',
        '/assets',
      ]) {
        const res = await system.api.get(address);
        expect({ address, status: res.status, code: res.body.code }).toEqual({ address, status: 404, code: 'NotFound' });
      }
      const undecodable = await system.api.get('/assets/%E0%A4%A');
      expect([undecodable.status, undecodable.body.code]).toEqual([400, 'ValidationError']);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
    // What is there is still served, gzipped to browsers that take it.
    expect((await system.api.get('/assets/app-1.js').set('accept-encoding', 'identity')).text).toBe('console.log(1);');
    expect((await system.api.get('/assets/app-1.js').set('accept-encoding', 'gzip')).headers['content-encoding']).toBe('gzip');
  });
});

describe('the API reference page', () => {
  test('has a Content-Security-Policy without inline script, cannot be framed, and serves only the files it loads', async () => {
    for (const address of [`${API}/docs`, `${API}/docs/`]) {
      const page = await system.api.get(address);
      expect(page.status).toBe(200);
      const csp = page.headers['content-security-policy'] as string;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(/script-src[^;]*unsafe/.test(csp)).toBe(false);
      expect(page.headers['x-frame-options']).toBe('DENY');
      // Every script is a file of the page's own origin.
      expect(page.text).not.toMatch(/<script(?![^>]*\ssrc="\/)/);
    }
    for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js'])
      expect((await system.api.get(`${API}/docs/assets/${file}`)).status).toBe(200);
    // swagger-ui-dist's demo pages and everything else it ships are not served.
    for (const file of [
      'index.html',
      'oauth2-redirect.html',
      'oauth2-redirect.js',
      'swagger-initializer.js',
      'index.js',
      'index.css',
      'swagger-ui.js',
      'swagger-ui-es-bundle.js',
      'swagger-ui-standalone-preset.js',
      'swagger-ui-bundle.js.map',
      'favicon-32x32.png',
      'package.json',
      '',
    ]) {
      const res = await system.api.get(`${API}/docs/assets/${file}`);
      expect({ file, status: res.status }).toEqual({ file, status: 404 });
    }
  });
});

describe('metrics', () => {
  test('every process serves /metrics on METRICS_HOST only, and says so in its metrics URL', async () => {
    const urls = [system.gateway.metricsUrl, ...Object.values(system.services).map((s) => s.runtime.metricsUrl)];
    // The gateway and every service (users, content, notifications, search, exports, analytics, chat).
    expect(urls).toHaveLength(8);
    for (const url of urls) {
      expect(new URL(url).hostname).toBe(METRICS_HOST);
      expect((await fetch(url)).status).toBe(200);
      // The same port on another address of this machine: nothing listens there.
      const elsewhere = new URL(url);
      elsewhere.hostname = '127.0.0.1';
      await expect(fetch(elsewhere)).rejects.toThrow();
    }
  });
});

describe('POST /session', () => {
  test('takes JSON in UTF-8 (or UTF-16/32) only, as the API does: another charset or type is 415 and signs no one in', async () => {
    const { user } = await system.createUser();
    const body = JSON.stringify({ email: user.email, password: PASSWORD });
    for (const type of ['application/json; charset=utf-7', 'application/json; charset="UTF-7"', 'application/json; charset=latin1']) {
      for (const address of ['/session', `${API}/auth/login`]) {
        const res = await system.api.post(address).set('content-type', type).send(body);
        expect({ address, type, status: res.status, code: res.body.code }).toEqual({
          address,
          type,
          status: 415,
          code: 'UnsupportedMediaType',
        });
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    }
    const text = await system.api.post('/session').set('content-type', 'text/plain').send(body);
    expect([text.status, text.body.code]).toEqual([415, 'UnsupportedMediaType']);
    const utf8 = await system.api.post('/session').set('content-type', 'application/json; charset=utf-8').send(body);
    expect(utf8.status).toBe(201);
  });
});

describe('web sessions', () => {
  test('the network settings hold a cap per person and an idle timeout, with their defaults', async () => {
    const res = await system.api.get(`${API}/settings`).set(...admin());
    expect(res.body).toMatchObject({ web_sessions_per_user: 10, web_session_idle_minutes: 7 * 24 * 60 });
    for (const change of [{ web_sessions_per_user: -1 }, { web_session_idle_minutes: 30 * 24 * 60 + 1 }, { web_sessions_per_user: 1.5 }]) {
      const refused = await system.api
        .put(`${API}/settings`)
        .set(...admin())
        .send(change);
      expect(refused.status).toBe(400);
    }
    expect((await system.api.get(`${API}/settings`).set(...admin())).body).toEqual(res.body);
  });

  test('signing in beyond web_sessions_per_user ends the person’s oldest sessions at once; API tokens are not counted', async () => {
    await settings({ web_sessions_per_user: 3 });
    try {
      const { user, auth } = await system.createUser();
      const credentials = { email: user.email, password: PASSWORD };
      const sessions: Array<Awaited<ReturnType<typeof webSession>>> = [];
      for (let i = 0; i < 3; i++) sessions.push(await webSession(system.api, credentials));
      // Each is in use (and so in the gateway's cache) before the next sign-in.
      for (const s of sessions) expect((await system.api.get('/session').set('cookie', s.cookie)).status).toBe(200);
      sessions.push(await webSession(system.api, credentials));
      const live = async () => {
        const statuses: number[] = [];
        for (const s of sessions) statuses.push((await system.api.get('/session').set('cookie', s.cookie)).status);
        return statuses;
      };
      expect(await live()).toEqual([401, 200, 200, 200]);
      sessions.push(await webSession(system.api, credentials));
      expect(await live()).toEqual([401, 401, 200, 200, 200]);
      // The API token the person logged in with earlier still works; another person's sessions are their own.
      expect((await system.api.get(`${API}/users/me`).set(...auth)).status).toBe(200);
    } finally {
      await settings({ web_sessions_per_user: 10 });
    }
  });

  test('a session unused for web_session_idle_minutes ends; one in use lives on (the test clock moves, nothing sleeps)', async () => {
    await settings({ web_session_idle_minutes: 30 });
    try {
      const { user, auth } = await system.createUser();
      const { cookie } = await webSession(system.api, { email: user.email, password: PASSWORD });
      const minutes = (n: number) => system.clock.advance(n * 60_000);
      const status = async () => (await system.api.get('/session').set('cookie', cookie)).status;
      minutes(29);
      expect(await status()).toBe(200);
      // 58 minutes after signing in, 29 after its last use.
      minutes(29);
      expect(await status()).toBe(200);
      minutes(31);
      expect(await status()).toBe(401);
      expect((await system.api.get(`${API}/users/me`).set('cookie', cookie)).status).toBe(401);
      // An API token has no idle timeout.
      expect((await system.api.get(`${API}/users/me`).set(...auth)).status).toBe(200);
    } finally {
      await settings({ web_session_idle_minutes: 7 * 24 * 60 });
    }
  });
});

describe('the origin of a change with the session cookie', () => {
  test('behind a trusted proxy that rewrites Host, X-Forwarded-Host and -Proto name the origin', async () => {
    const { user } = await system.createUser();
    const proxied = { host: 'gateway-7:8080', 'x-forwarded-host': 'kn.example.com', 'x-forwarded-proto': 'https' };
    const session = await webSession(
      system.api,
      { email: user.email, password: PASSWORD },
      { ...proxied, origin: 'https://kn.example.com' },
    );
    // Over https (as the proxy says): the cookie is Secure.
    expect(session.setCookie).toContain('Secure');
    const change = (origin: string) =>
      system.api
        .put(`${API}/users/me/settings/communication/email`)
        .set({ ...proxied, origin, cookie: session.cookie, 'x-csrf-token': session.csrf })
        .send({ question_edited: 'off' });
    expect((await change('https://kn.example.com')).status).toBe(200);
    expect((await change('http://gateway-7:8080')).status).toBe(403);
    expect((await change('https://evil.example')).status).toBe(403);
    // Without the proxy's word the Host names it, as before.
    const direct = await webSession(system.api, { email: user.email, password: PASSWORD }, { origin: system.url });
    expect(direct.setCookie).not.toContain('Secure');
  });

  test('with PUBLIC_URL only its origin is accepted, whatever Host says; an https PUBLIC_URL makes the cookie Secure', async () => {
    const gateway = await startGateway(loadGatewayConfig({ ...system.env, PUBLIC_URL: 'https://Knowledge.Example.com/' }), {
      clock: system.clock,
    });
    try {
      const api = supertest(gateway.url);
      const { user } = await system.createUser();
      const credentials = { email: user.email, password: PASSWORD };
      const host = { host: 'internal-lb:8080' };
      expect(
        (
          await api
            .post('/session')
            .set({ ...host, origin: 'http://internal-lb:8080' })
            .send(credentials)
        ).status,
      ).toBe(403);
      expect(
        (
          await api
            .post('/session')
            .set({ ...host, origin: 'https://evil.example' })
            .send(credentials)
        ).status,
      ).toBe(403);
      const session = await webSession(api, credentials, { ...host, origin: 'https://knowledge.example.com' });
      expect(session.setCookie).toContain('Secure');
      const change = (origin: string) =>
        api
          .put(`${API}/users/me/settings/communication/email`)
          .set({ ...host, origin, cookie: session.cookie, 'x-csrf-token': session.csrf })
          .send({ question_edited: 'off' });
      expect((await change('http://internal-lb:8080')).status).toBe(403);
      expect((await change('https://knowledge.example.com')).status).toBe(200);
    } finally {
      await gateway.stop();
    }
  });

  test('PUBLIC_URL must be an http(s) base URL; empty is unset', () => {
    for (const value of [
      'knowledge.example.com',
      'ftp://knowledge.example.com',
      'https://knowledge.example.com/kn',
      'https://k.example.com/?a=1',
    ])
      expect(() => loadGatewayConfig({ PUBLIC_URL: value })).toThrow(/PUBLIC_URL/);
    // Empty is unset (docker-compose.yml passes an unset variable on as empty).
    expect(loadGatewayConfig({ PUBLIC_URL: '' }).PUBLIC_URL).toBeUndefined();
    expect(loadGatewayConfig({ PUBLIC_URL: 'https://k.example.com/' }).PUBLIC_URL).toBe('https://k.example.com/');
  });
});

describe('headers of every answer', () => {
  /** An API answer, an error, a page of the app, its files, the docs page, the session. */
  const addresses = [
    `${API}/healthz`,
    `${API}/users/me`,
    `${API}/questions/424242`,
    `${API}/no-such-endpoint`,
    '/',
    '/assets/app-1.js',
    '/assets/missing.js',
    `${API}/docs`,
    `${API}/openapi.json`,
    '/session',
  ];
  const get = (address: string) => system.api.get(address).set(...admin());

  test('COOP, a restrictive Permissions-Policy, nosniff and no framing on API, web and docs answers; no HSTS over plain http', async () => {
    for (const address of addresses) {
      const res = await get(address);
      const what = `${address} ${res.status}`;
      expect({ what, coop: res.headers['cross-origin-opener-policy'] }).toEqual({ what, coop: 'same-origin' });
      const permissions = res.headers['permissions-policy'] as string;
      for (const feature of ['camera=()', 'microphone=()', 'geolocation=()', 'payment=()', 'usb=()'])
        expect({ what, permissions: permissions.includes(feature) }).toEqual({ what, permissions: true });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  test('HSTS when the request came over https: the trusted proxy says so; an untrusted one is not believed', async () => {
    for (const address of addresses) {
      const res = await get(address).set('x-forwarded-proto', 'https');
      expect({ address, hsts: res.headers['strict-transport-security'] }).toEqual({ address, hsts: 'max-age=31536000' });
    }
    const untrusting = await startGateway(loadGatewayConfig({ ...system.env, TRUST_PROXY: 'false' }), { clock: system.clock });
    try {
      const res = await supertest(untrusting.url).get(`${API}/healthz`).set('x-forwarded-proto', 'https');
      expect(res.headers['strict-transport-security']).toBeUndefined();
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    } finally {
      await untrusting.stop();
    }
  });
});
