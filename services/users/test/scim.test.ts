import { rolesFor, spacesFor, withGroupRoles } from '../src/domain/group-roles.ts';
import { matches, parseFilter, ScimFilterError } from '../src/domain/scim/filter.ts';
import { applyPatch, ScimPatchError } from '../src/domain/scim/patch.ts';

describe('SCIM filters', () => {
  test('precedence: and binds closer than or; not and parentheses', () => {
    expect(parseFilter('a eq "1" or b eq "2" and c pr')).toEqual({
      op: 'or',
      left: { op: 'eq', attr: 'a', value: '1' },
      right: { op: 'and', left: { op: 'eq', attr: 'b', value: '2' }, right: { op: 'pr', attr: 'c' } },
    });
    expect(parseFilter('not (a eq true) AND (b ne null)')).toEqual({
      op: 'and',
      left: { op: 'not', filter: { op: 'eq', attr: 'a', value: true } },
      right: { op: 'ne', attr: 'b', value: null },
    });
  });

  test('value paths, URNs and escaped strings', () => {
    expect(parseFilter('emails[type eq "work" and value co "@x"]')).toMatchObject({ op: 'value', attr: 'emails', filter: { op: 'and' } });
    expect(parseFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Q\\"A"')).toEqual({
      op: 'eq',
      attr: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
      value: 'Q"A',
    });
    expect(parseFilter('meta.lastModified gt "2026-01-01T00:00:00Z"')).toMatchObject({ op: 'gt', attr: 'meta.lastModified' });
  });

  test.each([
    'userName eq',
    'userName xx "a"',
    '(userName eq "a"',
    'userName eq "a")',
    'userName eq "a" and',
    'userName eq a@b',
    'userName eq "unterminated',
    'emails[type eq "work"',
    '',
    'eq "a"',
    `${'('.repeat(60)}a pr${')'.repeat(60)}`,
    `a eq "${'x'.repeat(3000)}"`,
  ])('refused: %s', (filter) => {
    expect(() => parseFilter(filter)).toThrow(ScimFilterError);
  });

  test('evaluated against a resource: case-insensitive names and values, multi-valued attributes', () => {
    const user = {
      userName: 'Ann@Corp.example',
      emails: [{ value: 'ann@corp.example', type: 'work' }],
      active: true,
      name: { givenName: 'Ann' },
    };
    expect(matches(parseFilter('USERNAME eq "ann@corp.EXAMPLE"'), user)).toBe(true);
    expect(matches(parseFilter('emails co "corp"'), user)).toBe(true);
    expect(matches(parseFilter('emails[type eq "home"]'), user)).toBe(false);
    expect(matches(parseFilter('name.givenName sw "a" and not (active eq false)'), user)).toBe(true);
    expect(matches(parseFilter('title pr'), user)).toBe(false);
  });
});

describe('SCIM PATCH', () => {
  const group = { displayName: 'Brewers', members: [{ value: '1' }, { value: '2' }] };

  test('add appends to multi-valued attributes without duplicates; replace and remove by path and filter', () => {
    expect(applyPatch(group, [{ op: 'add', path: 'members', value: [{ value: '2' }, { value: '3' }] }]).members).toEqual([
      { value: '1' },
      { value: '2' },
      { value: '3' },
    ]);
    expect(applyPatch(group, [{ op: 'remove', path: 'members[value eq "1"]' }]).members).toEqual([{ value: '2' }]);
    expect(applyPatch(group, [{ op: 'remove', path: 'members', value: [{ value: '2' }] }]).members).toEqual([{ value: '1' }]);
    expect(applyPatch(group, [{ op: 'remove', path: 'members' }]).members).toBeUndefined();
    expect(applyPatch(group, [{ op: 'Replace', path: 'displayName', value: 'Maltsters' }]).displayName).toBe('Maltsters');
    expect(group.members).toHaveLength(2);
  });

  test('a value filter of equalities that matches nothing makes the element (Entra ID)', () => {
    const user = { userName: 'a@b.c' };
    expect(applyPatch(user, [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'x@y.z' }]).emails).toEqual([
      { type: 'work', value: 'x@y.z' },
    ]);
  });

  test('without a path the value names the attributes; sub-attributes and extensions by path', () => {
    const ext = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
    const user = { userName: 'a@b.c', active: true, name: { givenName: 'A', familyName: 'B' }, [ext]: { department: 'Q' } };
    const patched = applyPatch(
      user,
      [
        { op: 'replace', value: { active: false, 'name.familyName': 'C' } },
        { op: 'replace', path: `${ext}:department`, value: 'R' },
        { op: 'add', path: 'name.givenName', value: 'Z' },
      ],
      [ext],
    );
    expect(patched).toMatchObject({ active: false, name: { givenName: 'Z', familyName: 'C' }, [ext]: { department: 'R' } });
    expect(applyPatch(user, [{ op: 'remove', path: ext }], [ext])[ext]).toBeUndefined();
  });

  test.each([
    [{ op: 'remove' }, 'noTarget'],
    [{ op: 'move', path: 'a' }, 'invalidSyntax'],
    [{ op: 'replace', path: 'members[value eq', value: 1 }, 'invalidPath'],
    [{ op: 'replace', path: 'members[value co "9"]', value: { display: 'x' } }, 'noTarget'],
    [{ op: 'add', value: 'not an object' }, 'invalidValue'],
  ])('%j: %s', (operation, scimType) => {
    try {
      applyPatch(group, [operation]);
      throw new Error('applied');
    } catch (err) {
      expect(err).toBeInstanceOf(ScimPatchError);
      expect((err as ScimPatchError).scimType).toBe(scimType);
    }
  });
});

describe('roles from identity-provider groups', () => {
  const mappings = [
    { group: 'Content Admins', roles: ['content_admin' as const] },
    { group: 'api', roles: ['api_user' as const, 'user' as const] },
  ];

  test('every role of every mapped group the person is in, names case-insensitive', () => {
    expect(rolesFor(['content admins', 'API', 'unmapped'], mappings)).toEqual(['api_user', 'content_admin', 'user']);
    expect(rolesFor([], mappings)).toEqual([]);
  });

  test('every knowledge space of every mapped group the person is in, once, in id order; a mapping stored without spaces gives none', () => {
    const withSpaces = [
      { group: 'Quality Lab', roles: [], knowledge_spaces: [7, 3] },
      { group: 'Brewers', roles: ['user' as const], knowledge_spaces: [3, 12] },
      ...mappings,
    ];
    expect(spacesFor(['quality lab', ' BREWERS ', 'content admins'], withSpaces)).toEqual([3, 7, 12]);
    expect(spacesFor(['Content Admins'], withSpaces)).toEqual([]);
    expect(spacesFor([], withSpaces)).toEqual([]);
    expect(rolesFor(['brewers'], withSpaces)).toEqual(['user']);
  });

  test('leaving a group takes away what only the group gave, never a role set by hand', () => {
    const joined = withGroupRoles({ roles: ['user', 'api_user'], group_roles: [] }, ['content_admin', 'user']);
    expect(joined).toEqual({ roles: ['user', 'api_user', 'content_admin'], group_roles: ['content_admin'] });
    expect(withGroupRoles(joined, [])).toEqual({ roles: ['user', 'api_user'], group_roles: [] });
  });
});
