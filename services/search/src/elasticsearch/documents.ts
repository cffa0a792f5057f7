import { type SearchField, SearchFieldNames } from '@kn/contracts';
import type { EventSolutionFacts, IndexedQuestion } from '../core/events.ts';
import { indexWords, labelWords, type PartKind, wordStem } from '../core/words.ts';
import { type SolutionFacts, solutionValue, timeWeight } from '../domain/expertise.ts';
import { askedFieldWeights, unitFieldWeights } from '../domain/fields.ts';

/** A solution's, comment's or attachment's searchable text. */
export interface PartSource {
  id: number;
  author_id: number;
  text: string;
}

/** How a solution stood from a time on (the expert model's fit reads the past as it was). */
export interface SolutionState {
  time: number;
  live: boolean;
  upvotes: number;
  rating: number | null;
  rating_count: number;
}

/**
 * A solution's facts as stored, with its value for expertise (solutionValue · time weight,
 * unfaded), whether it is accepted (for aggregations), and how it stood over time.
 */
export type SolutionSource = SolutionFacts & { value: number; accepted: boolean; states: SolutionState[] };

/**
 * A question document: the question as the events show it, its parts' texts (for highlighting),
 * the words of each searchable field, its similarity unit, and the facts expert search counts.
 * A `stub` holds only parts or facts whose question event has not come (yet).
 */
export interface QuestionDocument extends IndexedQuestion {
  stub: boolean;
  tag_keys: string[];
  /** Published and not deleted. */
  live: boolean;
  parts: Record<PartKind, PartSource[]>;
  /**
   * Space-separated words per field; empty for drafts (not searchable). These, `stems`,
   * `unit_terms`, `unit_packed`, `neighbour_packed` and `asked_terms` are indexed but not in the stored source
   * (mappings.ts): a document read back has none of them.
   */
  words: Record<SearchField, string>;
  /** The stems of those words in the question's language (words.ts wordStem), space-separated. */
  stems: Record<SearchField, string>;
  /** The words of similar-question search's unit (domain/fields.ts unitFieldWeights), indexed only. */
  unit_terms: string[];
  /**
   * The unit, word → weighted count, as JSON in base64: binary doc values, which a search reads
   * without a stored source (backend.ts units). Written only so: the engine stored nothing else of it.
   */
  unit_packed: string;
  /** What expert search reads of a neighbour (NeighbourFacts), packed the same way (evidence.ts neighbours). */
  neighbour_packed: string;
  /** What was asked, expert search's similarity: word → [title, description, tags] counts. */
  asked: Record<string, [number, number, number]>;
  asked_terms: string[];
  solutions: SolutionSource[];
  /** One entry per forward, with the stream sequence of its event (applying an event twice adds nothing) and its time (ms). */
  forwards: Array<{ recipient_id: number; seq: number; time: number }>;
}

/** A value as the binary doc values (`unit_packed`, `neighbour_packed`) hold it: JSON in base64, and back. */
export const packed = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
export const unpacked = <T>(value: string): T => JSON.parse(Buffer.from(value, 'base64').toString());
export const packUnit = (unit: Record<string, number>) => packed(unit);
export const unpackUnit = (value: string) => unpacked<Record<string, number>>(value);

/** What expert search reads of a neighbour: its asked words, tags, space, time and live solutions with their value (solutionValue). */
export interface NeighbourFacts {
  id: number;
  asked: Record<string, [number, number, number]>;
  tags: string[];
  knowledge_space_id: number | null;
  published: string | null;
  solutions: Array<{ author_id: number; time: number; value: number }>;
}

const neighbourFacts = (doc: QuestionDocument, asked: NeighbourFacts['asked']): NeighbourFacts => ({
  id: doc.id,
  asked,
  tags: doc.tags,
  knowledge_space_id: doc.knowledge_space_id,
  published: doc.published,
  solutions: doc.solutions.filter((s) => s.live).map((s) => ({ author_id: s.author_id, time: s.time, value: solutionValue(s) })),
});

export const emptyWords = (): Record<SearchField, string> =>
  Object.fromEntries(SearchFieldNames.map((f) => [f, ''])) as Record<SearchField, string>;

export const stubQuestion = (id: number): QuestionDocument => ({
  id,
  stub: true,
  author_id: 0,
  language: 'en',
  title: '',
  description: '',
  tags: [],
  tag_keys: [],
  category_id: null,
  knowledge_space_id: null,
  is_published: false,
  is_deleted: false,
  live: false,
  published: null,
  parts: { solution: [], comment: [], attachment: [] },
  words: emptyWords(),
  stems: emptyWords(),
  unit_terms: [],
  unit_packed: packUnit({}),
  neighbour_packed: packed(null),
  asked: {},
  asked_terms: [],
  solutions: [],
  forwards: [],
});

const noCounts = SearchFieldNames.map(() => 0);
const unitWeights = SearchFieldNames.map((f) => unitFieldWeights[f]);
/** The fields whose words are what was asked (askedFieldWeights). */
const askedFields = SearchFieldNames.flatMap((f, i) => ((askedFieldWeights[f] ?? 0) > 0 ? [i] : []));

/**
 * The fields computed from the rest (words, unit, flags, solution values): the same words the
 * local store indexes (words.ts questionWords), only for published questions.
 */
export function withDerived(doc: QuestionDocument): QuestionDocument {
  const live = doc.is_published && !doc.is_deleted;
  const solutions = doc.solutions.map((s) => ({ ...s, value: solutionValue(s) * timeWeight(s.time), accepted: s.accepted_at !== null }));
  const base = { ...doc, live, solutions, tag_keys: [...new Set(doc.tags.map((t) => t.toLowerCase()))] };
  if (doc.stub || !doc.is_published)
    return {
      ...base,
      words: emptyWords(),
      stems: emptyWords(),
      unit_terms: [],
      unit_packed: packUnit({}),
      neighbour_packed: packed(neighbourFacts(base, {})),
      asked: {},
      asked_terms: [],
    };
  const texts: Record<SearchField, string[]> = {
    title: [doc.title],
    description: [doc.description],
    tags: [doc.tags.join(' ')],
    solutions: doc.parts.solution.map((p) => p.text),
    comments: doc.parts.comment.map((p) => p.text),
    attachments: doc.parts.attachment.map((p) => p.text),
  };
  // Each text analysed once: the words of each field, and from them each word's counts per field
  // (what words.ts questionWords counts, in its order) and its stem, once a word.
  const fieldWords = SearchFieldNames.map((f) => texts[f].flatMap((t) => indexWords(t, doc.language)));
  const counts = new Map<string, number[]>();
  fieldWords.forEach((list, field) => {
    for (const word of list) {
      let c = counts.get(word);
      if (!c) {
        c = noCounts.slice();
        counts.set(word, c);
      }
      c[field]!++;
    }
  });
  const stemOf = new Map<string, string>();
  for (const word of counts.keys()) stemOf.set(word, wordStem(word, doc.language));
  const words = Object.fromEntries(SearchFieldNames.map((f, i) => [f, fieldWords[i]!.join(' ')])) as Record<SearchField, string>;
  const stems = Object.fromEntries(SearchFieldNames.map((f, i) => [f, fieldWords[i]!.map((w) => stemOf.get(w)!).join(' ')])) as Record<
    SearchField,
    string
  >;
  const unit: Record<string, number> = {};
  const asked: Record<string, [number, number, number]> = {};
  for (const [word, c] of counts) {
    let u = 0;
    for (let i = 0; i < c.length; i++) u += unitWeights[i]! * c[i]!;
    if (u > 0) unit[word] = u;
    if (askedFields.some((i) => c[i]! > 0)) asked[word] = [c[0]!, c[1]!, c[2]!];
  }
  return {
    ...base,
    words,
    stems,
    unit_terms: Object.keys(unit),
    unit_packed: packUnit(unit),
    neighbour_packed: packed(neighbourFacts(base, asked)),
    asked,
    asked_terms: Object.keys(asked),
  };
}

/** The question as the events last showed it (its derived fields kept: they are recomputed at write). */
export const applyQuestion = (doc: QuestionDocument, q: IndexedQuestion): QuestionDocument => ({ ...doc, ...q, stub: false });

export function applyPart(doc: QuestionDocument, kind: PartKind, part: PartSource, text: string | null): QuestionDocument {
  const others = doc.parts[kind].filter((p) => p.id !== part.id);
  const list = text === null ? others : [...others, { ...part, text }].sort((a, b) => a.id - b.id);
  return { ...doc, parts: { ...doc.parts, [kind]: list } };
}

/** A solution's facts as they stand from `at` (ms) on; a new state when live, votes or ratings changed. */
export function applySolution(doc: QuestionDocument, s: EventSolutionFacts, at: number): QuestionDocument {
  const before = doc.solutions.find((x) => x.id === s.id);
  const state: SolutionState = { time: at, live: s.live, upvotes: s.upvotes, rating: s.rating, rating_count: s.rating_count };
  const last = before?.states.at(-1);
  const changed =
    !last ||
    last.live !== state.live ||
    last.upvotes !== state.upvotes ||
    last.rating !== state.rating ||
    last.rating_count !== state.rating_count;
  const states = [...(before?.states ?? []).filter((x) => !changed || x.time !== at), ...(changed ? [state] : [])].sort(
    (a, b) => a.time - b.time,
  );
  const facts: SolutionSource = {
    ...s,
    time: Date.parse(s.time),
    accepted_at: s.accepted_at === null ? null : Date.parse(s.accepted_at),
    value: 0,
    accepted: s.accepted_at !== null,
    states,
  };
  return { ...doc, solutions: [...doc.solutions.filter((x) => x.id !== s.id), facts].sort((a, b) => a.id - b.id) };
}

export function applyForward(doc: QuestionDocument, recipientId: number, seq: number, time: number): QuestionDocument {
  if (doc.forwards.some((f) => f.seq === seq && f.recipient_id === recipientId)) return doc;
  return { ...doc, forwards: [...doc.forwards, { recipient_id: recipientId, seq, time }] };
}

/** A tag of the network: announced by a tag event, or carried by a question. */
export interface TagDocument {
  type: 'tag';
  key: string;
  label: string;
  /** The first word of the label (tagsNamedIn looks tags up by the words of a text). */
  first_word: string | null;
  excluded_from_suggestions: boolean;
  /** Labels of the linked tags, and the same lower-case (for links the other way). */
  links: string[];
  link_keys: string[];
}

export const tagDocument = (
  label: string,
  fields: { excluded_from_suggestions?: boolean; links?: string[] } = {},
  known?: TagDocument,
): TagDocument => {
  const links = fields.links ?? known?.links ?? [];
  return {
    type: 'tag',
    key: label.toLowerCase(),
    label: known?.label ?? label,
    first_word: labelWords(label.toLowerCase())[0] ?? null,
    excluded_from_suggestions: fields.excluded_from_suggestions ?? known?.excluded_from_suggestions ?? false,
    links,
    link_keys: links.map((l) => l.toLowerCase()),
  };
};

export interface SpaceDocument {
  type: 'space';
  space_id: number;
  is_closed: boolean;
  members: number[];
}

/** What expert search needs of a user: deleted and system users are never experts. */
export interface UserDocument {
  type: 'user';
  user_id: number;
  deleted: boolean;
  /** Absent in documents written before it was kept (a rebuild writes it). */
  system?: boolean;
}

export interface SettingDocument {
  type: 'setting';
  key: string;
  value: number;
}

export interface PositionDocument {
  type: 'position';
  key: string;
  seq: number;
}

export type StateDocument = TagDocument | SpaceDocument | UserDocument | SettingDocument | PositionDocument;

/** Ids of the state documents. */
export const stateId = {
  tag: (key: string) => `tag:${key}`,
  space: (id: number) => `space:${id}`,
  user: (id: number) => `user:${id}`,
  setting: (name: string) => `setting:${name}`,
  position: (stream: string) => `position:${stream}`,
};
