import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { kn, sessionLost, type User } from './api.ts';
import { errorLines, language, relativeTime, t } from './i18n.ts';
import { useSignal } from './signal.ts';

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
  const box = useRef<HTMLDivElement>(null);
  // A mention (`<span data-mention-user-id>`) leads to the person's profile.
  useEffect(() => {
    for (const span of box.current?.querySelectorAll('span[data-mention-user-id]') ?? []) {
      const link = document.createElement('a');
      link.className = 'mention';
      link.href = `/users/${Number(span.getAttribute('data-mention-user-id'))}`;
      link.append(...span.childNodes);
      span.replaceWith(link);
    }
  }, [html]);
  return <div ref={box} class={className ?? 'content'} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** What HTML says as plain text (parsed inert, never drawn as HTML): excerpts, and profiles whose text may hold markup. */
export const textOf = (html: string) => new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '';

/** Grey bars where text will be, while it loads: the page keeps its shape; screen readers hear "Loading". */
export function Loading({ lines = 3 }: { lines?: number }) {
  return (
    <div class="skeleton" aria-busy="true" role="status">
      <span class="visually-hidden">{t('common.loading')}</span>
      {Array.from({ length: lines }, (_, i) => (
        <span key={i} class="skeleton-line" aria-hidden="true" />
      ))}
    </div>
  );
}

/** The default picture of the API: everyone has it, so initials say more. */
const DEFAULT_IMAGE = '/api/v1/public/images/user.png';
export const fullName = (u: Pick<User, 'firstname' | 'lastname'>) => `${u.firstname} ${u.lastname}`.trim();

/** A person's picture, or their initials on a colour of their own. */
export function Avatar({ user, size = 'small' }: { user: User; size?: 'small' | 'large' }) {
  if (user.image && user.image !== DEFAULT_IMAGE) return <img class={`avatar ${size}`} src={user.image} alt="" />;
  const initials = `${user.firstname.charAt(0)}${user.lastname.charAt(0)}`.toUpperCase();
  return (
    <span class={`avatar ${size} hue-${user.id % 6}`} aria-hidden="true">
      {initials}
    </span>
  );
}

/** A person's name with their picture, a link to their profile; a bar while not yet known. */
export function PersonLink({ user }: { user: User | undefined }) {
  if (!user) return <span class="skeleton-line short" aria-hidden="true" />;
  return (
    <a class="author" href={`/users/${user.id}`}>
      <Avatar user={user} />
      {fullName(user)}
    </a>
  );
}

/** A moment as "3 days ago"; the date and time itself on hover and for machines. */
export function When({ iso }: { iso: string }) {
  const lang = useSignal(language);
  return (
    <time dateTime={iso} title={formatDate(iso, lang)}>
      {relativeTime(iso)}
    </time>
  );
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

/** A question's tags, each a link to the questions with it. */
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

/**
 * Tags as chips: typed, completed from the network's tags (GET /tags, as a datalist), added with
 * Enter or a comma, removed with their button.
 */
export function TagInput({
  id,
  label,
  value,
  onChange,
  onTyped,
  disabled,
}: {
  id: string;
  label: string;
  value: string[];
  onChange: (tags: string[]) => void;
  /** What is typed and not yet a chip: a form counts it as a tag too. */
  onTyped?: (text: string) => void;
  disabled?: boolean;
}) {
  const [typed, setTypedText] = useState('');
  const setTyped = (text: string) => {
    setTypedText(text);
    onTyped?.(text);
  };
  const known = useLoad(
    async () => (typed.trim() ? (await kn().call('listTags', { query: { query: typed.trim(), limit: 8 } })).items : []),
    [typed.trim()],
  );
  const add = (text: string) => {
    const more = labels(text).filter((tag) => !value.includes(tag));
    if (more.length) onChange([...value, ...more]);
    setTyped('');
  };
  return (
    <div class="tag-input">
      <label for={id}>{label}</label>
      {value.length > 0 && (
        <ul class="chips" aria-label={label}>
          {value.map((tag) => (
            <li key={tag}>
              {tag}
              {!disabled && (
                <button
                  type="button"
                  class="chip-remove"
                  aria-label={t('tags.remove', { tag })}
                  onClick={() => onChange(value.filter((v) => v !== tag))}
                >
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <input
        id={id}
        list={`${id}-known`}
        value={typed}
        disabled={disabled}
        aria-describedby={`${id}-hint`}
        onInput={(e) => {
          const text = e.currentTarget.value;
          // A comma ends a tag; so does choosing a suggestion (the browser replaces the text with it).
          if (text.includes(',')) add(text);
          else if ((e as unknown as InputEvent).inputType === 'insertReplacementText') add(text);
          else setTyped(text);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && typed.trim()) {
            e.preventDefault();
            add(typed);
          }
        }}
      />
      <datalist id={`${id}-known`}>
        {known.data?.map((tag) => (
          <option key={tag} value={tag} />
        ))}
      </datalist>
      <p id={`${id}-hint`} class="hint">
        {t('tags.hint')}
      </p>
    </div>
  );
}

/** Splits "a, b ,c" into labels. */
export const labels = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
