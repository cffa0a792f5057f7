import fc from 'fast-check';
import type { z } from 'zod';
import { commaList, enumList, patternRegex, positiveDecimal, trimmedText } from '../src/text.ts';

/** The pattern a schema gives the OpenAPI document: that of its input side. */
const patternOf = (schema: z.ZodType): string => {
  const input = (schema._zod.def as unknown as { in?: z.ZodType }).in;
  return input ? patternOf(input) : (schema.meta()?.pattern as string);
};

/** Strings made of what the rules care about: spaces of each kind, commas, NUL, letters, digits, astral characters. */
const text = (pieces: string[], maxLength = 40) => fc.array(fc.constantFrom(...pieces), { maxLength }).map((parts) => parts.join(''));
const SPACES = [' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '\u3000'];
// Spaces that String.prototype.trim keeps (Python's str.isspace() counts the first two): not spaces here.
const NOT_SPACES = ['\u001c', '\u0085', '\u180e', '\u200b'];

/** The schema accepts exactly what its document pattern (and maxLength) accepts. */
function agrees(schema: z.ZodType, values: fc.Arbitrary<string>, maxLength = Number.POSITIVE_INFINITY) {
  const pattern = patternRegex(patternOf(schema));
  fc.assert(
    fc.property(values, (value) => {
      const documented = pattern.test(value) && [...value].length <= maxLength;
      expect({ value, accepted: schema.safeParse(value).success }).toEqual({ value, accepted: documented });
    }),
    { numRuns: 3000 },
  );
}

test('trimmed text: as many characters as sent at most, at least min once trimmed, none excluded, no NUL', () => {
  const pieces = [...SPACES, ...NOT_SPACES, ',', '\u0000', 'a', 'é', '😀', 'x y'];
  agrees(trimmedText({ max: 12 }), text(pieces, 16), 12);
  agrees(trimmedText({ min: 1, max: 12, without: ',' }), text(pieces, 16), 12);
  agrees(trimmedText({ min: 4, max: 12 }), text(pieces, 16), 12);
  expect(trimmedText({ min: 1, max: 10 }).parse('  a b  ')).toBe('a b');
  expect(trimmedText({ max: 3 }).safeParse('😀😀😀').success).toBe(true);
});

test('comma lists: items trimmed, empty ones dropped and not counted, each of the rule, at most max', () => {
  const pieces = [...SPACES, ...NOT_SPACES, ',', ',', '\u0000', 'id', 'views', '.asc', '.up', 'x'];
  agrees(commaList('(?:id|views)(?:\\.(?:asc|desc))?', 'sort criteria', 3), text(pieces));
  agrees(enumList(['id', 'views'], 2), text(pieces));
  agrees(
    commaList('[^\\u0000,\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]', 'letters', 4),
    text(pieces),
  );
  expect(enumList(['id', 'views']).parse(' views ,, id ,')).toEqual(['views', 'id']);
});

test('positive decimals: 1 to max, leading zeros within the digits, nothing else', () => {
  const check = (max: number, digits: number) => {
    const pattern = patternRegex(`^(?:${positiveDecimal(max, digits)})$`);
    const rule = (v: string) => new RegExp(`^[0-9]{1,${digits}}$`).test(v) && Number(v) >= 1 && Number(v) <= max;
    fc.assert(
      fc.property(text(['0', '1', '2', '3', '4', '6', '7', '9', '5', '8'], digits + 2), (v) => {
        expect({ v, matches: pattern.test(v) }).toEqual({ v, matches: rule(v) });
      }),
      { numRuns: 5000 },
    );
    for (const v of [String(max), String(max + 1), `0${max}`, '1', '0', '0'.repeat(digits - 1) + 1])
      expect({ v, matches: pattern.test(v) }).toEqual({ v, matches: rule(v) });
  };
  check(2147483647, 10);
  check(999_999_999, 9);
  check(305, 4);
});
