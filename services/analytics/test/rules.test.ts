import { analyticsOperations } from '@kn/contracts';
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
