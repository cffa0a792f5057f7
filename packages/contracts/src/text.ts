import { z } from 'zod';
import { MAX_LIST_ITEMS } from './common.ts';

/**
 * Text rules the OpenAPI document states exactly. Each helper checks a value in code (linear time,
 * whatever a client sends) and gives the document the one `pattern` that accepts the same values,
 * both made from the same parameters; packages/contracts/test/text.test.ts holds the two to each
 * other. The patterns mean the same to JavaScript with the u flag, to ECMA-262 validators and to
 * Python's `re`, which outside testers generate values from: explicit classes, no \s, \d or `.`,
 * lengths in code points (as JSON Schema and zod count).
 */

/** What String.prototype.trim takes off either end (ECMA-262 WhiteSpace and LineTerminator), as a class body. */
const SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** The gateway refuses NUL in every string (gateway/src/request.ts): no pattern here admits it. */
const NUL = '\\u0000';

/** The regex of a pattern source, read as the document's readers read it (code points). */
export const patternRegex = (source: string) => new RegExp(source, 'u');
/** A value's characters (code points, not UTF-16 units). */
const length = (value: string) => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};
/** A literal in a pattern: only the syntax characters escaped (the u flag refuses other escapes). */
const literal = (value: string) => value.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
/** An ASCII word in any case (`[Aa][Ll][Ll]`): what `toLowerCase()` compares. */
export const caseless = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);
/** A whole value that is `source` once trimmed. */
export const trimmedPattern = (source: string) => `^[${SPACE}]*(?:${source})[${SPACE}]*$`;
/** One or more characters, none of them NUL or of `without`, neither end a space: a trimmed, non-empty item. */
export const trimmedItem = (without = '') => `[^${SPACE}${NUL}${without}](?:[^${NUL}${without}]*[^${SPACE}${NUL}${without}])?`;

/**
 * Text that is trimmed: at most `max` characters as sent, at least `min` once trimmed (spaces
 * alone are no value), none of the characters of `without` (a class body, `,` say); the value is
 * the trimmed text.
 */
export function trimmedText(options: { min?: number; max: number; without?: string; message?: string }) {
  const { min = 0, max, without = '' } = options;
  const edge = `[^${SPACE}${NUL}${without}]`;
  const inner = `[^${NUL}${without}]`;
  const core = min === 0 ? `${inner}*` : min === 1 ? `${edge}(?:${inner}*${edge})?` : `${edge}${inner}{${min - 2},}${edge}`;
  const pattern = min === 0 ? `^${core}$` : `^[${SPACE}]*${core}[${SPACE}]*$`;
  const refused = patternRegex(`[${NUL}${without}]`);
  return z
    .string()
    .max(max)
    .refine((v) => length(v.trim()) >= min, {
      message: min === 1 ? 'must not be empty or only spaces' : `must have at least ${min} characters, not counting spaces at either end`,
    })
    .refine((v) => !refused.test(v), { message: options.message ?? `must not contain NUL${without ? ` or any of ${without}` : ''}` })
    .trim()
    .meta({ pattern });
}

/**
 * A comma-separated query list: split at commas, each item trimmed, empty ones dropped, at most
 * `max` items (empty ones not counted), each matching `item` (a pattern source that admits trimmed, non-empty items only).
 * The document's pattern admits exactly such lists.
 */
export function commaList(item: string, what: string, max = MAX_LIST_ITEMS) {
  const space = `[${SPACE}]*`;
  const full = `${space}(?:${item})${space}`;
  const more = `(?:,${space})*`;
  const pattern = `^(?:${space},)*(?:${full}${more}(?:,${full}${more}){0,${max - 1}}|${space})$`;
  const one = patternRegex(`^(?:${item})$`);
  return z
    .string()
    .meta({ pattern })
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(one, what)).max(max, `at most ${max} items`));
}

/** A comma list of fixed values. */
export const enumList = <const V extends readonly [string, ...string[]]>(values: V, max?: number) =>
  commaList(values.map(literal).join('|'), `one of ${values.join(', ')}`, max).pipe(z.array(z.enum(values)));

/**
 * The decimal digits of a whole number from 1 to `max`, leading zeros allowed up to `digits`
 * digits in all: a pattern source (no anchors).
 */
export function positiveDecimal(max: number, digits = String(max).length) {
  const top = String(max);
  const alternatives: string[] = [];
  for (let zeros = 0; zeros < digits; zeros++) {
    const room = Math.min(digits - zeros, top.length);
    const shorter = room === top.length ? room - 1 : room;
    const forms: string[] = [];
    if (shorter >= 1) forms.push(shorter === 1 ? '[1-9]' : `[1-9][0-9]{0,${shorter - 1}}`);
    if (room === top.length) {
      // As many digits as max: each form keeps max's first digits and is smaller at the next one.
      for (let i = 0; i < top.length; i++) {
        const low = i === 0 ? 1 : 0;
        const below = Number(top[i]) - 1;
        if (below < low) continue;
        const rest = top.length - i - 1;
        const digit = below === low ? String(low) : `[${low}-${below}]`;
        forms.push(`${top.slice(0, i)}${digit}${rest > 1 ? `[0-9]{${rest}}` : rest ? '[0-9]' : ''}`);
      }
      forms.push(top);
    }
    alternatives.push(`${'0'.repeat(zeros)}(?:${forms.join('|')})`);
  }
  return alternatives.join('|');
}
