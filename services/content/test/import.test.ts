import { ratingOf } from '../src/domain/import.ts';

test('votes become a rating: up votes count 5 stars, down votes 1', () => {
  expect(ratingOf(0, 0)).toEqual({ rating: null, rating_count: 0 });
  expect(ratingOf(3, 0)).toEqual({ rating: 5, rating_count: 3 });
  expect(ratingOf(3, 1)).toEqual({ rating: 4, rating_count: 4 });
});
