/**
 * Language detection by stop words: good enough to pick the language of a question from its
 * title and description, with no model to download. Ties and texts without any known stop word
 * get the fallback (usually the author's first content language, else the network default).
 */
const stopWords: Record<string, string[]> = {
  en: [
    'the',
    'and',
    'is',
    'are',
    'of',
    'to',
    'in',
    'it',
    'that',
    'this',
    'with',
    'for',
    'how',
    'what',
    'why',
    'do',
    'does',
    'can',
    'i',
    'my',
    'on',
    'not',
    'be',
    'have',
    'you',
    'when',
    'which',
    'there',
    'from',
    'should',
    'would',
    'an',
    'a',
  ],
  de: [
    'der',
    'die',
    'das',
    'und',
    'ist',
    'nicht',
    'ich',
    'ein',
    'eine',
    'einen',
    'zu',
    'mit',
    'von',
    'den',
    'dem',
    'wie',
    'was',
    'warum',
    'kann',
    'für',
    'auf',
    'es',
    'sich',
    'auch',
    'wird',
    'werden',
    'bei',
    'oder',
    'wenn',
    'mein',
    'meine',
    'sind',
    'habe',
    'im',
    'aus',
  ],
  fr: [
    'le',
    'la',
    'les',
    'et',
    'est',
    'un',
    'une',
    'des',
    'du',
    'de',
    'pour',
    'pas',
    'que',
    'qui',
    'dans',
    'je',
    'avec',
    'sur',
    'comment',
    'pourquoi',
    'ce',
    'cette',
    'mon',
    'ma',
    'sont',
    'il',
    'elle',
    'nous',
    'vous',
    'au',
    'aux',
    'ne',
    'peut',
    'faire',
  ],
  es: [
    'el',
    'la',
    'los',
    'las',
    'y',
    'es',
    'un',
    'una',
    'de',
    'del',
    'que',
    'en',
    'por',
    'para',
    'con',
    'no',
    'cómo',
    'como',
    'qué',
    'por qué',
    'mi',
    'se',
    'lo',
    'al',
    'son',
    'está',
    'puedo',
    'hay',
    'pero',
    'muy',
    'este',
    'esta',
    'yo',
  ],
  it: [
    'il',
    'lo',
    'la',
    'gli',
    'le',
    'e',
    'è',
    'un',
    'una',
    'di',
    'del',
    'della',
    'che',
    'in',
    'per',
    'con',
    'non',
    'come',
    'perché',
    'mio',
    'mia',
    'sono',
    'si',
    'ho',
    'questo',
    'questa',
    'nel',
    'nella',
    'dei',
    'anche',
    'ma',
    'posso',
    'cosa',
  ],
  pt: [
    'o',
    'a',
    'os',
    'as',
    'e',
    'é',
    'um',
    'uma',
    'de',
    'do',
    'da',
    'dos',
    'das',
    'que',
    'em',
    'no',
    'na',
    'para',
    'com',
    'não',
    'como',
    'por',
    'meu',
    'minha',
    'são',
    'se',
    'eu',
    'isso',
    'este',
    'esta',
    'posso',
    'mas',
    'você',
  ],
};

const weights = new Map<string, Map<string, number>>();
for (const [lang, words] of Object.entries(stopWords)) {
  for (const w of words) {
    const perLang = weights.get(w) ?? new Map<string, number>();
    perLang.set(lang, 1);
    weights.set(w, perLang);
  }
}
// A word shared by several languages says less than a word that belongs to one only.
for (const perLang of weights.values()) for (const lang of perLang.keys()) perLang.set(lang, 1 / perLang.size);

const distinctive: Record<string, RegExp> = {
  de: /[äöüß]/g,
  fr: /[àâçèêëîïôûùœ]/g,
  es: /[ñ¿¡]/g,
  pt: /[ãõ]/g,
};

export const detectableLanguages = Object.keys(stopWords);

export function detectLanguage(text: string, fallback: string): string {
  const lower = (text ?? '').toLowerCase();
  const scores = new Map<string, number>();
  for (const word of lower.split(/[^\p{L}']+/u)) {
    const perLang = weights.get(word);
    if (!perLang) continue;
    for (const [lang, w] of perLang) scores.set(lang, (scores.get(lang) ?? 0) + w);
  }
  for (const [lang, re] of Object.entries(distinctive)) {
    const n = lower.match(re)?.length ?? 0;
    if (n) scores.set(lang, (scores.get(lang) ?? 0) + 0.5 * n);
  }
  let best = fallback;
  let bestScore = 0;
  let tie = false;
  for (const [lang, score] of scores) {
    if (score > bestScore) {
      best = lang;
      bestScore = score;
      tie = false;
    } else if (score === bestScore) tie = true;
  }
  return bestScore === 0 || tie ? fallback : best;
}
