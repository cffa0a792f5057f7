import { z } from 'zod';
import type { RawRow } from './reader.ts';

/** Dump dates are UTC without a zone: `2014-01-21T17:45:53.587`. */
const DumpDate = z
  .string()
  .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?$/, 'a dump date')
  .transform((v) => new Date(`${v}Z`).toISOString());
const Int = z
  .string()
  .regex(/^-?\d+$/, 'an integer')
  .transform(Number);
const OptionalInt = Int.optional();

/** `<hops><ipa>` or, in newer dumps, `|hops|ipa|`. */
const TagList = z
  .string()
  .optional()
  .transform((v) => (v ? (v.match(/<([^>]+)>/g)?.map((t) => t.slice(1, -1)) ?? v.split('|').filter(Boolean)) : []));

export const UserRow = z.object({
  Id: Int,
  DisplayName: z.string().default(''),
  CreationDate: DumpDate,
  LastAccessDate: DumpDate.optional(),
  Location: z.string().optional(),
  AboutMe: z.string().optional(),
  Reputation: OptionalInt,
});

export const PostRow = z.object({
  Id: Int,
  PostTypeId: Int,
  ParentId: OptionalInt,
  AcceptedAnswerId: OptionalInt,
  CreationDate: DumpDate,
  Score: OptionalInt,
  ViewCount: OptionalInt,
  Body: z.string().default(''),
  OwnerUserId: OptionalInt,
  LastActivityDate: DumpDate.optional(),
  LastEditDate: DumpDate.optional(),
  Title: z.string().optional(),
  Tags: TagList,
});

export const CommentRow = z.object({
  Id: Int,
  PostId: Int,
  Text: z.string(),
  CreationDate: DumpDate,
  UserId: OptionalInt,
  Score: OptionalInt,
});

export const TagRow = z.object({ Id: Int, TagName: z.string().min(1), Count: OptionalInt });
export const PostLinkRow = z.object({ Id: Int, PostId: Int, RelatedPostId: Int, LinkTypeId: Int, CreationDate: DumpDate.optional() });
export const VoteRow = z.object({ Id: Int, PostId: Int, VoteTypeId: Int, UserId: OptionalInt, CreationDate: DumpDate.optional() });

/** Each file of a dump: its root element and the shape of its rows. */
export const dumpFiles = {
  users: { file: 'Users.xml', root: 'users', row: UserRow },
  tags: { file: 'Tags.xml', root: 'tags', row: TagRow },
  posts: { file: 'Posts.xml', root: 'posts', row: PostRow },
  comments: { file: 'Comments.xml', root: 'comments', row: CommentRow },
  votes: { file: 'Votes.xml', root: 'votes', row: VoteRow },
  postLinks: { file: 'PostLinks.xml', root: 'postlinks', row: PostLinkRow },
} as const;
export type DumpFile = keyof typeof dumpFiles;
export type Row<F extends DumpFile> = z.output<(typeof dumpFiles)[F]['row']>;

export interface Malformed {
  file: string;
  index: number;
  line: number;
  reason: string;
}

/** Parses one raw row; a row that does not fit is reported, not thrown, so the import goes on. */
export function parseRow<F extends DumpFile>(kind: F, raw: RawRow): { ok: true; row: Row<F> } | { ok: false; malformed: Malformed } {
  const result = dumpFiles[kind].row.safeParse(raw.attributes);
  if (result.success) return { ok: true, row: result.data as Row<F> };
  const reason = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  return { ok: false, malformed: { file: dumpFiles[kind].file, index: raw.index, line: raw.line, reason } };
}

export const PostType = { question: 1, answer: 2 } as const;
export const VoteType = { accepted: 1, up: 2, down: 3 } as const;
export const LinkType = { related: 1, duplicate: 3 } as const;
