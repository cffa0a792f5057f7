import type { ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { t } from '../i18n.ts';
import { route } from '../router.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, Loading, Notice, Page, SaveRow, useAction, useLoad } from '../ui.tsx';

type Channels = ResponseOf<'getNotificationChannels'>;
const CHOICES = ['both', 'email', 'chat', 'none'] as const;

/**
 * /chat/link?code=…: the Slack or Teams app sent the person here to link their chat account. Signed
 * in, they first see which chat account the code belongs to (a code someone else passed on would
 * make that person's account act as them), and only their confirmation links it.
 */
export function ChatLinkPage() {
  const { query } = useSignal(route);
  const code = query.get('code') ?? '';
  const preview = useLoad(() => (code ? kn().call('previewChatLink', { body: { code } }) : Promise.resolve(null)), [code]);
  const action = useAction();
  const [linked, setLinked] = useState<ResponseOf<'linkChatAccount'> | null>(null);
  const link = () =>
    void action.run(async () => {
      setLinked(await kn().call('linkChatAccount', { body: { code } }));
    });
  const account = preview.data;
  const named = (name: string | null, id: string) => (name ? `${name} (${id})` : id);
  return (
    <Page title={t('chat.link.title')}>
      {linked ? (
        <Notice text={t(linked.platform === 'slack' ? 'chat.link.doneSlack' : 'chat.link.doneTeams')} />
      ) : !code ? (
        <Notice text={t('chat.link.noCode')} />
      ) : preview.error ? (
        <ErrorBox error={preview.error} />
      ) : !account ? (
        <Loading />
      ) : (
        <>
          <p>{t('chat.link.explain')}</p>
          <dl class="chat-link-account">
            <dt>{t('chat.link.platform')}</dt>
            <dd>{account.platform === 'slack' ? 'Slack' : 'Microsoft Teams'}</dd>
            <dt>{t(account.platform === 'slack' ? 'chat.link.workspace' : 'chat.link.tenant')}</dt>
            <dd>{named(account.workspace_name, account.workspace)}</dd>
            <dt>{t('chat.link.account')}</dt>
            <dd>{named(account.chat_user_name, account.chat_user_id)}</dd>
          </dl>
          <p>{t('chat.link.onlyYours')}</p>
          <ErrorBox error={action.error} />
          <button type="button" disabled={action.busy} onClick={link}>
            {t('chat.link.confirm')}
          </button>
        </>
      )}
    </Page>
  );
}

/** Settings: where each kind of notification the chat delivers reaches the person. */
export function ChatChannels({ onSaved }: { onSaved: () => void }) {
  const loaded = useLoad(() => kn().call('getNotificationChannels'), []);
  const [channels, setChannels] = useState<Channels | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => {
    if (loaded.data) setChannels(loaded.data);
  }, [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!channels) return <Loading />;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      setChannels(await kn().call('updateNotificationChannels', { body: channels }));
      setNotice(t('common.saved'));
      onSaved();
    });
  };
  return (
    <form onSubmit={submit}>
      <fieldset>
        <legend>{t('chat.channels.title')}</legend>
        <p class="hint">{t('chat.channels.hint')}</p>
        {(Object.keys(channels) as Array<keyof Channels>).map((type) => (
          <div key={type}>
            <label for={`channel-${type}`}>{t(`email.${type}` as MessageKey)}</label>
            <select
              id={`channel-${type}`}
              value={channels[type]}
              onChange={(e) => setChannels({ ...channels, [type]: e.currentTarget.value as Channels[typeof type] })}
            >
              {CHOICES.map((choice) => (
                <option key={choice} value={choice}>
                  {t(`chat.channels.${choice}` as MessageKey)}
                </option>
              ))}
            </select>
          </div>
        ))}
      </fieldset>
      <SaveRow action={action} notice={notice} />
    </form>
  );
}
