import { ApiError, type ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { fieldErrorLine, t } from '../i18n.ts';
import { ErrorBox, Loading, SaveRow, useAction, useLoad } from '../ui.tsx';

type NetworkSettings = ResponseOf<'getNetworkSettings'>;
type PasswordSignIn = NetworkSettings['password_sign_in'];
type Mapping = NetworkSettings['idp_group_mappings'][number];
type Role = Mapping['roles'][number];
type Space = ResponseOf<'listKnowledgeSpaces'>['items'][number];

/** Every role, with its name in the interface; a Record, so that a new role is a compile error here. */
const ROLE_LABELS: Record<Role, MessageKey> = {
  user: 'role.user',
  manager: 'role.manager',
  api_user: 'role.api_user',
  on_behalf_user: 'role.on_behalf_user',
  content_admin: 'role.content_admin',
  settings_admin: 'role.settings_admin',
  user_admin: 'role.user_admin',
  super_admin: 'role.super_admin',
};
const ROLES = Object.keys(ROLE_LABELS) as Role[];

/** A mapping as the form edits it; `key` keeps each row's inputs its own while rows come and go. */
interface Row extends Mapping {
  key: number;
}
let rowKeys = 0;
const toRow = (mapping: Mapping): Row => ({ ...mapping, knowledge_spaces: mapping.knowledge_spaces ?? [], key: ++rowKeys });
const toggle = <T,>(list: readonly T[], value: T, on: boolean) => (on ? [...list, value] : list.filter((v) => v !== value));

/**
 * Single sign-on's network settings (docs/sso.md, docs/scim.md): who may sign in with a password,
 * and which identity-provider group gives which roles and membership of which knowledge spaces.
 * What the API refuses is shown as it said it, beside the mapping it concerns.
 */
export function SignInSettings() {
  const loaded = useLoad(() => Promise.all([kn().call('getNetworkSettings'), kn().call('listKnowledgeSpaces')]), []);
  const [passwordSignIn, setPasswordSignIn] = useState<PasswordSignIn>('everyone');
  const [rows, setRows] = useState<Row[] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const show = (settings: NetworkSettings) => {
    setPasswordSignIn(settings.password_sign_in);
    setRows(settings.idp_group_mappings.map(toRow));
  };
  useEffect(() => {
    if (loaded.data) show(loaded.data[0]);
  }, [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!rows || !loaded.data) return <Loading />;
  const spaces = loaded.data[1].items;
  const change = (key: number, patch: Partial<Mapping>) => {
    setNotice(null);
    setRows(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  };
  const submit = (event: Event) => {
    event.preventDefault();
    setNotice(null);
    void action.run(async () => {
      const idp_group_mappings = rows.map(({ group, roles, knowledge_spaces }) => ({ group, roles, knowledge_spaces }));
      show(await kn().call('updateNetworkSettings', { body: { password_sign_in: passwordSignIn, idp_group_mappings } }));
      setNotice(t('common.saved'));
    });
  };
  return (
    <section aria-labelledby="sign-in-settings-title">
      <h2 id="sign-in-settings-title">{t('signInSettings.title')}</h2>
      <form onSubmit={submit} noValidate>
        <label for="password_sign_in">{t('signInSettings.passwordSignIn')}</label>
        <select
          id="password_sign_in"
          value={passwordSignIn}
          onChange={(e) => {
            setNotice(null);
            setPasswordSignIn(e.currentTarget.value as PasswordSignIn);
          }}
        >
          <option value="everyone">{t('signInSettings.everyone')}</option>
          <option value="administrators">{t('signInSettings.administrators')}</option>
        </select>
        <h3>{t('signInSettings.mappings')}</h3>
        <p>{t('signInSettings.mappingsHelp')}</p>
        {rows.length === 0 && <p>{t('signInSettings.noMappings')}</p>}
        {rows.map((row, index) => (
          <MappingFields
            key={row.key}
            row={row}
            index={index}
            spaces={spaces}
            error={action.error}
            onChange={(patch) => change(row.key, patch)}
            onRemove={() => {
              setNotice(null);
              setRows(rows.filter((r) => r.key !== row.key));
            }}
          />
        ))}
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setNotice(null);
            setRows([...rows, toRow({ group: '', roles: [], knowledge_spaces: [] })]);
          }}
        >
          {t('signInSettings.add')}
        </button>
        <SaveRow action={action} notice={notice} />
      </form>
    </section>
  );
}

function MappingFields(props: {
  row: Row;
  index: number;
  spaces: Space[];
  error: unknown;
  onChange: (patch: Partial<Mapping>) => void;
  onRemove: () => void;
}) {
  const { row, index } = props;
  const id = `mapping-${row.key}`;
  // The API names a mapping's fields by its place in the list: idp_group_mappings.<index>.group.
  const own = `idp_group_mappings.${index}.`;
  const failed = props.error instanceof ApiError ? props.error.fields.filter((f) => f.path.startsWith(own)) : [];
  const problems = failed.map(fieldErrorLine);
  const groupInvalid = failed.some((f) => f.path === `${own}group`);
  // Closed spaces are what a mapping is for; an open one stays listed while a mapping names it.
  const offered = props.spaces.filter((s) => s.is_closed || row.knowledge_spaces.includes(s.id));
  const title = row.group.trim() || t('signInSettings.newMapping', { n: index + 1 });
  return (
    <fieldset aria-describedby={problems.length ? `${id}-problems` : undefined}>
      <legend>{title}</legend>
      <label for={`${id}-group`}>{t('signInSettings.group')}</label>
      <input
        id={`${id}-group`}
        value={row.group}
        aria-invalid={groupInvalid ? true : undefined}
        onInput={(e) => props.onChange({ group: e.currentTarget.value })}
      />
      <fieldset>
        <legend>{t('signInSettings.roles')}</legend>
        {ROLES.map((role) => (
          <div class="check" key={role}>
            <input
              id={`${id}-role-${role}`}
              type="checkbox"
              checked={row.roles.includes(role)}
              onChange={(e) => props.onChange({ roles: toggle(row.roles, role, e.currentTarget.checked) })}
            />
            <label for={`${id}-role-${role}`}>{t(ROLE_LABELS[role])}</label>
          </div>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t('signInSettings.spaces')}</legend>
        {offered.length === 0 && <p>{t('signInSettings.noSpaces')}</p>}
        {offered.map((space) => (
          <div class="check" key={space.id}>
            <input
              id={`${id}-space-${space.id}`}
              type="checkbox"
              checked={row.knowledge_spaces.includes(space.id)}
              onChange={(e) => props.onChange({ knowledge_spaces: toggle(row.knowledge_spaces, space.id, e.currentTarget.checked) })}
            />
            <label for={`${id}-space-${space.id}`}>
              {space.is_closed ? space.name : t('signInSettings.openSpace', { name: space.name })}
            </label>
          </div>
        ))}
      </fieldset>
      {problems.length > 0 && (
        <ul id={`${id}-problems`} class="error">
          {problems.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
      <button type="button" class="secondary" onClick={props.onRemove}>
        {t('signInSettings.remove', { group: title })}
      </button>
    </fieldset>
  );
}
