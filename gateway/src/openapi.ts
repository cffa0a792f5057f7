import { type Operation, operations } from '@kn/contracts';
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the gateway validates with, so the
 * reference cannot drift from the behaviour. Schemas with a `meta({ id })` become components.
 */
export function openApiDocument(serverUrl = '/api/v1') {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    delete json.$schema;
    for (const [id, def] of Object.entries(defs)) components[id] = rewriteRefs(def);
    return rewriteRefs(json);
  };

  const errorResponse = { $ref: '#/components/responses/Error' };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, op] of Object.entries(operations) as Array<[string, Operation]>) {
    if (!op.http) continue;
    const { http } = op;
    const path = http.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...Object.entries(op.params?.shape ?? {}).map(([name, s]) => ({
        name,
        in: 'path',
        required: true,
        schema: convert(s as z.ZodType, 'input'),
      })),
      ...Object.entries(op.query?.shape ?? {}).map(([name, s]) => {
        const schema = convert(s as z.ZodType, 'input');
        return { name, in: 'query', required: !(s as z.ZodType).safeParse(undefined).success, schema, description: schema.description };
      }),
    ];
    const status = String(http.status ?? 200);
    const responses: Record<string, unknown> = {
      [op.response || http.status ? status : '204']: http.download
        ? {
            description: 'the file, with its content type',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          }
        : op.response
          ? { description: 'success', content: { 'application/json': { schema: convert(op.response, 'output') } } }
          : { description: 'success, no body' },
      '400': errorResponse,
      ...(http.auth === 'user' ? { '401': errorResponse, '403': errorResponse } : {}),
      ...(op.params ? { '404': errorResponse } : {}),
    };
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
      parameters: parameters.length ? parameters : undefined,
      requestBody: http.upload
        ? {
            required: true,
            content: {
              'multipart/form-data': {
                schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
              },
            },
          }
        : op.body
          ? { required: true, content: { 'application/json': { schema: convert(op.body, 'input') } } }
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
        'Questions, solutions, users, notifications, search and exports of a knowledge network. Errors share one shape (see the Error schema). Authenticate with `Authorization: Bearer <token>` from POST /auth/login; a user with the on_behalf_user role may act for another user with one of the headers X-On-Behalf-Of-User-Id or X-On-Behalf-Of-Email.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        ...components,
        Error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', examples: ['ValidationError'] },
            message: { type: 'string' },
            errors: {
              type: 'array',
              items: { type: 'object', properties: { path: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } } },
            },
            error_id: { type: 'string', description: 'on 500 only: the id the cause was logged under' },
          },
        },
      },
      responses: {
        Error: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  };
}

function rewriteRefs<T>(value: T): T {
  if (Array.isArray(value)) return value.map(rewriteRefs) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$id') continue;
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(v);
    }
    return out as T;
  }
  return value;
}

export const docsPage = (specUrl: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Knowledge network API</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
<div id="ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#ui', deepLinking: true });</script>
</body>
</html>`;
