import { Id } from '@kn/contracts';
import { z } from 'zod';
import { STORABLE_TEXT_PATTERN } from './request.ts';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema of zod schemas for a document's components: each schema with a `meta({ id })`
 * becomes a component (`#/components/schemas/<id>`) the others refer to. Ids are integers on the
 * wire (a path's digits are coerced). `target`: draft 2020-12 for OpenAPI 3.1, draft 7 for AsyncAPI.
 */
export function schemaComponents(target: 'draft-2020-12' | 'draft-7') {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      target,
      override: (ctx) => {
        if (ctx.zodSchema !== Id) return;
        const id = ctx.jsonSchema as JsonSchema;
        for (const key of Object.keys(id)) delete id[key];
        Object.assign(id, { type: 'integer', minimum: 1, maximum: 2147483647 });
      },
    }) as JsonSchema;
    const defsKey = target === 'draft-7' ? 'definitions' : '$defs';
    const defs = (json[defsKey] ?? {}) as Record<string, JsonSchema>;
    delete json[defsKey];
    delete json.$schema;
    for (const [id, def] of Object.entries(defs)) components[id] = rewriteRefs(def, `#/${defsKey}/`);
    return rewriteRefs(json, `#/${defsKey}/`);
  };
  return { components, convert };
}

function rewriteRefs<T>(value: T, from: string): T {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, from)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$id') continue;
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace(from, '#/components/schemas/') : rewriteRefs(v, from);
    }
    return out as T;
  }
  return value;
}

/**
 * A request's schema with the gateway's rule for all text it keeps (no NUL, request.ts) on every
 * string and every map's keys that say nothing narrower (a pattern, an enum, a format), and on the
 * components it refers to: what a client may send, stated where it sends it. The fields of an
 * object the schema does not name are ignored, NUL or not: the rule does not reach them.
 */
export function storableText(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const seen = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    const node = value as JsonSchema;
    const types = ([] as unknown[]).concat(node.type ?? []);
    if (types.includes('string') && !('pattern' in node || 'enum' in node || 'const' in node || 'format' in node))
      node.pattern = STORABLE_TEXT_PATTERN;
    // A map (z.record): its keys are kept.
    if (node.additionalProperties && typeof node.additionalProperties === 'object') node.propertyNames ??= { type: 'string' };
    const ref = typeof node.$ref === 'string' ? node.$ref.replace('#/components/schemas/', '') : undefined;
    if (ref !== undefined && !seen.has(ref) && components[ref]) {
      seen.add(ref);
      visit(components[ref]);
    }
    for (const [key, child] of Object.entries(node)) if (key !== '$ref') visit(child);
  };
  visit(schema);
  return schema;
}
