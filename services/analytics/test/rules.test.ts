import { analyticsOperations } from '@kn/contracts';
import { lastWeek } from '../src/domain/digest.ts';
import { topDecileShare } from '../src/domain/routing.ts';

const flowQuery = analyticsOperations.getAnalyticsFlow.query;

test('the busiest tenth of the experts: at least one expert, rounded up', () => {
  expect(topDecileShare([])).toBeNull();
  expect(topDecileShare([0, 0])).toBeNull();
  expect(topDecileShare([3])).toBe(1);
  // Ten experts: the busiest one.
  expect(topDecileShare([10, 1, 1, 1, 1, 1, 1, 1, 1, 2])).toBe(10 / 20);
  // Eleven experts: the busiest two.
  expect(topDecileShare([1, 1, 1, 1, 1, 1, 1, 1, 1, 5, 5])).toBe(10 / 19);
});

test('a range: from before to, at most five years by day, longer by week or month', () => {
  const parse = (q: Record<string, string>) => flowQuery.safeParse(q);
  expect(parse({ from: '2026-01-01', to: '2026-02-01' }).data).toMatchObject({ granularity: 'week', dimension: 'network' });
  expect(parse({ from: '2021-01-01', to: '2026-01-01', granularity: 'day' }).success).toBe(true);
  const long = parse({ from: '2020-01-01', to: '2026-01-01', granularity: 'day' });
  expect(long.error?.issues[0]).toMatchObject({ path: ['from'], message: expect.stringContaining('at most 1830 days at day granularity') });
  expect(parse({ from: '2020-01-01', to: '2026-01-01', granularity: 'week' }).success).toBe(true);
  expect(parse({ from: '2026-01-02', to: '2026-01-01' }).error?.issues[0]).toMatchObject({
    path: ['to'],
    message: 'to must be after from',
  });
  expect(parse({ from: '2026-02-30', to: '2026-03-01' }).success).toBe(false);
  expect(parse({ from: '2026-01-01T10:00Z', to: '2026-01-02T00:00:00.000Z', granularity: 'day' }).success).toBe(true);
  expect(parse({ from: '2026-01-01', to: '2026-02-01', dimension: 'colour' }).success).toBe(false);
});

test('the digest is about the last whole week, Monday to Monday (UTC)', () => {
  const week = (iso: string) => lastWeek(new Date(iso)).toISOString();
  // Sunday 6 December 2026: the week before began on Monday 23 November.
  expect(week('2026-12-06T23:59:59.999Z')).toBe('2026-11-23T00:00:00.000Z');
  // From Monday on, the week that just ended.
  expect(week('2026-12-07T00:00:00.000Z')).toBe('2026-11-30T00:00:00.000Z');
  expect(week('2026-12-09T12:00:00.000Z')).toBe('2026-11-30T00:00:00.000Z');
  // Across a year's end.
  expect(week('2027-01-04T08:00:00.000Z')).toBe('2026-12-28T00:00:00.000Z');
});
