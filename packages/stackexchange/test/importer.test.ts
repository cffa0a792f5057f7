import { siteName, splitName, userEmail } from '../src/importer.ts';
import { progressBar } from '../src/progress.ts';

test('the site name comes from the folder name', () => {
  expect(siteName('datasets/stackexchange-beer')).toBe('beer');
  expect(siteName('/dumps/beer.stackexchange.com')).toBe('beer');
  expect(siteName('/dumps/Coffee SE')).toBe('coffee-se');
});

test('display names become first and last names; e-mails are reserved addresses', () => {
  expect(splitName('Jane van Doe', 'user1')).toEqual({ firstname: 'Jane van', lastname: 'Doe' });
  expect(splitName('  hopsfan ', 'user1')).toEqual({ firstname: 'hopsfan', lastname: '' });
  expect(splitName('', 'user7')).toEqual({ firstname: 'user7', lastname: '' });
  expect(userEmail('beer', -1)).toBe('user-1@beer.stackexchange.invalid');
});

test('the progress bar writes a line per tenth without a terminal', () => {
  const lines: string[] = [];
  const out = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
  const bar = progressBar(out, 10);
  for (let i = 1; i <= 100; i++) bar.update('questions', i, 100);
  expect(lines).toHaveLength(11);
  expect(lines[10]).toBe('[##########] 100% questions 100/100\n');
});
