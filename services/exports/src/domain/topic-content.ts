import type { ExportTopic } from '@kn/contracts';
import iconv from 'iconv-lite';
import { tsvDate, tsvField } from './format.ts';
import { fullName, type SourcePage } from './source.ts';

/** The ten columns, in the interface's order; the file's first row names them. */
export const TOPIC_CONTENT_COLUMNS = [
  'question_id',
  'question_published',
  'question_title',
  'question_description',
  'question_views',
  'topic_ids',
  'topic_labels',
  'solution_count',
  'solution_author',
  'solution_description',
] as const;

const EOL = '\r\n';
const encode = (text: string, first: boolean) => iconv.encode(text, 'utf16le', { addBOM: first });

/** The topics of the request a question matches: one of its tags has the topic's id, or its label (case ignored). */
export function matchedTopics(question: { tags: Array<{ id: string; label: string }> }, topics: ExportTopic[]) {
  return topics.filter((topic) =>
    question.tags.some((tag) => tag.id === topic.global_concept_id || tag.label.toLowerCase() === topic.label.toLowerCase()),
  );
}

/**
 * The topic-content file as a stream of UTF-16LE chunks (BOM first): a header row, then one row
 * per published solution repeating its question; a question without solutions gets one row with
 * empty solution author and description. Rows end with CRLF; `stats.count` counts the rows
 * without the header.
 */
export async function* topicContentFile(pages: AsyncIterable<SourcePage>, topics: ExportTopic[], stats: { count: number }) {
  yield encode(TOPIC_CONTENT_COLUMNS.join('\t') + EOL, true);
  for await (const page of pages) {
    const lines: string[] = [];
    for (const q of page.questions) {
      const matched = matchedTopics(q, topics);
      const question = [
        String(q.id),
        q.published ? tsvDate(new Date(q.published)) : '',
        tsvField(q.title),
        tsvField(q.description ?? ''),
        String(q.view_count),
        tsvField(matched.map((t) => t.global_concept_id).join('|')),
        tsvField(matched.map((t) => t.label).join('|')),
        String(q.solutions.length),
      ].join('\t');
      if (q.solutions.length === 0) lines.push(`${question}\t\t`);
      for (const s of q.solutions)
        lines.push(`${question}\t${tsvField(fullName(page.users.get(s.author_id), s.author_id))}\t${tsvField(s.description)}`);
    }
    stats.count += lines.length;
    if (lines.length) yield encode(lines.join(EOL) + EOL, false);
  }
}
