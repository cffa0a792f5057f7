import { groupsOf, languageOf, namesOf, pageAfterSignIn } from '../src/sso.ts';

test('next leads only to a path of this origin, never back to the sign-in page', () => {
  for (const [next, page] of [
    ['/questions/7?tab=a#x', '/questions/7?tab=a#x'],
    ['/', '/'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['javascript:alert(1)', '/'],
    ['/sign-in?next=/x', '/'],
    ['', '/'],
    [undefined, '/'],
    [['/a', '/b'], '/'],
  ] as Array<[unknown, string]>)
    expect([next, pageAfterSignIn(next)]).toEqual([next, page]);
});

test('names come from given_name and family_name, else name, else the email address', () => {
  expect(namesOf({ given_name: ' Ada ', family_name: 'Lovelace', name: 'x y' }, 'a@example.com')).toEqual({
    firstname: 'Ada',
    lastname: 'Lovelace',
  });
  expect(namesOf({ name: 'Jürgen von Müller' }, 'j@example.com')).toEqual({ firstname: 'Jürgen', lastname: 'von Müller' });
  expect(namesOf({ family_name: 'Curie' }, 'm@example.com')).toEqual({ firstname: 'm', lastname: 'Curie' });
  expect(namesOf({}, 'grace.hopper@example.com')).toEqual({ firstname: 'grace.hopper', lastname: '' });
  expect(namesOf({ given_name: 'x'.repeat(500) }, 'a@example.com').firstname).toHaveLength(191);
});

test('the language is that of a BCP 47 locale, or none', () => {
  expect(languageOf('de-CH')).toBe('de');
  expect(languageOf('FR')).toBe('fr');
  expect(languageOf('pt_BR')).toBe('pt');
  expect(languageOf('en')).toBe('en');
  for (const locale of ['deu', 'x', '', null, 42, 'zh-Hant-TW'.slice(0, 1)]) expect(languageOf(locale)).toBeNull();
});

test('the groups claim: the names of the groups (a full path by its last part); none without an array', () => {
  expect(groupsOf(['engineering', '/company/support', 7, null, 'a/b/'])).toEqual(['engineering', 'support', 'b']);
  expect(groupsOf([])).toEqual([]);
  expect(groupsOf(undefined)).toBeNull();
  expect(groupsOf('engineering')).toBeNull();
});
