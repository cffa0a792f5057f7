import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { sessionLost } from './api.ts';
import { errorLines, t } from './i18n.ts';

/** What the API said, in the person's language; announced to screen readers. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const [first, ...rest] = errorLines(error);
  return (
    <div class="error" role="alert">
      <p>{first}</p>
      {rest.length > 0 && (
        <ul>
          {rest.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({ text }: { text: string | null }) {
  return (
    <p class="notice" role="status">
      {text ?? ''}
    </p>
  );
}

/**
 * HTML of the network exactly as the API sanitised it (descriptions, highlighted fragments: the
 * API encodes everything but its allowed tags); never HTML made here from anyone's text.
 */
export function SanitisedHtml({ html, class: className }: { html: string; class?: string }) {
  return <div class={className ?? 'content'} dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Loading() {
  return <p aria-busy="true">{t('common.loading')}</p>;
}

/**
 * Loads with `load` whenever `deps` change: the data, the error (a lost session leads to the
 * sign-in page), and `reload`.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && !sessionLost(error) && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

/** Runs an action of the person: busy while it runs, its error kept for an ErrorBox. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      if (!sessionLost(err)) setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

/** The end of a settings form: what the save said, and the save button. */
export function SaveRow({ action, notice }: { action: { busy: boolean; error: unknown }; notice: string | null }) {
  return (
    <>
      <ErrorBox error={action.error} />
      <Notice text={notice} />
      <button type="submit" disabled={action.busy}>
        {t('common.save')}
      </button>
    </>
  );
}

/** A question's tags, each a link to the questions with it. */
/** A labelled choice and the button that acts on it (rating a solution, validating it for a period). */
export function ChoiceAction(props: {
  id: string;
  label: string;
  value: string;
  options: ReadonlyArray<readonly [value: string, text: string]>;
  onChange: (value: string) => void;
  busy: boolean;
  act: string;
  onAct: () => void;
}) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      <button type="button" class="secondary" disabled={props.busy} onClick={props.onAct}>
        {props.act}
      </button>
    </>
  );
}

export function TagLinks({ concepts }: { concepts: ReadonlyArray<{ concept_id: string; primary_label: string }> }) {
  if (!concepts.length) return null;
  return (
    <ul class="tags" aria-label={t('question.tags')}>
      {concepts.map((c) => (
        <li key={c.concept_id}>
          <a href={`/?tags=${encodeURIComponent(c.primary_label)}`}>{c.primary_label}</a>
        </li>
      ))}
    </ul>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · ${t('app.name')}`;
  }, [title]);
  return (
    <>
      <h1>{title}</h1>
      {children}
    </>
  );
}

export const formatDate = (iso: string, language: string) =>
  new Date(iso).toLocaleString(language, { dateStyle: 'medium', timeStyle: 'short' });

/** Splits "a, b ,c" into labels. */
export const labels = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
