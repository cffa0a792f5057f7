import { wordPieceTokenizer } from '../src/index.ts';
import { vocabulary, withModel } from './model.ts';

// Ids from the Python `tokenizers` package (Hugging Face's fast tokenizer) with the model's own
// tokenizer.json, computed once: what the model was trained and measured with.
const expected: Record<string, [string, number[]]> = {
  'CJK without spaces': ['我想在多哈买一辆二手车', [101, 1855, 100, 100, 100, 100, 100, 1740, 100, 1752, 1858, 100, 102]],
  'Japanese kana and kanji': [
    '東京でビザを更新するには？',
    [101, 1879, 1755, 1665, 30245, 30231, 30216, 100, 1862, 1658, 30213, 30194, 30198, 1994, 102],
  ],
  Korean: ['안녕하세요 세계', [101, 1463, 30006, 30021, 29992, 30010, 30025, 30005, 30006, 29997, 30009, 29999, 30013, 100, 102]],
  Arabic: [
    'كيف أجدد الإقامة في قطر؟',
    [
      101, 1293, 14498, 29833, 1270, 29819, 15394, 15394, 1270, 23673, 25573, 29834, 25573, 22192, 19433, 1291, 14498, 1292, 29828, 17149,
      100, 102,
    ],
  ],
  emoji: ['Great beer 🍺🍺 👍🏽! ❤️', [101, 2307, 5404, 100, 100, 999, 100, 102]],
  'accents and dotted İ': [
    'Crème brûlée à Paris — naïve façade, İstanbul',
    [101, 13675, 21382, 7987, 9307, 2063, 1037, 3000, 1517, 15743, 8508, 1010, 9960, 102],
  ],
  'mixed languages': [
    'Where can I buy Bier in München? 在哪里买啤酒',
    [101, 2073, 2064, 1045, 4965, 12170, 2121, 1999, 25802, 1029, 100, 100, 1962, 100, 100, 100, 102],
  ],
  'controls, zero width, BOM, NBSP': [
    'tab\there\u200bzero\u0000width\ufeffbom\r\nnew\u00a0line',
    [101, 21628, 2182, 6290, 5004, 3593, 2705, 5092, 2213, 2047, 2240, 102],
  ],
  'a word over 100 characters': [`${'x'.repeat(101)} ok`, [101, 100, 7929, 102]],
  'only stop words': ['the of and a to is', [101, 1996, 1997, 1998, 1037, 2000, 2003, 102]],
  empty: ['', [101, 102]],
  punctuation: [
    "e-mail: who's $5+3=8 (really)?! #tag @user 1,000.50",
    [
      101, 1041, 1011, 5653, 1024, 2040, 1005, 1055, 1002, 1019, 1009, 1017, 1027, 1022, 1006, 2428, 1007, 1029, 999, 1001, 6415, 1030,
      5310, 1015, 1010, 2199, 1012, 2753, 102,
    ],
  ],
};

withModel('WordPiece tokenizer of all-MiniLM-L6-v2', () => {
  const tokenizer = wordPieceTokenizer({ vocab: vocabulary(), lowercase: true });

  test.each(Object.entries(expected))('%s: the ids of Hugging Face’s tokenizer', (_, [text, ids]) => {
    expect(tokenizer.encode(text, 256)).toEqual(ids);
  });

  test('1,000 characters are cut to the model’s 256 tokens, [SEP] last, as the Python tokenizer does', () => {
    const text = 'Visa renewal in Doha 多哈 🍺 café. '.repeat(40).slice(0, 1000);
    const ids = tokenizer.encode(text, 256);
    expect(ids).toHaveLength(256);
    expect(ids.slice(0, 12)).toEqual([101, 9425, 14524, 1999, 26528, 100, 100, 100, 7668, 1012, 9425, 14524]);
    expect(ids.slice(-6)).toEqual([100, 7668, 1012, 9425, 14524, 102]);
  });

  test('word pieces carry the ## of a continuation', () => {
    expect(tokenizer.pieces('Embeddings')).toEqual(['em', '##bed', '##ding', '##s']);
  });
});

test('a vocabulary without [UNK], [CLS], [SEP] or [PAD] is refused', () => {
  expect(() => wordPieceTokenizer({ vocab: ['[PAD]', 'a'], lowercase: true })).toThrow('the vocabulary has no [UNK]');
});
