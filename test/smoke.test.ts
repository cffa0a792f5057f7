import { bearer, type System, startSystem } from './system.ts';

let system: System;
beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

test('the administrator reads themself', async () => {
  const res = await system.api.get('/api/v1/users/me').set(...bearer(system.adminToken));
  expect(res.status).toBe(200);
  expect(res.body.email).toBe('admin@example.com');
});
