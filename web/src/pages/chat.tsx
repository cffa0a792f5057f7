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
 * in, they confirm, and the chat account acts as them from then on.
 */
export function ChatLinkPage() {
  const { query } = useSignal(route);
  const code = query.get('code') ?? '';
  const action = useAction();
  const [linked, setLinked] = useState<ResponseOf<'linkChatAccount'> | null>(null);
  const link = () =>
    void action.run(async () => {
      setLinked(await kn().call('linkChatAccount', { body: { code } }));
    });
  return (
    <Page title={t('chat.link.title')}>
      {linked ? (
        <Notice text={t(linked.platform === 'slack' ? 'chat.link.doneSlack' : 'chat.link.doneTeams')} />
      ) : (
        <>
          <p>{t('chat.link.explain')}</p>
          <ErrorBox error={action.error} />
          <button type="button" disabled={!code || action.busy} onClick={link}>
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
