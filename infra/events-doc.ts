// The generated parts of docs/events.md: between `<!-- events:<area> -->` and `<!-- /events -->`
// a table of the area's events (subject, when, payload), between `<!-- shapes -->` and
// `<!-- /shapes -->` the shared shapes; all from the AsyncAPI document, which is generated from the
// zod catalogue. The prose around the blocks is written by hand.
import { eventAreas } from '@kn/contracts';
import type { asyncApiDocument } from '../gateway/src/asyncapi.ts';

type Schema = Record<string, any>;
type Doc = ReturnType<typeof asyncApiDocument>;

/** A compact TypeScript-like notation of a JSON Schema: `{ user_id: integer, tags: string[] }`. */
export function typeText(s: Schema | undefined): string {
  if (!s || typeof s !== 'object') return 'unknown';
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop()!;
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return typeText(s.allOf[0]);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) return [...new Set(alternatives.map(typeText))].join(' | ');
  if (Array.isArray(s.type)) return s.type.map((t: string) => typeText({ ...s, type: t })).join(' | ');
  switch (s.type) {
    case 'string':
      return s.format === 'date-time' ? 'timestamp' : s.format === 'uuid' ? 'uuid' : 'string';
    case 'integer':
    case 'number':
    case 'boolean':
    case 'null':
      return s.type;
    case 'array': {
      const item = typeText(s.items);
      return item.includes(' ') && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      if (s.properties) return objectText(s);
      if (s.additionalProperties && typeof s.additionalProperties === 'object')
        return `{ [key: string]: ${typeText(s.additionalProperties)} }`;
      return 'object';
    default:
      return 'unknown';
  }
}

function objectText(s: Schema): string {
  const required = new Set<string>(s.required ?? []);
  const fields = Object.entries<Schema>(s.properties ?? {}).map(
    ([name, field]) => `${name}${required.has(name) ? '' : '?'}: ${typeText(field)}`,
  );
  return `{ ${fields.join(', ')} }`;
}

/** Text for a cell of a Markdown table: its pipes escaped (also inside code). */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The table of one area's events. */
export function areaTable(doc: Doc, area: keyof typeof eventAreas): string {
  const rows = Object.keys(eventAreas[area]).map((subject) => {
    const message = (doc.components.messages as Record<string, Schema>)[subject]!;
    const data = message.payload.properties.data as Schema;
    const notes = Object.entries<Schema>(data.properties ?? {})
      .filter(([, f]) => f.description)
      .map(([name, f]) => `<br>\`${name}\`: ${f.description}`);
    return `| \`${subject}\` | ${cell(message.summary ?? '')} | ${cell(`\`${objectText(data)}\`${notes.join('')}`)} |`;
  });
  return ['| subject | when | payload |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The shared shapes events carry, with their fields. */
export function shapesText(doc: Doc): string {
  return Object.entries(doc.components.schemas as Record<string, Schema>)
    .map(([name, s]) => {
      const lines = [`### ${name}`, ''];
      if (s.description) lines.push(`${s.description[0]!.toUpperCase()}${s.description.slice(1)}.`, '');
      const required = new Set<string>(s.required ?? []);
      for (const [field, f] of Object.entries<Schema>(s.properties ?? {}))
        lines.push(`- \`${field}${required.has(field) ? '' : '?'}\`: \`${typeText(f)}\`${f.description ? ` — ${f.description}` : ''}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

/** docs/events.md with its generated blocks rewritten; throws when an area has no block or a block no area. */
export function renderEventsDoc(markdown: string, doc: Doc): string {
  const seen = new Set<string>();
  let out = markdown.replace(/<!-- events:([a-z-]+) -->\n[\s\S]*?<!-- \/events -->/g, (_m, area: string) => {
    if (!(area in eventAreas)) throw new Error(`docs/events.md has a block for the unknown event area ${area}`);
    seen.add(area);
    return `<!-- events:${area} -->\n${areaTable(doc, area as keyof typeof eventAreas)}\n<!-- /events -->`;
  });
  const missing = Object.keys(eventAreas).filter((a) => !seen.has(a));
  if (missing.length) throw new Error(`docs/events.md has no <!-- events:AREA --> block for ${missing.join(', ')}`);
  if (!/<!-- shapes -->[\s\S]*?<!-- \/shapes -->/.test(out)) throw new Error('docs/events.md has no <!-- shapes --> block');
  out = out.replace(/<!-- shapes -->\n[\s\S]*?<!-- \/shapes -->/, () => `<!-- shapes -->\n${shapesText(doc)}\n<!-- /shapes -->`);
  return out;
}
