import { answersOf, apiTags, Email, ErrorBody, type Operation, operations, takesIdempotencyKey } from '@kn/contracts';
import type { z } from 'zod';
import { USER_ID_HEADER_PATTERN } from './auth.ts';
import { type JsonSchema, schemaComponents, storableText } from './json-schema.ts';
import { operationLinks } from './links.ts';

/** Headers a client sends; `convert` gives the JSON Schema of a zod schema the gateway checks one with. */
const requestHeaders = (convert: (schema: z.ZodType, io: 'input') => JsonSchema) => ({
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Up to 255 visible ASCII characters. The first request with a key runs; a repeat with the same body answers what it answered (with Idempotent-Replayed: true) and changes nothing, kept 24 hours; the same key with another body is a 409. Send one key for all attempts of one change.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  },
  OnBehalfOfUserId: {
    name: 'X-On-Behalf-Of-User-Id',
    in: 'header',
    required: false,
    description: 'Act as this user for this request (role on_behalf_user). At most one act-on-behalf header per request.',
    // A header is text: its digits, as the gateway reads them (a schema of type integer would have
    // a tester compare the text with a number).
    schema: { type: 'string', pattern: USER_ID_HEADER_PATTERN },
  },
  OnBehalfOfEmail: {
    name: 'X-On-Behalf-Of-Email',
    in: 'header',
    required: false,
    description:
      'Act as the user with this email address for this request (role on_behalf_user). At most one act-on-behalf header per request.',
    schema: convert(Email, 'input'),
  },
  // Both below are tolerated, never refused: a value that is not one is ignored, as W3C Trace
  // Context says of traceparent, so the schema names no pattern a client could read as a rule.
  Traceparent: {
    name: 'traceparent',
    in: 'header',
    required: false,
    description:
      'W3C trace context (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`): the work of this request (and the events it causes) joins this trace. A value that is not one is ignored, as W3C Trace Context says: the request starts a trace of its own.',
    schema: { type: 'string' },
  },
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description:
      'Your id for this request: 1 to 128 of A-Z a-z 0-9 . _ : -, answered back in X-Request-Id and logged. Any other value is ignored and the gateway makes a new id, as it does when there is none.',
    schema: { type: 'string' },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The ETag of an earlier answer: 304 without a body while the answer is the same.',
    schema: { type: 'string' },
  },
});

/** Headers a client reads. */
const responseHeaders = {
  'X-Request-Id': {
    description: 'The id of the request (yours, or a new one): name it when you report a problem.',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: 'Requests the token (or, for log-in, the email address) may send per minute.',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left now.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the full limit is available again.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
  ETag: { description: 'Version of the answer, for If-None-Match.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: 'true when this is the kept answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Content-Disposition': { description: 'attachment, with the file name (RFC 5987).', schema: { type: 'string' } },
} as const;
type ResponseHeader = keyof typeof responseHeaders;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${encodeURIComponent(name)}` });

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the gateway validates with, so the
 * reference cannot drift from the behaviour. Schemas with a `meta({ id })` become components;
 * every operation lists every status it can answer (`answersOf`), with the headers of each.
 */
export function openApiDocument(serverUrl = '/api/v1') {
  const { components, convert } = schemaComponents('draft-2020-12');
  // The error shape becomes the component Error (its meta id).
  convert(ErrorBody, 'output');
  /** What a request part may be: its zod schema, and no NUL in any text (the gateway's rule). */
  const requestSchema = (schema: z.ZodType) => storableText(convert(schema, 'input'), components);
  const links = operationLinks(operations);

  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, op] of Object.entries(operations) as Array<[string, Operation]>) {
    if (!op.http) continue;
    const { http } = op;
    const user = http.auth === 'user';
    const json = !http.upload && !http.download;
    const keyed = takesIdempotencyKey(op);
    const path = http.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...Object.entries(op.params?.shape ?? {}).map(([name, s]) => ({
        name,
        in: 'path',
        required: true,
        schema: requestSchema(s as z.ZodType),
      })),
      ...Object.entries(op.query?.shape ?? {}).map(([name, s]) => {
        const schema = requestSchema(s as z.ZodType);
        return { name, in: 'query', required: !(s as z.ZodType).safeParse(undefined).success, schema, description: schema.description };
      }),
      ...(keyed ? [ref('parameters', 'IdempotencyKey')] : []),
      ...(user ? [ref('parameters', 'OnBehalfOfUserId'), ref('parameters', 'OnBehalfOfEmail')] : []),
      ...(json && http.method === 'GET' ? [ref('parameters', 'IfNoneMatch')] : []),
      ref('parameters', 'Traceparent'),
      ref('parameters', 'RequestId'),
    ];
    const limited = user || operationId === 'login';
    const headers = (names: ResponseHeader[]) => Object.fromEntries(['X-Request-Id', ...names].map((n) => [n, ref('headers', n)]));
    const responses: Record<string, unknown> = {};
    for (const [status, when] of answersOf(op)) {
      const rateLimit: ResponseHeader[] = limited ? ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] : [];
      if (status < 300) {
        const body = http.download
          ? {
              content: {
                [http.download]: { schema: { type: 'string', contentMediaType: http.download === '*/*' ? undefined : http.download } },
              },
            }
          : op.response && status !== 204
            ? { content: { 'application/json': { schema: convert(op.response, 'output') } } }
            : {};
        responses[status] = {
          description: when,
          headers: headers([
            ...rateLimit,
            ...(json && op.response ? (['ETag'] as const) : []),
            ...(keyed ? (['Idempotent-Replayed'] as const) : []),
            ...(http.download ? (['Content-Disposition'] as const) : []),
          ]),
          ...body,
          ...('content' in body && links.has(operationId) ? { links: links.get(operationId) } : {}),
        };
      } else if (status === 304) {
        responses[status] = { description: when, headers: headers([...rateLimit, 'ETag']) };
      } else {
        const retry = status === 429 || status === 503 || (status === 409 && keyed);
        responses[status] = {
          description: when,
          headers: headers([...(status === 429 ? rateLimit : []), ...(retry ? (['Retry-After'] as const) : [])]),
          content: { 'application/json': { schema: ref('schemas', 'Error') } },
        };
      }
    }
    paths[path] ??= {};
    paths[path][http.method.toLowerCase()] = {
      operationId,
      summary: op.summary,
      description:
        [http.description, http.roles ? `Roles: ${http.roles.join(' or ')} (super_admin has every role).` : undefined]
          .filter(Boolean)
          .join('\n\n') || undefined,
      tags: [http.tag],
      deprecated: http.deprecated || undefined,
      security: http.auth === 'public' ? [] : undefined,
      parameters,
      requestBody: http.upload
        ? {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  additionalProperties: false,
                  // The gateway refuses an empty file (ValidationError); its largest is ATTACHMENT_MAX_BYTES.
                  properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', minLength: 1 } },
                },
              },
            },
          }
        : op.body
          ? // The gateway reads a request without a body as {}: the body is required when {} is not enough.
            { required: !op.body.safeParse({}).success, content: { 'application/json': { schema: requestSchema(op.body) } } }
          : undefined,
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Knowledge network API',
      version: '1.0.0',
      description:
        'Questions, solutions, users, notifications, search and exports of a knowledge network. Errors share one shape (the Error schema). Authenticate with `Authorization: Bearer <token>` from POST /auth/login; a user with the on_behalf_user role may act for another user with one of the headers X-On-Behalf-Of-User-Id or X-On-Behalf-Of-Email. POST requests take an Idempotency-Key. The domain events other systems may subscribe to are described by the AsyncAPI document at /api/v1/asyncapi.json.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      contact: { name: 'Knowledge network maintainers' },
    },
    servers: [{ url: serverUrl, description: 'this gateway' }],
    security: [{ bearer: [] }],
    tags: Object.entries(apiTags).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A token from POST /auth/login (or POST /auth/tokens).' },
      },
      parameters: requestHeaders(convert),
      headers: responseHeaders,
      schemas: components,
    },
  };
}
