import { buildModel, detectLanguage, foldDiacritics, languages, stem, stopWords, tokenize } from '../src/index.ts';

describe('tokenize', () => {
  it('lower-cases, splits on punctuation and drops English stop words', () => {
    expect(tokenize('How do I renew my Residence Permit? (RP) in Doha;thanks', { stem: false })).toEqual([
      'renew',
      'residence',
      'permit',
      'rp',
      'doha',
      'thanks',
    ]);
  });

  it('keeps letters of every script and drops short numbers and single characters', () => {
    expect(tokenize('Ölpreis 2024 x 12 東京 café', { language: 'de', stem: false })).toEqual(['ölpreis', '2024', '東京', 'café']);
  });

  it('gives a compound its parts and, when asked, the parts written together; numbers only are not joined', () => {
    const text = 'Over-carbonated beer, e-mail and max_length; call 555-1234 on 2020-01-05';
    expect(tokenize(text, { stem: false })).toEqual(['carbonated', 'beer', 'mail', 'max', 'length', 'call', '555', '1234', '2020']);
    expect(tokenize(text, { stem: false, compounds: true })).toEqual([
      'carbonated',
      'overcarbonated',
      'beer',
      'mail',
      'email',
      'max',
      'length',
      'maxlength',
      'call',
      '555',
      '1234',
      '2020',
    ]);
    // Written together it stems as one word: the spelling without the hyphen is found.
    expect(tokenize('over-carbonated', { compounds: true }).at(-1)).toBe(tokenize('overcarbonation')[0]);
    expect(tokenize("covid-19 Guinness's-style a-b-c-d-e", { stem: false, compounds: true })).toEqual([
      'covid',
      'covid19',
      'guinness',
      'style',
      'guinnessstyle',
    ]);
  });

  it('drops possessive endings and contractions that are stop words', () => {
    expect(tokenize("the driver's licence isn't valid", { stem: false })).toEqual(['driver', 'licence', 'valid']);
  });

  it('finds the same words in a text of ASCII only as in one with other characters', () => {
    // A text of ASCII only is scanned without the regular expression; one more character of
    // another script (a single letter: no word of its own) sends it through the expression.
    const texts = [
      "o'clock rock'n'roll y'all ab' 'quoted' it's 99's 5's 12 123 x1 a1b2 KELVIN-\u212A o''k don't",
      'MAX_LENGTH e-mail 3.14',
    ];
    for (const text of texts)
      for (const options of [{ stem: false }, { stem: true, fold: true }, { language: 'de' as const }])
        expect(tokenize(text, options)).toEqual(tokenize(`${text} é`, options));
    expect(tokenize(texts[0]!, { stem: false })).toEqual([
      'oclock',
      'rockn',
      'roll',
      'yall',
      'ab',
      'quoted',
      '123',
      'x1',
      'a1b2',
      'kelvin',
    ]);
  });

  it('stems with Snowball when asked: inflections and derivations share a stem', () => {
    expect(tokenize('cars companies company boxes renting rented visas fermenting fermentation', { stem: true })).toEqual([
      'car',
      'compani',
      'compani',
      'box',
      'rent',
      'rent',
      'visa',
      'ferment',
      'ferment',
    ]);
  });

  it.each([
    ['en', 'hops hopping hop', 'hop'],
    ['de', 'Biere Bieres Bier', 'bier'],
    ['fr', 'bières bière', 'bier'],
    ['es', 'cervezas cerveza', 'cervez'],
    ['it', 'birre birra', 'birr'],
    ['pt', 'cervejas cerveja', 'cervej'],
  ] as const)('stems %s words of one family alike', (language, text, expected) => {
    expect(new Set(tokenize(text, { language, stem: true, fold: true }))).toEqual(new Set([expected]));
    for (const word of text.split(' ')) expect(stem(foldDiacritics(word.toLowerCase()), language)).toBe(expected);
  });

  it('never throws on any Unicode text, and a word a stemmer cannot take stays itself', () => {
    const odd = ['\u{d800}abc', '\u0000\u0001', 'ﷺ٣٤ العربية', '汉字漢字', 'ñ̃̃̃̃', '🍺🍺', 'a\u200db', 'ǅǈǋ', 'İstanbul', 'ß'.repeat(500)];
    for (const language of languages)
      for (const text of odd) {
        expect(() => tokenize(text, { language, stem: true, fold: true })).not.toThrow();
        for (const word of tokenize(text, { language, stem: false })) expect(typeof stem(word, language)).toBe('string');
      }
    expect(stem('hops', 'en')).toBe('hop');
  });

  it('detects the language of a text by its stop words, with a fallback', () => {
    expect(detectLanguage('Wie lange muss das Bier gären?', 'en')).toBe('de');
    expect(detectLanguage('Combien de temps faut-il pour la fermentation de la bière ?', 'en')).toBe('fr');
    expect(detectLanguage('fermentation', 'xx')).toBe('xx');
  });

  it.each([
    ['en', 'the beer and the brewery', ['beer', 'brewery']],
    ['de', 'das Bier und die Brauerei', ['bier', 'brauerei']],
    ['fr', 'la bière et la brasserie', ['bière', 'brasserie']],
    ['es', 'la cerveza y la cervecería', ['cerveza', 'cervecería']],
    ['it', 'la birra e il birrificio', ['birra', 'birrificio']],
    ['pt', 'a cerveja e a cervejaria', ['cerveja', 'cervejaria']],
  ] as const)('drops %s stop words', (language, text, expected) => {
    expect(tokenize(text, { language, stem: false })).toEqual(expected);
  });

  it('has a stop word list for every language, and stop words of one language are words in another', () => {
    for (const language of languages) expect(stopWords[language].size).toBeGreaterThan(50);
    expect(tokenize('die', { language: 'en', stem: false })).toEqual(['die']);
    expect(tokenize('die', { language: 'de', stem: false })).toEqual([]);
  });
});

const corpus = [
  'Where can I renew my residence permit in Doha? The immigration office asks for a medical test.',
  'Residence permit renewal: which documents does immigration need, and how long does the medical take?',
  'Best place to buy a used car in Qatar, and how much does car insurance cost per year?',
  'Car insurance for a used car: which company is cheapest in Doha?',
  'Good Indian restaurants with spicy biryani near the corniche?',
  'Where to eat biryani and other Indian food in Doha, any restaurant tips?',
  'Beach camping in the desert at the inland sea: do I need a four wheel drive?',
  'Desert safari and dune bashing at the inland sea, which tour company?',
].map((text) => ({ text }));

describe.each(['tfidf', 'rri', 'blend'] as const)('buildModel %s', (method) => {
  const model = buildModel(corpus, { method, seed: 7 });

  it('gives identical texts similarity 1', () => {
    const v = model.vectorize(corpus[0]!.text);
    expect(model.similarity(v, model.vectorize(corpus[0]!.text))).toBeCloseTo(1, 5);
  });

  it('keeps every similarity in [0, 1]', () => {
    const vectors = corpus.map((d) => model.vectorize(d.text as string));
    for (const a of vectors)
      for (const b of vectors) {
        const s = model.similarity(a, b);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
      }
  });

  it('ranks the question on the same topic above the others', () => {
    const query = model.vectorize('how to renew residence permit, immigration medical');
    const scores = corpus.map((d) => model.similarity(query, model.vectorize(d.text as string)));
    const best = scores.indexOf(Math.max(...scores));
    expect([0, 1]).toContain(best);
    expect(Math.min(scores[0]!, scores[1]!)).toBeGreaterThan(Math.max(...scores.slice(2)));
  });

  it('gives empty or stop-word-only text similarity 0', () => {
    expect(model.similarity(model.vectorize('the and of'), model.vectorize(corpus[0]!.text))).toBe(0);
  });
});

describe('buildModel', () => {
  it('gives texts without a shared term TF-IDF similarity 0', () => {
    const model = buildModel(corpus, { method: 'tfidf' });
    expect(model.similarity(model.vectorize('biryani restaurant'), model.vectorize('desert camping'))).toBe(0);
  });

  it('gives unrelated texts a similarity near 0 with every method', () => {
    for (const method of ['tfidf', 'rri', 'blend'] as const) {
      const model = buildModel(corpus, { method, seed: 3 });
      expect(model.similarity(model.vectorize('spicy biryani restaurant'), model.vectorize('desert dune bashing tour'))).toBeLessThan(0.2);
    }
  });

  it('relates words that share contexts with RRI, without a shared word', () => {
    const model = buildModel(corpus, { method: 'rri', seed: 3 });
    const food = model.vectorize('biryani');
    expect(model.similarity(food, model.vectorize('restaurant'))).toBeGreaterThan(model.similarity(food, model.vectorize('insurance')));
  });

  it('is deterministic for a seed and differs between seeds', () => {
    const vector = (seed: number) => Array.from(buildModel(corpus, { method: 'rri', seed }).vectorize('used car insurance').dense!);
    expect(vector(42)).toEqual(vector(42));
    expect(vector(42)).not.toEqual(vector(43));
  });

  it('weights the parts of a unit', () => {
    const model = buildModel(corpus, { method: 'tfidf' });
    const query = model.vectorize('used car insurance');
    const heavy = model.vectorize([{ text: 'used car insurance' }, { text: 'biryani restaurant', weight: 0.1 }]);
    const light = model.vectorize([{ text: 'used car insurance', weight: 0.1 }, { text: 'biryani restaurant' }]);
    expect(model.similarity(query, heavy)).toBeGreaterThan(model.similarity(query, light));
  });
});

describe('buildModel on words it never saw', () => {
  it('gives identical texts similarity 1 with every method that has TF-IDF in it', () => {
    for (const method of ['tfidf', 'blend'] as const) {
      const model = buildModel(corpus, { method });
      expect(model.similarity(model.vectorize('zymurgy hydrometer'), model.vectorize('zymurgy hydrometer'))).toBeCloseTo(1, 5);
    }
  });
});
