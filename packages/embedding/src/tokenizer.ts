// BERT's WordPiece tokenizer, as Hugging Face's fast tokenizer (tokenizer.json: BertNormalizer,
// BertPreTokenizer, WordPiece, [CLS] … [SEP]) does it, so that the ids fed to the ONNX graph are the
// ones the model was trained and measured with. test/tokenizer.test.ts holds the ids that the Python
// `tokenizers` package gives for awkward text (scripts without spaces, emoji, accents, controls).

/** What a model's folder says about its tokenizer (manifest.json `tokenizer`). */
export interface WordPieceOptions {
  /** One token a line; the line number is the id. */
  vocab: readonly string[];
  /** Lower-case and strip accents (uncased models). */
  lowercase: boolean;
}

export interface Tokenizer {
  /** Token ids of a text: [CLS], at most `maxTokens - 2` word pieces, [SEP]. */
  encode(text: string, maxTokens: number): number[];
  /** The word pieces of a text, without the special tokens (for tests and debugging). */
  pieces(text: string): string[];
  readonly padId: number;
}

const MAX_CHARS_PER_WORD = 100;
const control = /\p{C}/u;
const whitespace = /\s/u;
const nonSpacingMark = /\p{Mn}/gu;
const punctuation = /[\p{P}!-/:-@[-`{-~]/u;

/** CJK ideographs (not Hiragana, Katakana or Hangul, which are written with spaces or split by WordPiece). */
function isChineseCharacter(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** BertNormalizer: controls dropped, whitespace made a space, ideographs spaced, then (uncased) accents stripped and lower-cased. */
function normalize(text: string, lowercase: boolean): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\t' || ch === '\n' || ch === '\r') out += ' ';
    else if (cp === 0 || cp === 0xfffd || control.test(ch)) continue;
    else if (whitespace.test(ch)) out += ' ';
    else if (isChineseCharacter(cp)) out += ` ${ch} `;
    else out += ch;
  }
  return lowercase ? out.normalize('NFD').replace(nonSpacingMark, '').toLowerCase() : out;
}

/** BertPreTokenizer: words split on whitespace, each punctuation character a word of its own. */
function words(text: string): string[] {
  const out: string[] = [];
  let word = '';
  for (const ch of text) {
    if (ch === ' ') {
      if (word) out.push(word);
      word = '';
    } else if (punctuation.test(ch)) {
      if (word) out.push(word);
      out.push(ch);
      word = '';
    } else word += ch;
  }
  if (word) out.push(word);
  return out;
}

export function wordPieceTokenizer({ vocab, lowercase }: WordPieceOptions): Tokenizer {
  const ids = new Map<string, number>();
  vocab.forEach((token, id) => {
    if (!ids.has(token)) ids.set(token, id);
  });
  const special = (token: string) => {
    const id = ids.get(token);
    if (id === undefined) throw new Error(`the vocabulary has no ${token}`);
    return id;
  };
  const unk = special('[UNK]');
  const cls = special('[CLS]');
  const sep = special('[SEP]');
  const pad = special('[PAD]');

  /** Greedy longest match, continuations prefixed with ##; a word with a part not in the vocabulary is [UNK] whole. */
  const wordPiece = (word: string, into: number[], names?: string[]) => {
    const chars = Array.from(word);
    if (chars.length > MAX_CHARS_PER_WORD) {
      into.push(unk);
      names?.push('[UNK]');
      return;
    }
    const pieces: number[] = [];
    const found: string[] = [];
    for (let start = 0; start < chars.length; ) {
      let end = chars.length;
      let id: number | undefined;
      let piece = '';
      while (start < end) {
        piece = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        id = ids.get(piece);
        if (id !== undefined) break;
        end--;
      }
      if (id === undefined) {
        into.push(unk);
        names?.push('[UNK]');
        return;
      }
      pieces.push(id);
      found.push(piece);
      start = end;
    }
    into.push(...pieces);
    names?.push(...found);
  };

  const tokenize = (text: string, limit: number, names?: string[]) => {
    const out: number[] = [];
    for (const word of words(normalize(text, lowercase))) {
      wordPiece(word, out, names);
      if (out.length >= limit) break;
    }
    return out.slice(0, limit);
  };

  return {
    padId: pad,
    encode(text, maxTokens) {
      return [cls, ...tokenize(text, Math.max(0, maxTokens - 2)), sep];
    },
    pieces(text) {
      const names: string[] = [];
      tokenize(text, Number.POSITIVE_INFINITY, names);
      return names;
    },
  };
}
