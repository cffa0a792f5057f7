// Property-based fuzzing of the REST API, driven by the OpenAPI document (docs/openapi.json):
// fast-check generates requests for every operation (path × method) — schema-shaped bodies full of
// hostile strings and boundary numbers, wrong types, missing fields, deep and huge JSON, malformed
// bodies, hostile path and query parameters and upload file names — and they go through the real
// gateway. Shared by test/fuzz.test.ts and bench/fuzz.ts.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import pg from 'pg';
import type supertest from 'supertest';
import { API, newQuestion, publishedSolution } from './fixtures.ts';
import { bearer, type System } from './system.ts';

// A JSON schema of the OpenAPI document.
type Schema = any;
export type Method = 'get' | 'post' | 'put' | 'delete';
export type Role = 'admin' | 'user' | 'anonymous' | 'bogus';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  id: string;
  method: Method;
  /** The OpenAPI path, `/questions/{id}`. */
  path: string;
  params: Parameter[];
  body?: { kind: 'json' | 'multipart'; schema: Schema; required: boolean };
  /** False for the public operations (log-in, the export XSD). */
  secured: boolean;
  /** The statuses the document says the operation answers. */
  statuses: Set<number>;
}

export type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType?: string; text: string }
  | { kind: 'multipart'; field: string; filename: string; contentType: string; content: Buffer };

export interface FuzzRequest {
  op: string;
  method: Method;
  /** The URL below the base path, query string included. */
  url: string;
  role: Role;
  headers: Record<string, string>;
  body?: Body;
  /** What is hostile about it, for the report. */
  note: string;
}

export interface FuzzResult {
  request: FuzzRequest;
  status: number;
  ms: number;
  body: unknown;
  /** Set when no answer came within the timeout. */
  hung?: boolean;
  /** Set when the connection failed (reset, refused). */
  transportError?: string;
}

const BODY_LIMIT = 1024 * 1024;
/**
 * The system under fuzzing takes bodies up to 1 MiB (the default is 10 MiB): what happens at the
 * limit is the same, bodies of 10 MiB would only make every run slower. It is still over a NATS
 * message, so bodies just under it take the object-store path (docs/events.md, Large events).
 */
export const FUZZ_SETTINGS = { BODY_LIMIT: String(BODY_LIMIT) };

/** Every operation of the OpenAPI document, request body schemas with their $refs resolved. */
export function loadOperations(file = 'docs/openapi.json'): Operation[] {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const resolve = (schema: Schema, seen = 0): Schema => {
    if (!schema || typeof schema !== 'object' || seen > 20) return schema;
    if (Array.isArray(schema)) return schema.map((s) => resolve(s, seen + 1));
    if (typeof schema.$ref === 'string') {
      const target = schema.$ref.replace(/^#\//, '').split('/');
      let value = doc;
      for (const key of target) value = value?.[key];
      return resolve(value, seen + 1);
    }
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolve(v, seen + 1)]));
  };
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, Schema>>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'delete'] as const) {
      const op = item[method];
      if (!op) continue;
      const content = op.requestBody?.content ?? {};
      const json = content['application/json'];
      const multipart = content['multipart/form-data'];
      ops.push({
        id: op.operationId ?? `${method} ${path}`,
        method,
        path,
        params: (op.parameters ?? []).map((p: Schema) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          schema: resolve(p.schema ?? {}),
        })),
        body: json
          ? { kind: 'json', schema: resolve(json.schema ?? {}), required: Boolean(op.requestBody.required) }
          : multipart
            ? { kind: 'multipart', schema: resolve(multipart.schema ?? {}), required: true }
            : undefined,
        secured: !(Array.isArray(op.security) && op.security.length === 0),
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
      });
    }
  }
  return ops;
}

// ---------------------------------------------------------------------------------------------
// Hostile values

export const SQL_INJECTION = ["'; drop table users; --", "' OR '1'='1", '1; select pg_sleep(30); --', '") or 1=1 --', "admin'--"];
export const HTML_INJECTION = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '"><svg onload=alert(1)>',
  'javascript:alert(1)',
];
export const PATH_TRAVERSAL = [
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  '....//....//etc/passwd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
];
export const UNICODE_EDGE = [
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  'lone \udfff low',
  'x\ud83dy',
  '\u202eevil\u202c.txt',
  '\u200b\u200c\u200d\ufeff',
  '👩‍👩‍👧‍👦🔥🏳️‍🌈',
  'e\u0301\u0301\u0301',
  'ｆｕｌｌｗｉｄｔｈ',
  '\u0661\u0662\u0663',
  'ﷺ𒐫𒈙',
  '\r\n\r\nX-Injected: 1',
  '\u0007\u001b[31mred',
  '\uffff\ufffe',
];
export const NUMBER_LIKE = ['NaN', 'Infinity', '-Infinity', '-0', '1e309', '0x10', '1_000', '9'.repeat(40), '-1', '0', '1.5', ' 1', ''];
export const MISC = ['__proto__', 'constructor', 'null', 'undefined', 'true', '$' + '{7*7}', '{{7*7}}', ' ', '%00', '%', '%zz', '\\'];
export const HOSTILE_STRINGS = [...SQL_INJECTION, ...HTML_INJECTION, ...PATH_TRAVERSAL, ...UNICODE_EDGE, ...NUMBER_LIKE, ...MISC];

const INT_BOUNDARIES = [
  0,
  -1,
  1,
  2147483647,
  2147483648,
  -2147483648,
  -2147483649,
  4294967296,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  1e21,
  1.5,
  -0.5,
];

const longString = fc.constantFrom('a'.repeat(100_000), '🔥'.repeat(30_000), `${"'".repeat(5000)}<script>`.repeat(10));
/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: codeUnit, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...HOSTILE_STRINGS), fc.constantFrom(...HOSTILE_STRINGS)).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: longString },
);

/** JSON values of any type (for wrong types). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, 2 ** 53, 'string', [], {}, [1, 2], { a: 1 }),
  hostileString,
  fc.double(),
  fc.integer(),
);

/** A value of another JSON type than the schema allows: always invalid for a typed schema. */
function wrongTypeFor(schema: Schema): fc.Arbitrary<unknown> {
  const types = new Set(typesOf(schema));
  const candidates: unknown[] = [];
  if (!types.has('string')) candidates.push('not the right type', "'; drop table users; --", '<script>x</script>');
  if (!types.has('number') && !types.has('integer')) candidates.push(12345, -1, 1.5);
  if (!types.has('boolean')) candidates.push(true, false);
  if (!types.has('object')) candidates.push({ nested: { deeper: 1 } }, {});
  if (!types.has('array')) candidates.push([1, 'two', null], []);
  if (!types.has('null')) candidates.push(null);
  return fc.constantFrom(...candidates);
}

function typesOf(schema: Schema): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return alternatives.flatMap(typesOf);
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.enum) return [...new Set(schema.enum.map((v: unknown) => (v === null ? 'null' : typeof v)))] as string[];
  if (schema.properties) return ['object'];
  return [];
}

/** Whether every value of a type not in the schema is refused (the schema is typed). */
const isTyped = (schema: Schema) => typesOf(schema).length > 0;

export interface ValueContext {
  /** Ids of existing objects, so requests reach deeper than a 404. */
  ids: number[];
}

/** A schema-shaped value whose strings and numbers are hostile or at the boundaries; sometimes off-type. */
export function valueFor(schema: Schema, ctx: ValueContext, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object' || depth > 6) return anyJson;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0)
    return fc.oneof(...alternatives.map((s: Schema) => valueFor(s, ctx, depth + 1)));
  const typed = (arb: fc.Arbitrary<unknown>) =>
    fc.oneof({ weight: 8, arbitrary: arb }, { weight: 1, arbitrary: wrongTypeFor(schema) }, { weight: 1, arbitrary: anyJson });
  if (Array.isArray(schema.enum)) return typed(fc.oneof(fc.constantFrom(...schema.enum), hostileString));
  if (schema.const !== undefined) return typed(fc.constant(schema.const));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 200, 200);
      const plain = fc.string({ minLength: min, maxLength: Math.max(min, max) });
      const formatted =
        schema.format === 'email'
          ? fc.constantFrom('a@example.com', "o'brien@example.com", '<s>@example.com', 'a@b', 'x'.repeat(300) + '@example.com')
          : schema.format === 'uri'
            ? fc.constantFrom(
                'http://127.0.0.1:1/x',
                'javascript:alert(1)',
                'file:///etc/passwd',
                'http://[::1]/',
                'https://example.com/💥',
              )
            : plain;
      return typed(
        fc.oneof(
          { weight: 3, arbitrary: hostileString },
          { weight: 1, arbitrary: formatted },
          { weight: 1, arbitrary: fc.tuple(plain, fc.constantFrom(...HOSTILE_STRINGS)).map(([s, h]) => `${s}${h}`) },
          {
            weight: 1,
            arbitrary: fc.constantFrom('x'.repeat(min), 'x'.repeat(max), 'x'.repeat(max + 1), 'x'.repeat(Math.max(0, min - 1))),
          },
        ),
      );
    }
    case 'integer':
    case 'number': {
      const bounds = [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum]
        .filter((v) => typeof v === 'number')
        .flatMap((v: number) => [v - 1, v, v + 1]);
      return typed(
        fc.oneof(
          fc.constantFrom(...INT_BOUNDARIES, ...bounds),
          ctx.ids.length ? fc.constantFrom(...ctx.ids) : fc.constant(1),
          fc.integer(),
          type === 'number' ? fc.double({ noNaN: true, noDefaultInfinity: true }) : fc.integer({ min: -5, max: 5 }),
        ),
      );
    }
    case 'boolean':
      return typed(fc.boolean());
    case 'null':
      return fc.oneof(fc.constant(null), anyJson);
    case 'array': {
      const items = valueFor(schema.items ?? {}, ctx, depth + 1);
      return typed(
        fc.oneof(
          { weight: 4, arbitrary: fc.array(items, { maxLength: 5 }) },
          { weight: 1, arbitrary: fc.constant(Array.from({ length: 2000 }, (_, i) => `tag-${i}`)) },
        ),
      );
    }
    default:
      if (type === 'object' || schema.properties || schema.additionalProperties) return typed(objectFor(schema, ctx, depth));
      return anyJson;
  }
}

/** An object of the schema: each property present or not, plus hostile extra fields now and then. */
function objectFor(schema: Schema, ctx: ValueContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const entries = Object.entries(properties).map(
    ([key, s]) => [key, fc.option(valueFor(s, ctx, depth + 1), { nil: undefined, freq: required.includes(key) ? 10 : 3 })] as const,
  );
  const extra = fc.dictionary(
    fc.constantFrom('__proto__', 'constructor', 'id', 'created', 'is_deleted', 'user_id', 'roles', 'author', '$where', '💥', ''),
    anyJson,
    { maxKeys: 2 },
  );
  const additional =
    schema.additionalProperties && typeof schema.additionalProperties === 'object'
      ? fc.dictionary(
          hostileString.map((s) => s.slice(0, 200)),
          valueFor(schema.additionalProperties, ctx, depth + 1),
          { maxKeys: 3 },
        )
      : fc.constant({});
  return fc
    .tuple(fc.tuple(...entries.map(([, arb]) => arb)), fc.option(extra, { nil: undefined, freq: 4 }), additional)
    .map(([values, more, add]) => {
      const out: Record<string, unknown> = { ...add };
      entries.forEach(([key], i) => {
        if (values[i] !== undefined) out[key] = values[i];
      });
      if (more)
        for (const [k, v] of Object.entries(more))
          Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
}

// ---------------------------------------------------------------------------------------------
// Raw bodies

/** `[[[[…]]]]` nested `levels` deep. */
export const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** `{"a":{"a":…1…}}` nested `levels` deep. */
export const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

const MALFORMED_JSON = [
  '{',
  '{"title": ',
  '{"title": "unterminated',
  "{'title': 'single quotes'}",
  '{"a":1,}',
  'undefined',
  'NaN',
  '{"a": NaN}',
  '{"a": 01}',
  '\u0000',
  '{"a":"\\ud800"}',
  '{"a":"\\x00"}',
  '[1,2',
  '<xml/>',
  "'; drop table users; --",
];

// ---------------------------------------------------------------------------------------------
// URLs

/** encodeURIComponent that also encodes lone surrogates (as their WTF-8 bytes: invalid UTF-8). */
export function encodeSegment(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

function concretePath(op: Operation, values: Record<string, string>) {
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? '1');
}

/**
 * The query string, at most ~10,000 characters: beyond the HTTP server's header limit (16 KiB)
 * node answers 431 before the gateway sees the request (a test of its own).
 */
function queryString(entries: Array<[string, string]>) {
  const parts: string[] = [];
  let length = 0;
  for (const [k, v] of entries) {
    const part = `${encodeSegment(k)}=${encodeSegment(v)}`;
    if (length + part.length > 10_000) continue;
    parts.push(part);
    length += part.length + 1;
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

const INVALID_ID = [
  'abc',
  '-1',
  '0',
  '1.5',
  '2147483648',
  '99999999999999999999999',
  '1e3',
  '0x10',
  'NaN',
  '..%2F..%2Fetc%2Fpasswd',
  '%E2%80%AE1',
  '%D9%A1',
  '%ED%A0%80',
  '1%00',
  '%27%3B%20drop%20table%20users%3B%20--',
  '%3Cscript%3E',
];

/** A path parameter value (already URL-encoded): existing ids, boundaries, garbage. */
function pathValue(param: Parameter, ctx: ValueContext): fc.Arbitrary<string> {
  if (isIntegerParam(param))
    return fc.oneof(
      { weight: 5, arbitrary: (ctx.ids.length ? fc.constantFrom(...ctx.ids) : fc.constant(1)).map(String) },
      { weight: 2, arbitrary: fc.constantFrom(...INT_BOUNDARIES, 2147483647).map(String) },
      { weight: 2, arbitrary: fc.constantFrom(...INVALID_ID) },
      { weight: 1, arbitrary: hostileString.map((s) => encodeSegment(s.slice(0, 200))) },
    );
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('fuzz', 'c', 'tag-1').map(encodeSegment) },
    { weight: 4, arbitrary: hostileString.map((s) => encodeSegment(s.slice(0, 200))) },
    { weight: 1, arbitrary: fc.constantFrom('../../etc/passwd', '..', '.', '%2e%2e', 'a/b', 'x'.repeat(192), 'x'.repeat(3000)) },
  );
}

const isIntegerParam = (param: Parameter) => typesOf(param.schema).some((t) => t === 'integer' || t === 'number');

function queryValue(param: Parameter, ctx: ValueContext): fc.Arbitrary<string> {
  return fc.oneof(
    valueFor(param.schema, ctx).map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? '')).slice(0, 400)),
    fc.constantFrom(...INT_BOUNDARIES.map(String), ...NUMBER_LIKE),
    hostileString.map((s) => s.slice(0, 400)),
  );
}

// ---------------------------------------------------------------------------------------------
// Requests

const FILE_NAMES = [
  '../../etc/passwd',
  '..\\..\\windows\\system32\\config\\sam',
  '/etc/shadow',
  `${'a'.repeat(5000)}.txt`,
  'nul\u0000.txt',
  'ctrl\u0001\u001f\u007f.txt',
  '\u202etxt.exe',
  '<script>alert(1)</script>.html',
  "'; drop table attachments; --.pdf",
  '👩‍👩‍👧‍👦.png',
  '',
  ' ',
  '.',
  '..',
  'CON',
  'a"b.txt',
  'semi;colon=.txt',
];

function multipartBody(): fc.Arbitrary<Body> {
  return fc
    .record({
      field: fc.constantFrom('file', 'file', 'file', 'other', ''),
      filename: fc.oneof(
        fc.constantFrom(...FILE_NAMES),
        hostileString.map((s) => s.slice(0, 1000)),
      ),
      contentType: fc.constantFrom(
        'text/plain',
        'text/html',
        'application/pdf',
        'application/octet-stream',
        '../../x',
        'a'.repeat(400),
        '',
      ),
      content: fc.constantFrom(
        Buffer.from('hello <script>alert(1)</script>'),
        Buffer.from("'; drop table users; --"),
        Buffer.from([0, 1, 2, 0xff, 0xfe]),
        Buffer.alloc(0),
        Buffer.from('%PDF-1.4 broken'),
        Buffer.from('PK\u0003\u0004 broken docx'),
      ),
    })
    .map((m) => ({ kind: 'multipart', ...m }));
}

/** Hostile but well-formed headers now and then. */
const extraHeaders = fc.oneof(
  { weight: 8, arbitrary: fc.constant({} as Record<string, string>) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { 'x-on-behalf-of-user-id': 'abc' },
      { 'x-on-behalf-of-user-id': '999999999' },
      { 'x-on-behalf-of-email': "'; drop table users; --@x" },
      { 'x-on-behalf-of-user-id': '1', 'x-on-behalf-of-email': 'a@example.com' },
      { 'idempotency-key': 'x'.repeat(300) },
      { 'x-request-id': '../../etc/passwd' },
      { traceparent: 'zz-garbage' },
      { 'accept-language': "'; drop" },
    ),
  },
);

const ROLES: Role[] = ['admin', 'user', 'anonymous', 'bogus'];

/**
 * Any request to the operation: roles of every kind, hostile parameters and bodies, valid or not.
 * Used to look for 5xx and hangs.
 */
export function anyRequest(op: Operation, ctx: ValueContext): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const path = fc
    .tuple(...pathParams.map((p) => pathValue(p, ctx)))
    .map((values) => Object.fromEntries(pathParams.map((p, i) => [p.name, values[i]!])));
  const query = fc.tuple(...queryParams.map((p) => fc.option(queryValue(p, ctx), { nil: undefined, freq: 2 }))).map((values) => {
    const entries: Array<[string, string]> = [];
    queryParams.forEach((p, i) => {
      if (values[i] !== undefined) entries.push([p.name, values[i]!]);
    });
    return entries;
  });
  const body: fc.Arbitrary<{ body?: Body; note: string }> = op.body
    ? op.body.kind === 'multipart'
      ? fc.oneof(
          { weight: 5, arbitrary: multipartBody().map((b) => ({ body: b, note: 'multipart' })) },
          { weight: 1, arbitrary: rawBody() },
        )
      : fc.oneof(
          {
            weight: 6,
            arbitrary: valueFor(op.body.schema, ctx).map((value) => ({ body: { kind: 'json', value } as Body, note: 'schema-shaped' })),
          },
          { weight: 3, arbitrary: invalidJsonBody(op.body.schema) },
          { weight: 1, arbitrary: nearLimitBody(op.body.schema) },
          { weight: 1, arbitrary: rawBody() },
        )
    : fc.oneof(
        { weight: 6, arbitrary: fc.constant({ note: 'no body' }) },
        { weight: 1, arbitrary: anyJson.map((value) => ({ body: { kind: 'json', value } as Body, note: 'unexpected body' })) },
        { weight: 1, arbitrary: rawBody() },
      );
  return fc
    .record({ role: fc.constantFrom(...ROLES), path, query, body, headers: extraHeaders })
    .map(({ role, path, query, body, headers }) => ({
      op: op.id,
      method: op.method,
      url: concretePath(op, path) + queryString(query),
      role,
      headers,
      body: body.body,
      note: body.note,
    }));
}

/** Bodies the schema refuses for sure: wrong top-level type, required field off-type, deep, huge. */
function invalidJsonBody(schema: Schema): fc.Arbitrary<{ body: Body; note: string }> {
  const required: string[] = schema.required ?? [];
  const typedProps = Object.entries<Schema>(schema.properties ?? {}).filter(([, s]) => isTyped(s));
  const json = (value: unknown, note: string) => ({ body: { kind: 'json', value } as Body, note });
  const raw = (text: string, note: string) => ({ body: { kind: 'raw', contentType: 'application/json', text } as Body, note });
  const options: Array<fc.Arbitrary<{ body: Body; note: string }>> = [
    wrongTypeFor(schema).map((v) => json(v, 'wrong top-level type')),
    fc.constantFrom(10_000, 2_000).map((n) => raw(deepArray(n), `array nested ${n} deep`)),
    fc.constant(raw(`{"x":"${'a'.repeat(BODY_LIMIT + 10)}"}`, 'body over BODY_LIMIT')),
  ];
  if (typedProps.length) {
    options.push(
      fc.constantFrom(...typedProps).chain(([key, s]) => wrongTypeFor(s).map((v) => json({ [key]: v }, `${key} of a wrong type`))),
      fc
        .constantFrom(...typedProps)
        .map(([key, s]) =>
          raw(
            `{${JSON.stringify(key)}:${typesOf(s).includes('array') ? deepObject(10_000) : deepArray(10_000)}}`,
            `${key} nested 10000 deep`,
          ),
        ),
    );
  }
  if (required.length) options.push(fc.constant(json({}, 'required fields missing')));
  return fc.oneof(...options);
}

/** A body just under BODY_LIMIT: one string property (or an unknown field) of almost a megabyte. */
function nearLimitBody(schema: Schema): fc.Arbitrary<{ body: Body; note: string }> {
  const strings = Object.entries<Schema>(schema.properties ?? {})
    .filter(([, s]) => typesOf(s).includes('string'))
    .map(([k]) => k);
  return fc
    .tuple(fc.constantFrom(...strings, 'unknown_field'), fc.constantFrom('a', '<', '\u00e9', '\ud83d\udd25', '\u0000'))
    .map(([key, unit]) => {
      const bytesPerUnit = unit === '\u0000' ? 6 : Buffer.byteLength(unit);
      const value = unit.repeat(Math.floor((BODY_LIMIT - 200) / bytesPerUnit / unit.length));
      return {
        body: { kind: 'json', value: { [key]: value } } as Body,
        note: `${key} of ${value.length} characters, just under BODY_LIMIT`,
      };
    });
}

function rawBody(): fc.Arbitrary<{ body: Body; note: string }> {
  return fc.oneof(
    fc
      .constantFrom(...MALFORMED_JSON)
      .map((text) => ({ body: { kind: 'raw', contentType: 'application/json', text } as Body, note: 'malformed JSON' })),
    fc
      .constantFrom(
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-7',
        'application/json; charset=latin1',
      )
      .map((contentType) => ({
        body: { kind: 'raw', contentType, text: '{"title":"a wrong content type"}' } as Body,
        note: `content-type ${contentType}`,
      })),
  );
}

/**
 * A request the API must refuse with a 4xx whatever the state: no or a bogus token, an invalid
 * path id, a body the schema refuses, malformed JSON, a body that is too large or too deep, the
 * wrong content type. Used for the "no change from a rejected request" batches.
 */
export function rejectedRequest(op: Operation, ctx: ValueContext): fc.Arbitrary<FuzzRequest> | undefined {
  const techniques: Array<fc.Arbitrary<Partial<FuzzRequest> & { note: string }>> = [];
  const anyShape = anyRequest(op, ctx);
  if (op.secured)
    techniques.push(
      anyShape.map((r) => ({ ...r, role: r.role === 'bogus' ? 'bogus' : 'anonymous', note: `${r.note}, not authenticated` })),
    );
  const pathParams = op.params.filter((p) => p.in === 'path');
  const intParam = pathParams.find(isIntegerParam);
  if (intParam)
    techniques.push(
      fc.tuple(anyShape, fc.constantFrom(...INVALID_ID), fc.constantFrom<Role>('admin', 'user')).map(([r, bad, role]) => ({
        ...r,
        role,
        url: op.path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === intParam.name ? bad : '1')),
        note: `${r.note}, invalid ${intParam.name} ${bad}`,
      })),
    );
  const labelParam = pathParams.find((p) => !isIntegerParam(p) && p.schema.maxLength);
  if (labelParam)
    techniques.push(
      fc
        .tuple(anyShape, fc.constantFrom<Role>('admin', 'user'), fc.constantFrom('../'.repeat(70), 'x'.repeat(192), '🔥'.repeat(200)))
        .map(([r, role, label]) => ({
          ...r,
          role,
          url: op.path.replace(`{${labelParam.name}}`, encodeSegment(label)),
          note: `${r.note}, ${labelParam.name} too long`,
        })),
    );
  if (op.body?.kind === 'json') {
    const invalid = fc.oneof({ weight: 4, arbitrary: invalidJsonBody(op.body.schema) }, { weight: 2, arbitrary: rawBody() });
    techniques.push(
      fc.tuple(anyShape, invalid, fc.constantFrom<Role>('admin', 'user')).map(([r, b, role]) => ({
        ...r,
        role,
        // Parameters of an existing object, so the body is what is refused.
        url: concretePath(op, Object.fromEntries(pathParams.map((p) => [p.name, isIntegerParam(p) ? String(ctx.ids[0] ?? 1) : 'fuzz']))),
        headers: {},
        body: b.body,
        note: b.note,
      })),
    );
  }
  if (op.body?.kind === 'multipart')
    techniques.push(
      fc.tuple(anyShape, fc.constantFrom<Role>('admin', 'user'), fc.constantFrom(...FILE_NAMES)).map(([r, role, filename]) => ({
        ...r,
        role,
        url: concretePath(op, Object.fromEntries(pathParams.map((p) => [p.name, String(ctx.ids[0] ?? 1)]))),
        headers: {},
        body: { kind: 'multipart', field: 'file', filename, contentType: 'text/plain', content: Buffer.alloc(0) },
        note: 'empty file',
      })),
      fc.tuple(anyShape, fc.constantFrom<Role>('admin', 'user')).map(([r, role]) => ({
        ...r,
        role,
        url: concretePath(op, Object.fromEntries(pathParams.map((p) => [p.name, String(ctx.ids[0] ?? 1)]))),
        headers: {},
        body: { kind: 'raw', contentType: 'application/json', text: '{"file":"../../etc/passwd"}' },
        note: 'JSON to a multipart endpoint',
      })),
    );
  if (techniques.length === 0) return undefined;
  return fc.tuple(anyShape, fc.oneof(...techniques)).map(([base, t]) => ({ ...base, ...t }) as FuzzRequest);
}

// ---------------------------------------------------------------------------------------------
// Sending

export interface Actors {
  admin: [string, string];
  user: [string, string];
}

/** Sends one request; never throws: a timeout is `hung`, a broken connection `transportError`. */
export async function send(api: supertest.Agent, actors: Actors, request: FuzzRequest, timeoutMs = 10_000): Promise<FuzzResult> {
  const started = performance.now();
  let req = api[request.method](API + request.url)
    .timeout({ response: timeoutMs, deadline: timeoutMs })
    .ok(() => true);
  if (request.role === 'admin') req = req.set(...actors.admin);
  else if (request.role === 'user') req = req.set(...actors.user);
  else if (request.role === 'bogus') req = req.set('authorization', `Bearer ${"'; drop table tokens; --"}`);
  for (const [k, v] of Object.entries(request.headers)) req = req.set(k, v);
  const body = request.body;
  if (body?.kind === 'json') req = req.set('content-type', 'application/json').send(JSON.stringify(body.value) ?? 'null');
  else if (body?.kind === 'raw') {
    if (body.contentType) req = req.set('content-type', body.contentType);
    req = req.send(body.text);
  } else if (body?.kind === 'multipart')
    req = req.attach(body.field, body.content, { filename: body.filename, contentType: body.contentType || undefined });
  try {
    const res = await req;
    return { request, status: res.status, ms: performance.now() - started, body: res.body };
  } catch (err) {
    const e = err as { timeout?: number; code?: string; message: string };
    const ms = performance.now() - started;
    if (e.timeout || e.code === 'ECONNABORTED') return { request, status: 0, ms, body: undefined, hung: true };
    return { request, status: 0, ms, body: undefined, transportError: `${e.code ?? ''} ${e.message}`.trim() };
  }
}

/** Sends the requests, `concurrency` at a time, in order of the list. */
export async function sendAll(
  api: supertest.Agent,
  actors: Actors,
  requests: FuzzRequest[],
  options: { concurrency?: number; timeoutMs?: number } = {},
): Promise<FuzzResult[]> {
  const results: FuzzResult[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      results[i] = await send(api, actors, requests[i]!, options.timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------------
// Judging

/** Whether a body has the error shape of docs/api.md ("Errors"). */
export function isErrorShape(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (typeof b.code !== 'string' || !b.code || typeof b.message !== 'string') return false;
  if (Object.keys(b).some((k) => !['code', 'message', 'errors', 'error_id'].includes(k))) return false;
  if (b.errors !== undefined) {
    if (!Array.isArray(b.errors)) return false;
    for (const e of b.errors) {
      if (!e || typeof e !== 'object') return false;
      const f = e as Record<string, unknown>;
      if (typeof f.path !== 'string' || typeof f.code !== 'string' || typeof f.message !== 'string') return false;
    }
  }
  return true;
}

/** A short, printable description of a request and its answer. */
export function describe(result: FuzzResult): string {
  const r = result.request;
  const body = r.body
    ? r.body.kind === 'json'
      ? JSON.stringify(r.body.value)
      : r.body.kind === 'raw'
        ? `(${r.body.contentType}) ${r.body.text}`
        : `multipart field=${r.body.field} filename=${JSON.stringify(r.body.filename)} ${r.body.contentType} ${r.body.content.length}B`
    : '';
  const excerpt = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
  const answer = result.hung
    ? 'HUNG'
    : result.transportError
      ? `transport error ${result.transportError}`
      : `${result.status} ${excerpt(JSON.stringify(result.body) ?? '', 200)}`;
  return `${r.method.toUpperCase()} ${excerpt(r.url, 160)} as ${r.role} [${r.note}] ${excerpt(body, 160)} -> ${answer} (${Math.round(result.ms)} ms)`;
}

export interface Summary {
  sent: number;
  /** Answers with a status their operation does not declare. */
  undeclared: FuzzResult[];
  byClass: Record<string, number>;
  serverErrors: FuzzResult[];
  hung: FuzzResult[];
  transportErrors: FuzzResult[];
  badErrorShape: FuzzResult[];
  slowest?: FuzzResult;
}

export function summarize(results: FuzzResult[], ops: Operation[] = []): Summary {
  const byClass: Record<string, number> = {};
  const summary: Summary = {
    sent: results.length,
    undeclared: [],
    byClass,
    serverErrors: [],
    hung: [],
    transportErrors: [],
    badErrorShape: [],
  };
  const statuses = new Map(ops.map((op) => [op.id, op.statuses]));
  for (const r of results) {
    const cls = r.hung ? 'hung' : r.transportError ? 'transport' : `${Math.floor(r.status / 100)}xx`;
    byClass[cls] = (byClass[cls] ?? 0) + 1;
    if (r.status >= 500) summary.serverErrors.push(r);
    if (r.hung) summary.hung.push(r);
    if (r.transportError) summary.transportErrors.push(r);
    if (r.status >= 400 && r.status < 500 && !isErrorShape(r.body)) summary.badErrorShape.push(r);
    // 405: the fuzzed path (an empty parameter, say) is another path, one without this method.
    if (r.status > 0 && r.status !== 405 && statuses.get(r.request.op)?.has(r.status) === false) summary.undeclared.push(r);
    if (!summary.slowest || r.ms > summary.slowest.ms) summary.slowest = r;
  }
  return summary;
}

// ---------------------------------------------------------------------------------------------
// State

/**
 * Tables whose rows the delivery workers update on their own schedule (attempts, next attempt,
 * lease, status: an unreachable SMTP server's retries come back with backoff at any moment): of
 * these only which rows exist counts, their ids. A request makes rows there; it never updates them.
 */
const DELIVERIES = new Set(['notifications.email_outbox', 'notifications.webhook_deliveries']);

/** Row count and content hash of every table of every service schema (outboxes included). */
export async function snapshot(databaseUrl: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`,
    );
    const out: Record<string, string> = {};
    for (const { schema, name } of tables.rows) {
      const id = `"${schema.replace(/"/g, '""')}"."${name.replace(/"/g, '""')}"`;
      const row = DELIVERIES.has(`${schema}.${name}`) ? 't.id' : 't';
      const r = await client.query<{ n: string; h: string }>(
        `select count(*)::text as n, coalesce(md5(string_agg(md5(${row}::text), '' order by md5(${row}::text))), '') as h from ${id} t`,
      );
      out[`${schema}.${name}`] = `${r.rows[0]!.n} rows ${r.rows[0]!.h}`;
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).map((k) => `${k}: ${before[k] ?? 'absent'} -> ${after[k] ?? 'absent'}`);
}

/** Generates `count` requests, spread over the operations, from a fixed seed. */
export function generate(ops: Operation[], ctx: ValueContext, kind: 'any' | 'rejected', count: number, seed: number): FuzzRequest[] {
  // An operation nothing can make fail (public, no parameters, no body) has no refused requests.
  const perOp = ops.flatMap((op) => (kind === 'any' ? [anyRequest(op, ctx)] : [rejectedRequest(op, ctx)].filter((a) => a !== undefined)));
  const arb = fc.integer({ min: 0, max: perOp.length - 1 }).chain((i) => perOp[i]!);
  // Every operation at least once, the rest drawn at random.
  const firsts = perOp.flatMap((a, i) => fc.sample(a, { seed: seed + i, numRuns: 1 }));
  const rest = count > firsts.length ? fc.sample(arb, { seed, numRuns: count - firsts.length }) : [];
  return [...firsts, ...rest].slice(0, Math.max(count, 0));
}

/**
 * The requests that leave the fuzzing users able to go on: no revoking their own tokens, no
 * deleting or editing them (other users and everything else are fair game), and rate limits stay
 * off so that the fuzzing reaches validation instead of 429.
 */
export function keepActors(requests: FuzzRequest[], protectedUserIds: number[]): FuzzRequest[] {
  const kept = requests.filter(
    (r) =>
      !(r.op === 'revokeToken' && (r.role === 'admin' || r.role === 'user')) &&
      !(protectedUserIds.some((id) => r.url.startsWith(`/users/${id}`)) && r.method !== 'get'),
  );
  for (const r of kept)
    if (
      r.op === 'updateNetworkSettings' &&
      r.body?.kind === 'json' &&
      r.body.value &&
      typeof r.body.value === 'object' &&
      !Array.isArray(r.body.value)
    ) {
      const v = r.body.value as Record<string, unknown>;
      if ('rate_limit_per_minute' in v) v.rate_limit_per_minute = 0;
      if ('login_attempts_per_minute' in v) v.login_attempts_per_minute = 0;
    }
  return kept;
}

// ---------------------------------------------------------------------------------------------
// Fixtures

/** Objects every kind of id can point at, so requests get past the 404 into deeper layers. */
export async function fuzzFixtures(system: System) {
  const api = system.api;
  const admin = bearer(system.adminToken);
  const settings = await api
    .put('/api/v1/settings')
    .set(...admin)
    .send({ rate_limit_per_minute: 0, login_attempts_per_minute: 0 });
  if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${JSON.stringify(settings.body)}`);
  await system.services.users.runtime.relay.flush();
  const user = await system.createUser({ firstname: 'Fuzzer' });
  const victim = await system.createUser({ firstname: 'Victim' });
  const ok = (res: { status: number; body: unknown }, what: string) => {
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number };
  };
  const question = await newQuestion(system, user.token, {
    title: 'How do I fuzz the knowledge network API?',
    description: '<p>With fast-check.</p>',
    tags: ['fuzz'],
  });
  const solution = { id: await publishedSolution(system, system.adminToken, question.id, 'Generate requests from the OpenAPI document.') };
  const comment = ok(
    await api
      .post(`/api/v1/questions/${question.id}/comments`)
      .set(...user.auth)
      .send({ description: 'A comment' }),
    'comment',
  );
  const category = ok(
    await api
      .post('/api/v1/categories')
      .set(...admin)
      .send({ name: 'Fuzz category' }),
    'category',
  );
  const space = ok(
    await api
      .post('/api/v1/knowledge-spaces')
      .set(...admin)
      .send({ name: 'Fuzz space' }),
    'knowledge space',
  );
  const attachment = ok(
    await api
      .post(`/api/v1/questions/${question.id}/attachments`)
      .set(...user.auth)
      .attach('file', Buffer.from('fuzz notes'), { filename: 'notes.txt', contentType: 'text/plain' }),
    'attachment',
  );
  await system.routed();
  const ids = [...new Set([question.id, solution.id, comment.id, category.id, space.id, attachment.id, victim.user.id as number])];
  return {
    actors: { admin, user: user.auth } as Actors,
    ctx: { ids } as ValueContext,
    /** Ids no request may delete or change the roles of: the fuzzing users themselves. */
    protectedUserIds: [
      user.user.id as number,
      ...(await api
        .get('/api/v1/users/me')
        .set(...admin)
        .then((r) => [r.body.id as number])),
    ],
  };
}
