import { expiryOf } from '../services/content/src/domain/validation.ts';

test('validity periods are calendar months in UTC, clamped to the end of shorter months', () => {
  const from = new Date('2026-01-15T10:20:30.456Z');
  expect(expiryOf('months_three', from)?.toISOString()).toBe('2026-04-15T10:20:30.456Z');
  expect(expiryOf('months_six', from)?.toISOString()).toBe('2026-07-15T10:20:30.456Z');
  expect(expiryOf('year_one', from)?.toISOString()).toBe('2027-01-15T10:20:30.456Z');
  expect(expiryOf('years_two', from)?.toISOString()).toBe('2028-01-15T10:20:30.456Z');
  expect(expiryOf('unlimited', from)).toBeNull();
  expect(expiryOf(null, from)).toBeNull();
  expect(expiryOf('months_six', new Date('2026-08-31T00:00:00.000Z'))?.toISOString()).toBe('2027-02-28T00:00:00.000Z');
  expect(expiryOf('months_six', new Date('2027-08-31T00:00:00.000Z'))?.toISOString()).toBe('2028-02-29T00:00:00.000Z');
  expect(expiryOf('months_three', new Date('2026-11-30T23:59:59.999Z'))?.toISOString()).toBe('2027-02-28T23:59:59.999Z');
});
