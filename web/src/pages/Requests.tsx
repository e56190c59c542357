import { useState } from 'react';
import { downloadCsv } from '../api';
import { isDay } from '../format';
import { useI18n } from '../i18n';
import { keyLabel } from '../key-names';
import { Link } from '../router';
import { ErrorNote, Field, Loading, LoadMore, Money, Section, TableScroll, When, ZoneNote, useAction, usePagedList } from '../ui';
import { filterText, oneOf, setDayFilters } from '../filters';
import { unitsText } from '../units';
import { useUrlQuery } from '../url-query';

/** One line of GET /admin/v1/requests. */
interface RequestLine {
  readonly reservation_id: string;
  readonly reserved_at: string;
  readonly account_id: string;
  readonly account_name: string | null;
  readonly key_id: string | null;
  readonly key_name: string | null;
  readonly actor: string;
  readonly model: string;
  readonly endpoint: string;
  readonly channel: string | null;
  readonly units: Record<string, number> | null;
  readonly reserved: number;
  readonly amount: number | null;
  readonly refunded: number;
  readonly outcome: 'open' | 'settled' | 'released' | 'refunded';
  readonly reason: string | null;
  readonly request_id: string | null;
  readonly task_id: string | null;
}

const OUTCOMES = ['open', 'settled', 'released', 'refunded'] as const;
/** The filters, as the address's query and the API name them (`from`/`to` are UTC days, both included), and what each may hold. */
const FILTERS = { account_id: filterText, key_id: filterText, model: filterText, endpoint: filterText, channel: filterText, outcome: oneOf(OUTCOMES), from: isDay, to: isDay };
type Filters = Record<keyof typeof FILTERS, string>;
/** The operator's pages show instants in UTC, and their day filters are UTC days. */
const ZONE = 'UTC';

/** The API query of the filters. */
function apiQuery(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of ['account_id', 'key_id', 'model', 'endpoint', 'channel', 'outcome'] as const) {
    const value = filters[name].trim();
    if (value !== '') params.set(name, value);
  }
  setDayFilters(params, filters, ZONE);
  return params.toString();
}

/** The operator's request log: one line per call that reserved money, across accounts, with its outcome. */
export function Requests() {
  const { t, locale } = useI18n();
  const { values, keep } = useUrlQuery(FILTERS);
  const [form, setForm] = useState<Filters>(values);
  const q = apiQuery(values);
  const lines = usePagedList<RequestLine>(`/admin/v1/requests${q ? `?${q}` : ''}`, 50);
  const download = useAction();
  const set = (name: keyof Filters) => (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value });
  const text = (name: keyof Filters, label: string) => (
    <Field label={label}>
      <input value={form[name]} onChange={set(name)} name={name} />
    </Field>
  );

  return (
    <>
      <h1>{t('Request log')}</h1>
      <p className="muted">{t('One line per call that reserved money: settled, released or still open. Requests refused before they reserved anything (invalid input, insufficient balance, rate limits) are not listed.')}</p>
      <Section
        title={t('Calls')}
        actions={
          <button type="button" onClick={() => download.run(() => downloadCsv(`/admin/v1/requests?format=csv${q ? `&${q}` : ''}`, 'requests.csv'))} disabled={download.busy}>
            {t('Download CSV')}
          </button>
        }
      >
        <ZoneNote timeZone={ZONE} />
        <form
          className="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            keep(form);
          }}
        >
          {text('account_id', t('Account id'))}
          {text('key_id', t('Key id'))}
          {text('model', t('Model'))}
          {text('endpoint', t('Endpoint'))}
          {text('channel', t('Channel'))}
          <Field label={t('Outcome')}>
            <select value={form.outcome} onChange={set('outcome')} name="outcome">
              <option value="">{t('All')}</option>
              {OUTCOMES.map((o) => (
                <option key={o} value={o}>
                  {t(o)}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('From day')}>
            <input type="date" value={form.from} onChange={set('from')} name="from" />
          </Field>
          <Field label={t('To day (included)')}>
            <input type="date" value={form.to} onChange={set('to')} name="to" />
          </Field>
          <button type="submit">{t('Apply')}</button>
        </form>
        <ErrorNote error={lines.error ?? download.error} />
        {!lines.items ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="requests-table">
              <caption className="visually-hidden">{t('Calls')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Time ({zone})', { zone: ZONE })}</th>
                  <th scope="col">{t('Account')}</th>
                  <th scope="col">{t('Key')}</th>
                  <th scope="col">{t('Model')}</th>
                  <th scope="col">{t('Endpoint')}</th>
                  <th scope="col">{t('Channel')}</th>
                  <th scope="col">{t('Units')}</th>
                  <th scope="col" className="num">{t('Amount')}</th>
                  <th scope="col">{t('Outcome')}</th>
                  <th scope="col">{t('Request or task id')}</th>
                </tr>
              </thead>
              <tbody>
                {lines.items.length === 0 && (
                  <tr>
                    <td colSpan={10} className="muted">{t('No calls.')}</td>
                  </tr>
                )}
                {lines.items.map((l) => (
                  <tr key={l.reservation_id} data-outcome={l.outcome}>
                    <td>
                      <When iso={l.reserved_at} timeZone={ZONE} />
                    </td>
                    <td>
                      <Link to={`/accounts/${encodeURIComponent(l.account_id)}`}>{l.account_name ?? l.account_id}</Link>
                    </td>
                    <td>
                      {l.key_id ? (
                        <>
                          {keyLabel({ name: l.key_name, prefix: null }, t)}
                          <br />
                          <span className="mono muted">{l.key_id}</span>
                        </>
                      ) : (
                        l.actor
                      )}
                    </td>
                    <td>{l.model}</td>
                    <td className="mono">{l.endpoint}</td>
                    <td>{l.channel ?? '—'}</td>
                    <td>{unitsText(l.units, t, locale)}</td>
                    <td className="num">
                      {l.outcome === 'open' ? (
                        <span className="muted">
                          {t('held')} <Money minor={l.reserved} />
                        </span>
                      ) : (
                        <Money minor={l.amount} />
                      )}
                      {l.refunded > 0 && (
                        <>
                          <br />
                          <span className="muted">
                            {t('refunded')} <Money minor={l.refunded} />
                          </span>
                        </>
                      )}
                    </td>
                    <td title={l.reason ?? undefined}>
                      {t(l.outcome)}
                      {l.reason && <span className="muted"> · {l.reason}</span>}
                    </td>
                    <td className="mono">{l.task_id ?? l.request_id ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <LoadMore more={lines.more} />
      </Section>
    </>
  );
}
