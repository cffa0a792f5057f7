import { stemmer as en } from '@orama/stemmers/english';
import { stemmer as fr } from '@orama/stemmers/french';
import { stemmer as de } from '@orama/stemmers/german';
import { stemmer as it } from '@orama/stemmers/italian';
import { stemmer as pt } from '@orama/stemmers/portuguese';
import { stemmer as es } from '@orama/stemmers/spanish';

/** The languages with an analyzer: stop words and a Snowball stemmer. Other languages are analysed as English without stems. */
export const languages = ['en', 'de', 'fr', 'es', 'it', 'pt'] as const;
export type Language = (typeof languages)[number];

const words = (list: string) => new Set(list.split(/\s+/).filter(Boolean));

// Function words only: a stop word list that also drops content words ("help", "problem") costs recall.
export const stopWords: Record<Language, ReadonlySet<string>> = {
  en: words(`
    a about above after again against all am an and any are aren't as at be because been before being below between both
    but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from further had
    hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd
    i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
    or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've this those through
    to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's will with won't would wouldn't you you'd you'll you're you've your yours yourself
    yourselves also just im ive dont cant wont doesnt didnt isnt thats u ur pls plz`),
  de: words(`
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anders auch auf aus bei bin
    bis bist da damit dann das dass dasselbe dazu daß dein deine deinem deinen deiner dem den denn der derer des dessen dich
    die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines einig einige einigem
    einigen einiger einiges einmal er es etwas euch euer eure eurem euren eurer für gegen gewesen hab habe haben hat hatte
    hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im in indem ins ist jede jedem jeden jeder jedes jene
    jenem jenen jener jenes jetzt kann kein keine keinem keinen keiner können könnte machen man manche mein meine meinem
    meinen meiner mich mir mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner
    selbst sich sie sind so solche soll sollte sondern sonst um und uns unser unsere unter viel vom von vor war waren warst
    was weg weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen
    wollte würde würden zu zum zur zwar zwischen`),
  fr: words(`
    au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même mes moi mon ne nos notre
    nous on ou où par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j l m n s t y été
    étée étées étés étant suis es est sommes êtes sont serai seras sera serons serez seront serais serait serions seriez
    seraient étais était étions étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez soient ai as avons avez ont
    aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient avais avait avions aviez avaient eu eus eut
    cette cet comme comment quand quel quelle quels quelles si ça ceci cela donc alors aussi très plus tout tous toute toutes`),
  es: words(`
    a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el ella ellas ellos en entre
    era erais eran eras eres es esa esas ese eso esos esta estaba estado estamos estan estar estas este esto estos estoy está
    están fue fueron fui ha habéis haber había han has hasta hay he la las le les lo los me mi mis mucho muchos muy más mí nada
    ni no nos nosotros o os otra otras otro otros para pero poco por porque que quien quienes qué se sea ser si sido sin sobre
    sois somos son soy su sus suya suyo también tanto te tenemos tener tengo ti tiene tienen todo todos tu tus tú un una uno
    unos vosotros y ya yo él cómo cuál dónde`),
  it: words(`
    a ad al alla alle allo agli ai all anche avere aveva avevano c che chi ci come con contro cui da dal dalla dalle dallo dai
    degli dei del della delle dello di dove e ed è era erano essere fa fra gli ha hai hanno ho i il in io la le lei li lo loro
    lui ma mi mia mie miei mio ne negli nei nel nella nelle nello noi non nostra nostre nostri nostro o per perché più quale
    quali quando quella quelle quelli quello questa queste questi questo se sei si sia siamo siete sono su sua sue sugli sui
    sul sulla sulle sullo suo suoi ti tra tu tua tue tuo tuoi tutti tutto un una uno vi voi come cosa molto poi sono stato`),
  pt: words(`
    a à ao aos aquela aquelas aquele aqueles aquilo as às até com como da das de dela delas dele deles depois do dos e é ela
    elas ele eles em entre era eram essa essas esse esses esta estas este estes eu foi fomos for foram há isso isto já lhe
    lhes mais mas me mesmo meu meus minha minhas muito na nas nem no nos nós nossa nossas nosso nossos num numa não o os ou
    para pela pelas pelo pelos por qual quando que quem se sem ser seu seus só sua suas também te tem têm teu tua você vocês
    um uma umas uns vos está estão estou ser são sou tenho ter tinha`),
};

/**
 * Snowball stemmers (Porter's algorithms, as Lucene and Elasticsearch ship them) from
 * `@orama/stemmers`: `bench/stemmers.ts` compared it with `snowball-stemmers` (the same algorithms
 * as a port of the Snowball compiler's output): held-out MAP within noise, 7–10 times faster. Stems
 * need not be words; they only have to agree between a query and the texts it is compared with.
 */
export const libraryStemmers: Record<Language, (word: string) => string> = { en, de, fr, es, it, pt };
let stemmers = libraryStemmers;

/** Stems of words seen before, per language: a network's vocabulary is small, its texts are not. */
const memo = new Map<Language, Map<string, string>>(languages.map((l) => [l, new Map()]));
const MEMO_SIZE = 20_000;

/** The stem of a lower-case word in a language; a word a stemmer cannot take comes back as it is. */
export function stem(word: string, language: Language): string {
  const cache = memo.get(language)!;
  let out = cache.get(word);
  if (out !== undefined) return out;
  try {
    out = word.length > 2 ? stemmers[language](word) || word : word;
  } catch {
    // No text may make analysis fail: a word the stemmer chokes on matches as itself.
    out = word;
  }
  if (cache.size >= MEMO_SIZE) cache.clear();
  cache.set(word, out);
  return out;
}

/** Benchmarks only: stem with other functions (bench/stemmers.ts compares libraries); null restores the library's. */
export function useStemmers(other: Record<Language, (word: string) => string> | null) {
  stemmers = other ?? libraryStemmers;
  for (const cache of memo.values()) cache.clear();
}

export interface TokenizeOptions {
  /** Selects the stop words and the stemmer. Default en. */
  language?: Language;
  /** Snowball stemming. Default true. */
  stem?: boolean;
  /** Drops diacritics after the stop words are removed (Müller → muller), before stemming, as the search index does. Default false. */
  fold?: boolean;
  /** A compound (`over-carbonated`) also gives its parts written together (`overcarbonated`), after them. Default false. */
  compounds?: boolean;
}

const marks = /\p{M}/gu;
export const foldDiacritics = (word: string) => (/[^ -~]/.test(word) ? word.normalize('NFD').replace(marks, '').normalize('NFC') : word);

/** A word: letters and digits, and an apostrophe's ending (`driver's`). */
const wordSource = "[\\p{L}\\p{N}]+(?:['’][\\p{L}]+)?";
const tokenPattern = new RegExp(wordSource, 'gu');
/** Words joined by hyphens (ASCII, Unicode, non-breaking) or underscores: `over-carbonated`, `max_length`. */
const joiner = /[-‐‑_]/u;
const compoundPattern = new RegExp(`${wordSource}(?:${joiner.source}${wordSource})*`, 'gu');
/** A compound of more parts or characters than this is not also taken whole (a list of codes, not a word). */
const COMPOUND_PARTS = 4;
const COMPOUND_LENGTH = 30;
const hasLetter = /\p{L}/u;

/** A word without its apostrophe: `driver's` → `driver`, `o'clock` → `oclock`. */
const wordOf = (raw: string) => (raw.endsWith("'s") ? raw.slice(0, -2) : raw.includes("'") ? raw.replace(/'/g, '') : raw);
const isDigit = (c: number) => c >= 48 && c <= 57;
/** A number of one or two digits (a word has two characters or more here). */
const isShortNumber = (word: string) => word.length === 2 && isDigit(word.charCodeAt(0)) && isDigit(word.charCodeAt(1));
const ascii = /^[\0-\x7f]*$/;
const isLetter = (c: number) => c >= 97 && c <= 122;
const isLetterOrDigit = (c: number) => isLetter(c) || isDigit(c);

/**
 * The words tokenPattern finds in a lower-case ASCII text, found without the regular expression
 * (which, with its Unicode classes, cost most of the time of analysing a text: a search index
 * analyses every question it is sent). In ASCII a letter is a-z, a digit 0-9 and the only
 * apostrophe is '; ASCII is already in NFC.
 */
function scanAscii(text: string, add: (raw: string) => void) {
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isLetterOrDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isLetterOrDigit(text.charCodeAt(i))) i++;
    // An apostrophe's ending: the apostrophe and the letters after it (none after it: not a part of the word).
    if (i + 1 < n && text.charCodeAt(i) === 39 && isLetter(text.charCodeAt(i + 1))) {
      i += 2;
      while (i < n && isLetter(text.charCodeAt(i))) i++;
    }
    add(text.slice(start, i));
  }
}

/**
 * Lower-cased word tokens of `text` without the language's stop words, optionally stemmed.
 * Letters and digits of every script count; single characters and pure numbers of one or two digits
 * are dropped (they carry no topic). With `compounds`, a compound (`over-carbonated`, `e-mail`,
 * `max_length`) gives its parts and, after them, the parts written together (`overcarbonated`,
 * `email`, `maxlength`), as Elasticsearch's word delimiter does with catenate_words; compounds of
 * numbers only (`2020-01-05`, `555-1234`), of more than COMPOUND_PARTS parts or of more than
 * COMPOUND_LENGTH characters are not joined.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const language = options.language ?? 'en';
  const stop = stopWords[language];
  const stemming = options.stem !== false;
  const tokens: string[] = [];
  const add = (raw: string) => {
    if (stop.has(raw)) return;
    const word = wordOf(raw);
    if (word.length < 2 || stop.has(word) || isShortNumber(word)) return;
    const token = options.fold ? foldDiacritics(word) : word;
    tokens.push(stemming ? stem(token, language) : token);
  };
  const lowered = text.toLowerCase();
  if (!options.compounds && ascii.test(lowered)) {
    scanAscii(lowered, add);
    return tokens;
  }
  const lower = lowered.normalize('NFC');
  if (!options.compounds) {
    for (const match of lower.matchAll(tokenPattern)) add(match[0].replace('’', "'"));
    return tokens;
  }
  for (const match of lower.matchAll(compoundPattern)) {
    if (!joiner.test(match[0])) {
      add(match[0].replace('’', "'"));
      continue;
    }
    const parts = match[0].match(tokenPattern)!.map((part) => part.replace('’', "'"));
    for (const part of parts) add(part);
    const whole = parts.map(wordOf).join('');
    if (parts.length > 1 && parts.length <= COMPOUND_PARTS && whole.length <= COMPOUND_LENGTH && hasLetter.test(whole)) add(whole);
  }
  return tokens;
}
