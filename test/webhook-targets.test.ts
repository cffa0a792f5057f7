import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@kn/testing';
import { API, publishedQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System, startSystem } from './system.ts';

// Webhooks go out from inside our network: without WEBHOOK_ALLOW_INTERNAL (test/system.ts sets it
// for the other files) a webhook URL may not name a machine around us. No request of this file
// leaves the machine: non-public addresses are refused at validation, and the delivery-time check
// is shown with `localhost`, which resolves to 127.0.0.1.

// A real receiver on 127.0.0.1: it must never be called here.
const received: string[] = [];
const receiver: Server = createServer((req, res) => {
  received.push(req.url ?? '');
  req.resume();
  res.end('ok');
});

let strict: System;
let lenientUsers: System;
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  [strict, lenientUsers] = await Promise.all([
    startSystem({ WEBHOOK_ALLOW_INTERNAL: 'false' }),
    // The users service accepts an internal URL (as it would a name that resolves to a public
    // address today and to an internal one at delivery, DNS rebinding); the notifications
    // service, which sends, does not.
    startSystem(
      { WEBHOOK_ALLOW_INTERNAL: 'false', OUTBOX_POLL_MS: '100', WEBHOOK_RETRY_BASE_MS: '100' },
      { partEnv: (part): Record<string, string> => (part === 'users' ? { WEBHOOK_ALLOW_INTERNAL: 'true' } : {}) },
    ),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.allSettled([strict?.stop(), lenientUsers?.stop()]);
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const putSettings = (system: System, body: Record<string, unknown>) =>
  system.api
    .put(`${API}/settings`)
    .set(...bearer(system.adminToken))
    .send(body);

describe('PUT /settings refuses webhook URLs that reach our own network', () => {
  test.each([
    ['cloud metadata (link-local)', 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
    ['IPv4 loopback', 'http://127.0.0.1:8080/hook', /loopback/],
    ['IPv4 loopback, decimal', 'http://2130706433/hook', /127\.0\.0\.1 is a loopback/],
    ['IPv4 loopback, short hex', 'https://0x7f.1/hook', /127\.0\.0\.1 is a loopback/],
    ['localhost', 'http://localhost:8080/hook', /localhost is this machine/],
    ['a name under localhost', 'http://hooks.localhost/hook', /this machine/],
    ['private 10/8', 'http://10.1.2.3/hook', /private/],
    ['private 172.16/12', 'http://172.31.255.1/hook', /private/],
    ['private 192.168/16', 'http://192.168.0.10/hook', /private/],
    ['CGNAT 100.64/10', 'http://100.100.1.1/hook', /CGNAT/],
    ['unspecified', 'http://0.0.0.0:8080/hook', /unspecified/],
    ['IPv4 multicast', 'http://239.1.2.3/hook', /multicast/],
    ['IPv6 loopback', 'http://[::1]:8080/hook', /::1 is a loopback/],
    ['IPv6 unspecified', 'http://[::]/hook', /unspecified/],
    ['IPv6 unique local', 'http://[fd00:ec2::254]/hook', /private/],
    ['IPv6 unique local fc00', 'http://[fc00::1]/hook', /private/],
    ['IPv6 link-local', 'http://[fe80::1]/hook', /link-local/],
    ['IPv6 multicast', 'http://[ff02::1]/hook', /multicast/],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook', /loopback/],
    ['IPv4-mapped metadata', 'http://[::ffff:a9fe:a9fe]/hook', /link-local/],
    ['NAT64 of a private address', 'http://[64:ff9b::a00:1]/hook', /private/],
    ['credentials', 'https://hook-user:hook-password@hooks.example.com/hook', /user name or password/],
  ])('%s: 400 ValidationError naming webhook_url; nothing changes', async (_what, url, reason) => {
    const res = await putSettings(strict, { webhook_url: url, network_name: 'Changed?' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ValidationError', errors: [{ path: 'webhook_url', code: 'invalid_value' }] });
    expect(res.body.errors[0].message).toMatch(reason);
    const now = await strict.api.get(`${API}/settings`).set(...bearer(strict.adminToken));
    expect(now.body).toMatchObject({ webhook_url: null, network_name: 'Knowledge Network' });
  });

  test('public addresses are accepted (webhooks stay off: nothing is sent to them)', async () => {
    for (const url of ['https://93.184.215.14/hook', 'https://[2606:4700:4700::1111]:8443/hook', 'http://8.8.8.8/']) {
      const res = await putSettings(strict, { webhook_enabled: false, webhook_url: url });
      expect(res.status).toBe(200);
      expect(res.body.webhook_url).toBe(url);
    }
    expect((await putSettings(strict, { webhook_url: null })).status).toBe(200);
  });
});

describe('delivery checks the address again, as it connects', () => {
  test('a URL whose name resolves to 127.0.0.1 is not called: the delivery fails at once with the reason', async () => {
    const system = lenientUsers;
    const url = `http://localhost:${(receiver.address() as AddressInfo).port}/hook`;
    const set = await putSettings(system, { webhook_enabled: true, webhook_url: url });
    expect(set.status).toBe(200);
    const poser = await system.createUser();
    const author = await system.createUser();
    await system.services.users.runtime.relay.flush();
    await system.services.notifications.consumers.users.caughtUp();
    const question = await publishedQuestion(system, poser.token);
    await publishedSolution(system, author.token, question);
    await system.services.content.runtime.relay.flush();
    await system.services.notifications.consumers.content.caughtUp();
    const [notification] = (await system.api.get(`${API}/notifications`).set(...poser.auth)).body.items;
    expect(notification).toMatchObject({ type: 'new_solution_to_your_question' });
    const delivery = await waitFor(
      async () => {
        const res = await system.api.get(`${API}/webhooks/deliveries?limit=100`).set(...bearer(system.adminToken));
        const d = res.body.items.find((x: { notification_id: number }) => x.notification_id === notification.id);
        return d?.status === 'failed' && d;
      },
      { what: 'the delivery refused' },
    );
    expect(delivery).toMatchObject({ url, status: 'failed', attempts: 1, last_status_code: null, next_attempt: null, delivered: null });
    expect(delivery.last_error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(delivery.last_error).toContain('WEBHOOK_ALLOW_INTERNAL');
    expect(received).toEqual([]);
  });
});
