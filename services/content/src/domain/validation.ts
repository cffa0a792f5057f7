import type { ValidityPeriod } from '@kn/contracts';

const months: Record<ValidityPeriod, number | null> = {
  months_three: 3,
  months_six: 6,
  year_one: 12,
  years_two: 24,
  unlimited: null,
};

/**
 * When a validity period that starts at `from` ends: calendar months in UTC, clamped to the last
 * day of the target month (31 August + 6 months = 28/29 February). `unlimited` never expires.
 */
export function expiryOf(period: ValidityPeriod | string | null, from: Date): Date | null {
  if (period === null) return null;
  const n = months[period as ValidityPeriod];
  if (n === undefined || n === null) return null;
  const target = new Date(from.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + n);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}
