import path from 'node:path';
import { siteName } from './importer.ts';
import { readRows } from './reader.ts';
import { dumpFiles, LinkType, parseRow } from './rows.ts';

/** Plain text of a dump's HTML body (good enough for measuring; the import sanitizes properly). */
export const htmlText = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** A question of a dump as plain texts (by its post id). */
export interface SiteQuestion {
  id: number;
  title: string;
  body: string;
  tags: string[];
  answers: string[];
  comments: string[];
}

/**
 * A Stack Exchange site read from its dump folder: its questions with their answers and comments
 * as plain text, and its duplicate links (LinkTypeId 3: `duplicate` is a duplicate of `original`)
 * whose both ends are questions. For measuring retrieval (duplicates as relevant pairs).
 */
export async function readSite(dir: string) {
  const name = siteName(dir);
  const questions = new Map<number, SiteQuestion>();
  const answerOf = new Map<number, number>();
  for await (const raw of readRows(path.join(dir, dumpFiles.posts.file), dumpFiles.posts.root)) {
    const parsed = parseRow('posts', raw);
    if (!parsed.ok) continue;
    const r = parsed.row;
    if (r.PostTypeId === 1)
      questions.set(r.Id, { id: r.Id, title: r.Title ?? '', body: htmlText(r.Body), tags: r.Tags, answers: [], comments: [] });
    else if (r.PostTypeId === 2 && r.ParentId !== undefined) {
      answerOf.set(r.Id, r.ParentId);
      questions.get(r.ParentId)?.answers.push(htmlText(r.Body));
    }
  }
  for await (const raw of readRows(path.join(dir, dumpFiles.comments.file), dumpFiles.comments.root)) {
    const parsed = parseRow('comments', raw);
    if (!parsed.ok) continue;
    const q = questions.get(parsed.row.PostId) ?? questions.get(answerOf.get(parsed.row.PostId) ?? -1);
    q?.comments.push(parsed.row.Text);
  }
  const duplicates: Array<{ duplicate: number; original: number }> = [];
  for await (const raw of readRows(path.join(dir, dumpFiles.postLinks.file), dumpFiles.postLinks.root)) {
    const parsed = parseRow('postLinks', raw);
    if (!parsed.ok || parsed.row.LinkTypeId !== LinkType.duplicate) continue;
    const { PostId, RelatedPostId } = parsed.row;
    if (questions.has(PostId) && questions.has(RelatedPostId) && PostId !== RelatedPostId)
      duplicates.push({ duplicate: PostId, original: RelatedPostId });
  }
  return { name, questions: [...questions.values()], duplicates };
}
