/**
 * SCIM filters (RFC 7644 §3.4.2.2): `userName eq "a@b.c" and (active eq true or not (title pr))`,
 * value paths (`emails[type eq "work"]`) included. Parsed into a tree that lists (domain/scim/store.ts)
 * turn into SQL and PATCH paths (patch.ts) evaluate against a resource.
 */

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type Filter =
  | { op: 'and' | 'or'; left: Filter; right: Filter }
  | { op: 'not'; filter: Filter }
  | { op: 'pr'; attr: string }
  | { op: CompareOp; attr: string; value: string | number | boolean | null }
  | { op: 'value'; attr: string; filter: Filter };

/** A filter or path that cannot be parsed: SCIM's 400 invalidFilter (or invalidPath for PATCH). */
export class ScimFilterError extends Error {}

const COMPARE = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);
/** Attribute paths: names, sub-attributes, and schema URNs before them (`urn:…:User:department`). */
const ATTR = /^(?:urn:[A-Za-z0-9.:_-]+:)?[A-Za-z$][A-Za-z0-9_$-]*(?:\.[A-Za-z$][A-Za-z0-9_$-]*)?$/;
export const MAX_FILTER_LENGTH = 2000;
const MAX_DEPTH = 50;

type Token = { kind: 'punct' | 'word' | 'string'; text: string; value?: string };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if ('()[]'.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < input.length && input[j] !== '"') j += input[j] === '\\' ? 2 : 1;
      if (j >= input.length) throw new ScimFilterError('an unterminated string');
      const text = input.slice(i, j + 1);
      let value: string;
      try {
        value = JSON.parse(text) as string;
      } catch {
        throw new ScimFilterError(`a malformed string: ${text}`);
      }
      tokens.push({ kind: 'string', text, value });
      i = j + 1;
    } else {
      let j = i;
      while (j < input.length && !' \t\n\r()[]"'.includes(input[j]!)) j++;
      tokens.push({ kind: 'word', text: input.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

/** Parses a filter, or throws ScimFilterError saying what is wrong. */
export function parseFilter(input: string): Filter {
  if (input.length > MAX_FILTER_LENGTH) throw new ScimFilterError(`filters are at most ${MAX_FILTER_LENGTH} characters`);
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const isWord = (t: Token | undefined, word: string) => t?.kind === 'word' && t.text.toLowerCase() === word;
  const expect = (text: string) => {
    const t = next();
    if (t?.kind !== 'punct' || t.text !== text) throw new ScimFilterError(`expected "${text}"${t ? ` before ${t.text}` : ' at the end'}`);
  };

  function orExpr(depth: number): Filter {
    if (depth > MAX_DEPTH) throw new ScimFilterError('the filter nests too deep');
    let left = andExpr(depth);
    while (isWord(peek(), 'or')) {
      next();
      left = { op: 'or', left, right: andExpr(depth) };
    }
    return left;
  }
  function andExpr(depth: number): Filter {
    let left = unary(depth);
    while (isWord(peek(), 'and')) {
      next();
      left = { op: 'and', left, right: unary(depth) };
    }
    return left;
  }
  function unary(depth: number): Filter {
    const t = peek();
    if (isWord(t, 'not')) {
      next();
      expect('(');
      const filter = orExpr(depth + 1);
      expect(')');
      return { op: 'not', filter };
    }
    if (t?.kind === 'punct' && t.text === '(') {
      next();
      const filter = orExpr(depth + 1);
      expect(')');
      return filter;
    }
    return attrExpr(depth);
  }
  function attrExpr(depth: number): Filter {
    const t = next();
    if (t?.kind !== 'word' || !ATTR.test(t.text))
      throw new ScimFilterError(t ? `expected an attribute, not ${t.text}` : 'the filter ends early');
    const attr = t.text;
    const after = peek();
    if (after?.kind === 'punct' && after.text === '[') {
      next();
      const filter = orExpr(depth + 1);
      expect(']');
      return { op: 'value', attr, filter };
    }
    const opToken = next();
    const op = opToken?.kind === 'word' ? opToken.text.toLowerCase() : '';
    if (op === 'pr') return { op: 'pr', attr };
    if (!COMPARE.has(op)) throw new ScimFilterError(opToken ? `unknown operator ${opToken.text}` : `${attr} needs an operator`);
    const v = next();
    if (!v || v.kind === 'punct') throw new ScimFilterError(`${attr} ${op} needs a value`);
    return { op: op as CompareOp, attr, value: literal(v) };
  }

  const filter = orExpr(0);
  if (pos < tokens.length) throw new ScimFilterError(`unexpected ${tokens[pos]!.text}`);
  return filter;
}

function literal(t: Token): string | number | boolean | null {
  if (t.kind === 'string') return t.value!;
  const word = t.text.toLowerCase();
  if (word === 'true') return true;
  if (word === 'false') return false;
  if (word === 'null') return null;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t.text)) return Number(t.text);
  throw new ScimFilterError(`${t.text} is not a value (strings are quoted)`);
}

/** The value of an attribute of a resource, attribute names compared case-insensitively. */
export function attribute(resource: unknown, name: string): unknown {
  if (!resource || typeof resource !== 'object' || Array.isArray(resource)) return undefined;
  const key = Object.keys(resource).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (resource as Record<string, unknown>)[key];
}

/** Splits `urn:…:User:name.givenName` into the schema URN (or null) and the attribute's names. */
export function splitPath(attr: string): { schema: string | null; names: string[] } {
  if (attr.toLowerCase().startsWith('urn:')) {
    const at = attr.lastIndexOf(':');
    return { schema: attr.slice(0, at), names: attr.slice(at + 1).split('.') };
  }
  return { schema: null, names: attr.split('.') };
}

/** The values an attribute path reaches in a resource (multi-valued attributes flattened). */
function reach(resource: unknown, attr: string): unknown[] {
  const { schema, names } = splitPath(attr);
  let current: unknown[] = [schema ? attribute(resource, schema) : resource];
  for (const name of names) {
    current = current.flatMap((v) => (Array.isArray(v) ? v : [v])).map((v) => attribute(v, name));
  }
  // A complex multi-valued attribute compared as a whole compares its `value` sub-attribute.
  return current
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .map((v) => (v && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v))
    .filter((v) => v !== undefined);
}

function compare(op: CompareOp, actual: unknown, expected: string | number | boolean | null): boolean {
  if (expected === null) return op === 'eq' ? actual === null : op === 'ne' ? actual !== null : false;
  if (typeof actual === 'string' && typeof expected === 'string') {
    // Every string attribute of ours is caseExact false but `id` and `externalId`, which are opaque.
    const a = actual.toLowerCase();
    const e = expected.toLowerCase();
    switch (op) {
      case 'eq':
        return a === e;
      case 'ne':
        return a !== e;
      case 'co':
        return a.includes(e);
      case 'sw':
        return a.startsWith(e);
      case 'ew':
        return a.endsWith(e);
      case 'gt':
        return a > e;
      case 'ge':
        return a >= e;
      case 'lt':
        return a < e;
      case 'le':
        return a <= e;
    }
  }
  if (op === 'eq') return actual === expected;
  if (op === 'ne') return actual !== expected;
  if (typeof actual === 'number' && typeof expected === 'number')
    return op === 'gt'
      ? actual > expected
      : op === 'ge'
        ? actual >= expected
        : op === 'lt'
          ? actual < expected
          : op === 'le'
            ? actual <= expected
            : false;
  return false;
}

/** Whether a resource (or an element of a multi-valued attribute) matches a filter. */
export function matches(filter: Filter, resource: unknown): boolean {
  switch (filter.op) {
    case 'and':
      return matches(filter.left, resource) && matches(filter.right, resource);
    case 'or':
      return matches(filter.left, resource) || matches(filter.right, resource);
    case 'not':
      return !matches(filter.filter, resource);
    case 'pr':
      return reach(resource, filter.attr).some((v) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0));
    case 'value': {
      const { schema, names } = splitPath(filter.attr);
      let holder: unknown = schema ? attribute(resource, schema) : resource;
      for (const name of names) holder = attribute(holder, name);
      const elements = Array.isArray(holder) ? holder : holder === undefined ? [] : [holder];
      return elements.some((e) => matches(filter.filter, e));
    }
    default: {
      const { op, value } = filter;
      const values = reach(resource, filter.attr);
      return op === 'ne' ? values.every((v) => compare('ne', v, value)) : values.some((v) => compare(op, v, value));
    }
  }
}
