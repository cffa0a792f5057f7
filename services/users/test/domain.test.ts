import crypto from 'node:crypto';
import { hashPassword, verifyPassword } from '../src/domain/passwords.ts';
import { disguiseEmail } from '../src/domain/present.ts';
import { fold, queryTerms, searchText, searchTextWithoutEmail } from '../src/domain/search.ts';

describe('fold', () => {
  test.each([
    ['Müller', 'muller'],
    ['Mueller', 'muller'],
    ['MULLER', 'muller'],
    ['Schäfer', 'schafer'],
    ['Schaefer', 'schafer'],
    ['Größe', 'grosse'],
    ['Kovač', 'kovac'],
    ['Öztürk', 'ozturk'],
  ])('%s → %s', (input, folded) => expect(fold(input)).toBe(folded));

  test('search text holds each word once, padded for whole-word matching', () => {
    expect(
      searchText({ firstname: 'Anna Lena', lastname: 'Müller', email: 'a.mueller@brew.example', customfields: { team: 'Hops' } }),
    ).toBe(' anna lena muller a.muller@brew.example a brew.example hops ');
    expect(searchTextWithoutEmail({ firstname: 'Anna Lena', lastname: 'Müller', customfields: { team: 'Hops' } })).toBe(
      ' anna lena muller hops ',
    );
  });

  test('query terms escape LIKE wildcards', () => {
    expect(queryTerms('50% a_b back\\slash')).toEqual(['50\\%', 'a\\_b', 'back', 'slash']);
  });
});

describe('passwords', () => {
  test('scrypt at the production cost: verifies the right password only', async () => {
    const hash = await hashPassword('correct horse', 2 ** 15);
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse', hash, 2 ** 15)).toBe(true);
    expect(await verifyPassword('correct horsE', hash, 2 ** 15)).toBe(false);
    expect(await verifyPassword('anything', null, 1024)).toBe(false);
  });

  test('the same password hashes differently each time (salted)', async () => {
    expect(await hashPassword('same', 1024)).not.toBe(await hashPassword('same', 1024));
  });

  test('a password is compared in constant time, over the whole derived key', async () => {
    const hash = await hashPassword('correct horse', 1024);
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      expect(await verifyPassword('wrong horse', hash, 1024)).toBe(false);
      expect(compare).toHaveBeenCalledTimes(1);
      const [derived, stored] = compare.mock.calls[0]! as [Buffer, Buffer];
      expect(derived.length).toBe(32);
      expect(stored).toEqual(Buffer.from(hash.split('$')[5]!, 'base64'));
    } finally {
      compare.mockRestore();
    }
  });

  test('a log-in of an unknown user spends the same work as a wrong password (timing reveals no email)', async () => {
    const hash = await hashPassword('correct horse', 2048);
    const derive = jest.spyOn(crypto, 'scrypt');
    try {
      await verifyPassword('a guess', hash, 2048);
      await verifyPassword('a guess', null, 2048);
      const costs = derive.mock.calls.map((c) => (c[3] as { N: number }).N);
      expect(costs).toEqual([2048, 2048]);
    } finally {
      derive.mockRestore();
    }
  });
});

test('email disguise keeps the first letter and the domain', () => {
  expect(disguiseEmail('jane.doe@example.com')).toBe('j***@example.com');
  expect(disguiseEmail('broken')).toBe('***');
});
