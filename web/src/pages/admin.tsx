import type { ResponseOf } from '@kn/client/http';
import { useEffect, useState } from 'preact/hooks';
import { hasRole, kn } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { language, t, tn } from '../i18n.ts';
import { useSignal } from '../signal.ts';
import { ErrorBox, formatDate, Loading, Page, SaveRow, useAction, useLoad } from '../ui.tsx';
import { SignInSettings } from './sign-in-settings.tsx';

type NetworkSettings = ResponseOf<'getNetworkSettings'>;

export function AdminPage() {
  if (!hasRole('settings_admin', 'super_admin'))
    return (
      <Page title={t('admin.title')}>
        <p>{t('admin.forbidden')}</p>
      </Page>
    );
  return (
    <Page title={t('admin.title')}>
      <Network />
      <SignInSettings />
      {hasRole('super_admin') && <Exports />}
      {hasRole('super_admin') && <SearchState />}
    </Page>
  );
}

function Network() {
  const loaded = useLoad(() => kn().call('getNetworkSettings'), []);
  const [form, setForm] = useState<NetworkSettings | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => setForm(loaded.data ?? null), [loaded.data]);
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!form) return <Loading />;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const { network_name, default_language, min_experts, anonymize_users_email, solution_validation_enabled, email_delivery_enabled } =
        form;
      setForm(
        await kn().call('updateNetworkSettings', {
          body: { network_name, default_language, min_experts, anonymize_users_email, solution_validation_enabled, email_delivery_enabled },
        }),
      );
      setNotice(t('common.saved'));
    });
  };
  const check = (key: 'anonymize_users_email' | 'solution_validation_enabled' | 'email_delivery_enabled', label: string) => (
    <div class="check">
      <input id={key} type="checkbox" checked={form[key]} onChange={(e) => setForm({ ...form, [key]: e.currentTarget.checked })} />
      <label for={key}>{label}</label>
    </div>
  );
  return (
    <section aria-labelledby="network-title">
      <h2 id="network-title">{t('admin.network')}</h2>
      <form onSubmit={submit}>
        <label for="network_name">{t('admin.networkName')}</label>
        <input id="network_name" value={form.network_name} onInput={(e) => setForm({ ...form, network_name: e.currentTarget.value })} />
        <label for="default_language">{t('admin.defaultLanguage')}</label>
        <select
          id="default_language"
          value={form.default_language}
          onChange={(e) => setForm({ ...form, default_language: e.currentTarget.value as never })}
        >
          {form.content_languages.map((code) => (
            <option key={code} value={code}>
              {code}
            </option>
          ))}
        </select>
        <label for="min_experts">{t('admin.minExperts')}</label>
        <input
          id="min_experts"
          type="number"
          min={0}
          max={100}
          value={form.min_experts}
          onInput={(e) => setForm({ ...form, min_experts: Number(e.currentTarget.value) })}
        />
        {check('anonymize_users_email', t('admin.anonymize'))}
        {check('solution_validation_enabled', t('admin.validation'))}
        {check('email_delivery_enabled', t('admin.emailDelivery'))}
        <SaveRow action={action} notice={notice} />
      </form>
    </section>
  );
}

/** How often a running export is asked after. */
const EXPORT_POLL_MS = 2_000;

function Exports() {
  const lang = useSignal(language);
  const list = useLoad(() => kn().call('listContentExports'), []);
  const action = useAction();
  const running = list.data?.some((e) => e.status === 'processing');
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(list.reload, EXPORT_POLL_MS);
    return () => clearTimeout(timer);
  }, [running, list.data]);
  const download = (id: number) =>
    action.run(async () => {
      const file = await kn().call('downloadContentExport', { params: { id } });
      const url = URL.createObjectURL(new Blob([file.bytes as BlobPart], { type: file.contentType }));
      const a = document.createElement('a');
      a.href = url;
      a.download = file.filename || `export-${id}.zip`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  return (
    <section aria-labelledby="exports-title">
      <h2 id="exports-title">{t('admin.exports')}</h2>
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            await kn().call('createContentExport', { query: {} });
            list.reload();
          })
        }
      >
        {t('admin.startExport')}
      </button>
      <ErrorBox error={action.error ?? list.error} />
      {list.data?.length === 0 && <p>{t('admin.noExports')}</p>}
      <ul class="exports" aria-live="polite">
        {list.data
          ?.slice()
          .reverse()
          .map((e) => (
            <li key={e.export_id}>
              <span>{formatDate(e.start_date, lang)}</span> <strong>{t(`status.${e.status}` as MessageKey)}</strong>{' '}
              {e.status === 'success' && (
                <>
                  <span>
                    {t('admin.exportCount', { questions: tn('admin.questions', e.count ?? 0), size: tn('admin.bytes', e.file_size ?? 0) })}
                  </span>{' '}
                  <button type="button" class="link" onClick={() => void download(e.export_id)}>
                    {t('admin.download')} {e.filename}
                  </button>
                </>
              )}
              {e.message && <span> {e.message}</span>}
            </li>
          ))}
      </ul>
    </section>
  );
}

/** Whether search answers: a one-word search (503 SearchIndexLoading while it catches up), and the expert model. */
function SearchState() {
  const probe = useLoad(async () => {
    try {
      await kn().call('listQuestions', { query: { query: 'status', limit: 1 } });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === 'SearchIndexLoading') return false;
      throw err;
    }
  }, []);
  const model = useLoad<ResponseOf<'getExpertModel'>>(() => kn().call('getExpertModel'), []);
  return (
    <section aria-labelledby="search-title">
      <h2 id="search-title">{t('admin.search')}</h2>
      <ErrorBox error={probe.error ?? model.error} />
      {probe.data !== undefined && <p>{probe.data ? t('admin.searchReady') : t('admin.searchLoading')}</p>}
      {model.data && <p>{t('admin.model', { status: model.data.status, questions: tn('admin.questions', model.data.questions) })}</p>}
    </section>
  );
}
