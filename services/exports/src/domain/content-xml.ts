import type { SourceComment, SourceQuestion, SourceUser } from '@kn/contracts';
import { xmlAttribute as attr, xmlText as text } from './format.ts';
import type { SourcePage } from './source.ts';
import { CONTENT_EXPORT_NAMESPACE } from './xsd.ts';

export interface ContentXmlOptions {
  exportId: number;
  network: string;
  created: Date;
  anonymised: boolean;
  excludeDeleted: boolean;
}

/** `name="value"` pairs, leaving out null and undefined values. */
function attributes(values: Record<string, string | number | boolean | null | undefined>) {
  let out = '';
  for (const [name, value] of Object.entries(values)) if (value !== null && value !== undefined) out += ` ${name}="${attr(String(value))}"`;
  return out;
}

/**
 * One question as XML (content_export.xsd). When anonymised, the poser is hidden wherever they
 * appear in their question: as its author, and as the author of its solutions and comments.
 */
export function questionXml(q: SourceQuestion, users: Map<number, SourceUser>, anonymised: boolean) {
  const author = (id: number) => {
    if (anonymised && id === q.author_id) return '<author anonymised="true"/>';
    const user = users.get(id);
    return `<author${attributes({ id, firstname: user?.firstname, lastname: user?.lastname, is_deleted: user?.is_deleted })}/>`;
  };
  const comments = (list: SourceComment[]) =>
    `<comments>${list
      .map(
        (c) =>
          `<comment${attributes({ id: c.id, created: c.created, updated: c.updated, is_deleted: c.is_deleted, upvote_count: c.upvote_count })}>${author(c.author_id)}<description>${text(c.description)}</description></comment>`,
      )
      .join('')}</comments>`;
  const bySolution = new Map<number | null, SourceComment[]>();
  for (const c of q.comments) {
    const list = bySolution.get(c.solution_id);
    if (list) list.push(c);
    else bySolution.set(c.solution_id, [c]);
  }
  const solutions = q.solutions
    .map(
      (s) =>
        `<solution${attributes({
          id: s.id,
          language: s.language,
          published: s.published,
          created: s.created,
          updated: s.updated,
          is_deleted: s.is_deleted,
          rating: s.rating,
          rating_count: s.rating_count,
          upvote_count: s.upvote_count,
          accepted_by_question_poser: s.accepted_by_question_poser,
          validity_period: s.validity_period,
          expires: s.expires,
        })}>${author(s.author_id)}<description>${text(s.description)}</description>${comments(bySolution.get(s.id) ?? [])}</solution>`,
    )
    .join('');
  return (
    `<question${attributes({
      id: q.id,
      language: q.language,
      published: q.published,
      created: q.created,
      updated: q.updated,
      is_deleted: q.is_deleted,
      view_count: q.view_count,
      upvote_count: q.upvote_count,
      solution_count: q.solutions.length,
    })}>` +
    `<title>${text(q.title)}</title>` +
    (q.description === null ? '' : `<description>${text(q.description)}</description>`) +
    author(q.author_id) +
    (q.category ? `<category${attributes({ id: q.category.id, name: q.category.name })}/>` : '') +
    `<tags>${q.tags.map((t) => `<tag id="${attr(t.id)}">${text(t.label)}</tag>`).join('')}</tags>` +
    comments(bySolution.get(null) ?? []) +
    `<solutions>${solutions}</solutions>` +
    '</question>\n'
  );
}

/** The content export's XML (UTF-8) as a stream of chunks, one per page; `stats.count` counts the questions. */
export async function* contentXmlFile(pages: AsyncIterable<SourcePage>, options: ContentXmlOptions, stats: { count: number }) {
  yield Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<content_export${attributes({
      xmlns: CONTENT_EXPORT_NAMESPACE,
      version: '1',
      network: options.network,
      export_id: options.exportId,
      created: options.created.toISOString(),
      anonymised: options.anonymised,
      exclude_deleted: options.excludeDeleted,
    })}>\n`,
  );
  for await (const page of pages) {
    let chunk = '';
    for (const q of page.questions) chunk += questionXml(q, page.users, options.anonymised);
    stats.count += page.questions.length;
    if (chunk) yield Buffer.from(chunk);
  }
  yield Buffer.from('</content_export>\n');
}
