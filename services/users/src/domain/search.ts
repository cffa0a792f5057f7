/**
 * Folding for user search. Both the stored text and the query are folded the same way, so that
 * Müller, Muller and Mueller all become `muller`: diacritics are stripped (ü → u), ß becomes ss,
 * and the German two-letter transliterations ae, oe, ue collapse to their vowel. Because both
 * sides are folded identically, the collapse never makes an exact name miss itself.
 */
export function fold(text: string): string {
  return text
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/ae/g, 'a')
    .replace(/oe/g, 'o')
    .replace(/ue/g, 'u');
}

const words = (text: string) =>
  fold(text)
    .split(/[\s,;:()"'/\\]+/)
    .filter(Boolean);

type Named = { firstname: string; lastname: string; customfields?: Record<string, string> };

const padded = (all: string[]) => ` ${[...new Set(all.filter(Boolean))].join(' ')} `;
const nameWords = (user: Named) => [...words(user.firstname), ...words(user.lastname)];
const customFieldWords = (user: Named) => Object.values(user.customfields ?? {}).flatMap(words);

/** The searchable words of a user: name, email (whole, local part pieces, domain) and custom field values. */
export function searchText(user: Named & { email: string }) {
  const email = user.email.toLowerCase();
  const [local, domain = ''] = email.split('@');
  return padded([...nameWords(user), fold(email), ...fold(local).split(/[._+-]+/), fold(domain), ...customFieldWords(user)]);
}

/** The same without the email, for callers who see emails disguised: a search by email would undo the disguise. */
export function searchTextWithoutEmail(user: Named) {
  return padded([...nameWords(user), ...customFieldWords(user)]);
}

/** Query terms, folded, with LIKE wildcards escaped. */
export function queryTerms(query: string): string[] {
  return words(query).map((t) => t.replace(/[\\%_]/g, (c) => `\\${c}`));
}
