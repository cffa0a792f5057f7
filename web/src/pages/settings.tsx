import type { ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { hasRole, kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { setLanguage, t, UI_LANGUAGES } from '../i18n.ts';
import { ErrorBox, Loading, Page, SaveRow, useAction, useLoad } from '../ui.tsx';
import { ChatChannels } from './chat.tsx';

const LANGUAGE_NAMES: Record<string, string> = { en: 'English', de: 'Deutsch' };
type EmailSettings = ResponseOf<'getEmailSettings'>;

/** The kinds of email by what they are about, as a person looks for them; a kind none names is "other". */
const EMAIL_GROUPS = ['yourQuestions', 'yourSolutions', 'following', 'forYou', 'mentions', 'other'] as const;
function groupOf(type: string): (typeof EMAIL_GROUPS)[number] {
  if (type.startsWith('mention_')) return 'mentions';
  if (/your_question|^new_solution$|^question_edited$/.test(type)) return 'yourQuestions';
  if (/your_solution|^solution_|^validation_/.test(type)) return 'yourSolutions';
  if (/^new_comment_to_(question|solution)$|^tag_subscription$/.test(type)) return 'following';
  if (/^new_question|forwarded|^share_/.test(type)) return 'forYou';
  return 'other';
}

export function SettingsPage() {
  const loaded = useLoad(() => Promise.all([kn().call('getLanguageSettings'), kn().call('getEmailSettings')]), []);
  // The weekly analytics digest is for managers and administrators of content.
  const manager = hasRole('manager', 'content_admin', 'super_admin');
  const digest = useLoad(async () => (manager ? kn().call('getAnalyticsDigestSetting') : null), [manager]);
  const [weekly, setWeekly] = useState<boolean | null>(null);
  const [lang, setLang] = useState('');
  const [email, setEmail] = useState<EmailSettings | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    if (!loaded.data) return;
    setLang(loaded.data[0].interface_language);
    setEmail(loaded.data[1]);
  }, [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!email) return <Loading />;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const settings = await kn().call('updateLanguageSettings', { body: { interface_language: lang as never } });
      await kn().call('updateEmailSettings', { body: email as never });
      if (weekly !== null) await kn().call('updateAnalyticsDigestSetting', { body: { weekly_digest: weekly } });
      setLanguage(settings.interface_language);
      setNotice(t('common.saved'));
    });
  };
  const types = Object.keys(email).filter((k) => typeof email[k] === 'string');
  const flag = (key: string, label: string) => (
    <div class="check" key={key}>
      <input
        id={`email-${key}`}
        type="checkbox"
        checked={email[key] === true}
        onChange={(e) => setEmail({ ...email, [key]: e.currentTarget.checked })}
      />
      <label for={`email-${key}`}>{label}</label>
    </div>
  );
  return (
    <Page title={t('settings.title')}>
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t('settings.language')}</legend>
          <label for="interface-language">{t('settings.interfaceLanguage')}</label>
          <select id="interface-language" value={lang} onChange={(e) => setLang(e.currentTarget.value)}>
            {UI_LANGUAGES.map((code) => (
              <option key={code} value={code} lang={code}>
                {LANGUAGE_NAMES[code] ?? code}
              </option>
            ))}
          </select>
        </fieldset>
        <fieldset>
          <legend>{t('settings.email')}</legend>
          {flag('email_enabled', t('settings.emailEnabled'))}
          {/* Without email at all, the rest does nothing: shown, kept, but not to be changed. */}
          <fieldset
            class="email-kinds"
            disabled={email.email_enabled !== true}
            aria-describedby={email.email_enabled !== true ? 'email-off' : undefined}
          >
            <legend class="visually-hidden">{t('settings.emailKinds')}</legend>
            {email.email_enabled !== true && (
              <p id="email-off" class="hint">
                {t('settings.emailOff')}
              </p>
            )}
            {flag('digest_email_enabled', t('settings.digest'))}
            {flag('announcement_email_enabled', t('settings.announcements'))}
            {digest.data && (
              <div class="check">
                <input
                  id="email-analytics-digest"
                  type="checkbox"
                  checked={weekly ?? digest.data.weekly_digest}
                  onChange={(e) => setWeekly(e.currentTarget.checked)}
                />
                <label for="email-analytics-digest">{t('settings.analyticsDigest')}</label>
              </div>
            )}
            {EMAIL_GROUPS.map((group) => {
              const keys = types.filter((key) => groupOf(key) === group);
              if (!keys.length) return null;
              return (
                <fieldset key={group}>
                  <legend>{t(`settings.group.${group}` as MessageKey)}</legend>
                  {keys.map((key) => (
                    <div class="check" key={key}>
                      <input
                        id={`email-${key}`}
                        type="checkbox"
                        checked={email[key] === 'on'}
                        onChange={(e) => setEmail({ ...email, [key]: e.currentTarget.checked ? 'on' : 'off' })}
                      />
                      <label for={`email-${key}`}>{t(`email.${key}` as MessageKey)}</label>
                    </div>
                  ))}
                </fieldset>
              );
            })}
          </fieldset>
        </fieldset>
        <SaveRow action={action} notice={notice} />
      </form>
      <ChatChannels onSaved={loaded.reload} />
    </Page>
  );
}
