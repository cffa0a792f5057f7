import type { ResponseOf } from '@kn/client/http';
import { useState } from 'preact/hooks';
import { kn } from '../api.ts';
import { formatNumber, language, t } from '../i18n.ts';
import { ErrorBox, Loading, Page, useLoad } from '../ui.tsx';

type Flow = ResponseOf<'getAnalyticsFlow'>;
type Row = Flow['rows'][number];
const REUSE_COLUMNS = ['period', 'views', 'solvedViews', 'solvedQuestions', 'draftsShown', 'draftsPublished', 'draftsLeft'] as const;
const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const hours = (s: number | null) => (s === null ? '–' : formatNumber(s / 3600, 1));
const percent = (share: number | null) =>
  share === null ? '–' : new Intl.NumberFormat(language.get(), { style: 'percent', maximumFractionDigits: 0 }).format(share);

/** The figures of a row as the table and the CSV file give them, in the same order as `columns()`. */
const cells = (r: Row) => [
  r.period,
  r.group ?? '',
  r.asked ?? '',
  r.answered ?? '',
  r.accepted ?? '',
  hours(r.first_solution_p50_s),
  hours(r.first_solution_p90_s),
  hours(r.acceptance_p50_s),
  hours(r.acceptance_p90_s),
  percent(r.answered_within_day),
  percent(r.answered_within_week),
];
const columns = () =>
  ['period', 'group', 'asked', 'answered', 'accepted', 'firstP50', 'firstP90', 'acceptP50', 'acceptP90', 'withinDay', 'withinWeek'].map(
    (c) => t(`analytics.col.${c}` as never),
  );

/** The table as a CSV file the browser saves (the figures as shown; withheld rows say so). */
function download(flow: Flow) {
  const quote = (v: unknown) => `"${String(v).replaceAll('"', '""')}"`;
  const lines = [columns(), ...flow.rows.map((r) => (r.suppressed ? [r.period, r.group ?? '', t('analytics.withheld')] : cells(r)))];
  const url = URL.createObjectURL(new Blob([lines.map((l) => l.map(quote).join(',')).join('\r\n')], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `flow-${flow.dimension}-${flow.granularity}.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Questions asked and answered per period as bars: an SVG of our own (a chart library would pass
 * the page budget), described by its caption; the table below holds the same figures.
 */
function Chart({ flow }: { flow: Flow }) {
  const periods = new Map<string, { asked: number; answered: number }>();
  for (const r of flow.rows) {
    const p = periods.get(r.period) ?? { asked: 0, answered: 0 };
    p.asked += r.asked ?? 0;
    p.answered += r.answered ?? 0;
    periods.set(r.period, p);
  }
  const bars = [...periods];
  const top = Math.max(1, ...bars.map(([, p]) => p.asked));
  const width = Math.max(bars.length * 24, 240);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} 120`} role="img" preserveAspectRatio="none">
        <title>{t('analytics.chart', { periods: bars.length, most: formatNumber(top) })}</title>
        {bars.map(([period, p], i) => (
          <g key={period}>
            <rect class="asked" x={i * 24 + 2} width={10} y={110 - (100 * p.asked) / top} height={(100 * p.asked) / top} />
            <rect class="answered" x={i * 24 + 12} width={10} y={110 - (100 * p.answered) / top} height={(100 * p.answered) / top} />
          </g>
        ))}
      </svg>
      <figcaption aria-hidden="true">
        <span class="asked">■</span> {t('analytics.col.asked')} <span class="answered">■</span> {t('analytics.col.answered')}
      </figcaption>
    </figure>
  );
}

export function AnalyticsPage() {
  const now = Date.now();
  const [filters, setFilters] = useState({
    from: day(now - 84 * DAY_MS),
    to: day(now + DAY_MS),
    granularity: 'week' as 'day' | 'week' | 'month',
    dimension: 'network' as Flow['dimension'],
    value: '',
  });
  const [draft, setDraft] = useState(filters);
  const flow = useLoad(
    () => kn().call('getAnalyticsFlow', { query: { ...filters, value: filters.value || undefined } }),
    [JSON.stringify(filters)],
  );
  const health = useLoad(() => kn().call('getContentHealth', { query: {} }), []);
  const range = { from: filters.from, to: filters.to, granularity: filters.granularity };
  const reuse = useLoad(() => kn().call('getAnalyticsReuse', { query: range }), [JSON.stringify(range)]);
  const routing = useLoad(() => kn().call('getRoutingAnalytics', { query: range }), [JSON.stringify(range)]);
  const field = (name: keyof typeof draft) => ({
    id: `analytics-${name}`,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
  const submit = (event: Event) => {
    event.preventDefault();
    setFilters(draft);
  };
  return (
    <Page title={t('analytics.title')}>
      <form class="filters" onSubmit={submit}>
        <label for="analytics-from">{t('analytics.from')}</label>
        <input type="date" required {...field('from')} />
        <label for="analytics-to">{t('analytics.to')}</label>
        <input type="date" required {...field('to')} />
        <label for="analytics-granularity">{t('analytics.granularity')}</label>
        <select {...field('granularity')}>
          {['day', 'week', 'month'].map((g) => (
            <option key={g} value={g}>
              {t(`analytics.granularity.${g}` as never)}
            </option>
          ))}
        </select>
        <label for="analytics-dimension">{t('analytics.dimension')}</label>
        <select {...field('dimension')}>
          {['network', 'tag', 'category', 'knowledge_space', 'department', 'location'].map((d) => (
            <option key={d} value={d}>
              {t(`analytics.dimension.${d}` as never)}
            </option>
          ))}
        </select>
        <label for="analytics-value">
          {t('analytics.value')} {t('common.optional')}
        </label>
        <input type="text" maxLength={191} {...field('value')} />
        <button type="submit">{t('analytics.show')}</button>
      </form>
      <ErrorBox error={flow.error} />
      {flow.loading && <Loading />}
      {flow.data && (
        <section aria-labelledby="flow-heading">
          <h2 id="flow-heading">{t('analytics.flow')}</h2>
          <Chart flow={flow.data} />
          <p>
            {flow.data.backlog.suppressed
              ? t('analytics.backlogWithheld')
              : t('analytics.backlog', {
                  count: formatNumber(flow.data.backlog.unanswered ?? 0),
                  median: hours(flow.data.backlog.age_p50_s),
                  oldest: hours(flow.data.backlog.oldest_s),
                })}
          </p>
          <button type="button" onClick={() => download(flow.data!)}>
            {t('analytics.csv')}
          </button>
          <div class="table-scroll">
            <table>
              <caption>{t('analytics.tableCaption')}</caption>
              <thead>
                <tr>
                  {columns().map((c) => (
                    <th key={c} scope="col">
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {flow.data.rows.map((r) => (
                  <tr key={`${r.period} ${r.group}`}>
                    {r.suppressed ? (
                      <>
                        <th scope="row">{r.period}</th>
                        <td>{r.group ?? ''}</td>
                        <td colSpan={9}>{t('analytics.withheld')}</td>
                      </>
                    ) : (
                      cells(r).map((c, i) =>
                        i === 0 ? (
                          <th key="period" scope="row">
                            {c}
                          </th>
                        ) : (
                          <td key={i}>{c}</td>
                        ),
                      )
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {routing.data && (
        <section aria-labelledby="routing-heading">
          <h2 id="routing-heading">{t('analytics.routing')}</h2>
          <ul>
            <li>
              {t('analytics.routed')}: {formatNumber(routing.data.questions_routed)}
            </li>
            <li>
              {t('analytics.forwards')}: {formatNumber(routing.data.forwards)}
            </li>
            <li>
              {t('analytics.declines')}: {formatNumber(routing.data.declines)}
            </li>
          </ul>
        </section>
      )}
      {reuse.data && (
        <section aria-labelledby="reuse-heading">
          <h2 id="reuse-heading">{t('analytics.reuse')}</h2>
          <div class="table-scroll">
            <table>
              <caption>{t('analytics.reuseCaption')}</caption>
              <thead>
                <tr>
                  {REUSE_COLUMNS.map((c) => (
                    <th key={c} scope="col">
                      {t(`analytics.col.${c}`)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {reuse.data.rows.map((r) => (
                  <tr key={r.period}>
                    <th scope="row">{r.period}</th>
                    <td>{formatNumber(r.views)}</td>
                    <td>{formatNumber(r.solved_views)}</td>
                    <td>{formatNumber(r.solved_questions_viewed)}</td>
                    {r.suppressed ? (
                      <td colSpan={3}>{t('analytics.withheld')}</td>
                    ) : (
                      <>
                        <td>{formatNumber(r.drafts_shown_similar ?? 0)}</td>
                        <td>{formatNumber(r.drafts_published ?? 0)}</td>
                        <td>{formatNumber(r.drafts_not_published ?? 0)}</td>
                      </>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {health.data && (
        <section aria-labelledby="health-heading">
          <h2 id="health-heading">{t('analytics.health')}</h2>
          <ul>
            {(['expiring', 'expired', 'validation_requested', 'unaccepted'] as const).map((kind) => (
              <li key={kind}>
                <a href={`/review?kind=${kind}`}>{t(`review.kind.${kind}` as never)}</a>: {formatNumber(health.data![kind])}
              </li>
            ))}
          </ul>
        </section>
      )}
    </Page>
  );
}
