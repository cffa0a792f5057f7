import type { ApiError } from '@kn/client/http';
import { de } from './i18n/de.ts';
import { type Catalogue, en, type MessageKey } from './i18n/en.ts';
import { signal } from './signal.ts';

/** The languages the UI speaks; any other interface language falls back to English. */
const catalogues: Record<string, Catalogue> = { en, de };
export const UI_LANGUAGES = Object.keys(catalogues);

export const language = signal('en');

export function setLanguage(code: string) {
  const chosen = code in catalogues ? code : 'en';
  document.documentElement.lang = chosen;
  language.set(chosen);
}

/** The string of the user's language, `{name}` filled in from `vars`. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = (catalogues[language.get()] ?? en)[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_m, name: string) => String(vars[name] ?? ''));
}

/** A number as the language writes it (107,242 · 107.242; 4.5 · 4,5), with `digits` decimals at most. */
export const formatNumber = (n: number, digits = 0) => new Intl.NumberFormat(language.get(), { maximumFractionDigits: digits }).format(n);

/**
 * The plural form of the language's rules for `count` (`key.one`, `key.other`; Intl.PluralRules),
 * `{count}` filled in as the language writes numbers.
 */
export function tn(key: string, count: number, vars: Record<string, string | number> = {}): string {
  const form = new Intl.PluralRules(language.get()).select(count);
  const chosen = `${key}.${form}` in en ? `${key}.${form}` : `${key}.other`;
  return t(chosen as MessageKey, { ...vars, count: formatNumber(count) });
}

/** How long ago (or until) `iso`, in words of the language: "3 days ago", "vor 3 Tagen". */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  const format = new Intl.RelativeTimeFormat(language.get(), { numeric: 'auto' });
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['week', 604_800],
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ];
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  return format.format(0, 'minute');
}

/** What an API error says, in the user's language: the code's sentence and one line per failed field. */
export function errorLines(err: unknown): string[] {
  const api = err as ApiError;
  if (!api || typeof api.code !== 'string') return [t('error.network')];
  if (api.code === 'RateLimited') return [t('error.RateLimited', { seconds: api.headers.get('retry-after') ?? '60' })];
  if (api.code === 'InternalError') return [t('error.InternalError', { id: api.body.error_id ?? api.requestId ?? '' })];
  return [t(`error.${api.code}` as MessageKey), ...api.fields.map(fieldErrorLine)];
}

/** One failed field of an API error, in the user's language (named by its last path segment that is no list index). */
export function fieldErrorLine(field: { path: string; code: string; message: string }): string {
  const name = field.path.split('.').findLast((segment) => !/^\d+$/.test(segment)) ?? field.path;
  const specific = `error.field.${name}.${field.code}` as MessageKey;
  const general = `error.field.${field.code}` as MessageKey;
  const label = `field.${name}` as MessageKey;
  const fieldName = label in en ? t(label) : name;
  if (specific in en) return t(specific);
  return general in en ? t(general, { field: fieldName }) : t('error.field.other', { field: fieldName, message: field.message });
}
