import { useState } from 'react';
import { api, type ListBody } from './api';
import { useI18n } from './i18n';
import { ErrorNote, Field, Loading, Money, Section, When, useAction, useLoad } from './ui';
import { downloadCsv } from './api';

export interface LedgerEntry {
  readonly id: string;
  readonly sequence: number;
  readonly type: string;
  readonly amount: number;
  readonly available_after: number;
  readonly frozen_after: number;
  readonly reservation_id: string | null;
  readonly reference: string | null;
  readonly description: string | null;
  readonly key_id: string | null;
  readonly actor: string | null;
  readonly model: string | null;
  readonly endpoint: string | null;
  readonly request_id: string | null;
  readonly task_id: string | null;
  readonly created_at: string;
}

const TYPES = ['credit', 'reservation', 'settlement', 'release', 'refund'];

interface Filters {
  type: string;
  model: string;
  key_id: string;
  from: string;
  to: string;
}

function query(filters: Filters, timeZoneOffsetHint: string): string {
  const params = new URLSearchParams();
  if (filters.type) params.set('type', filters.type);
  if (filters.model) params.set('model', filters.model);
  if (filters.key_id) params.set('key_id', filters.key_id);
  if (filters.from) params.set('from', new Date(`${filters.from}T00:00:00${timeZoneOffsetHint}`).toISOString());
  if (filters.to) params.set('to', new Date(`${filters.to}T00:00:00${timeZoneOffsetHint}`).toISOString());
  return params.toString();
}

/**
 * The ledger with filters, pages and a CSV download of what the filters select. `base` is the
 * API path (the owner's /v1/account/ledger, or the operator's /admin/v1/accounts/{id}/ledger);
 * `onRefund` lets the operator start a refund from a settlement.
 */
export function LedgerTable({ base, csvName, onRefund }: { base: string; csvName: string; onRefund?: (entry: LedgerEntry) => void }) {
  const { t } = useI18n();
  const [filters, setFilters] = useState<Filters>({ type: '', model: '', key_id: '', from: '', to: '' });
  const [applied, setApplied] = useState(filters);
  const [pages, setPages] = useState<LedgerEntry[][]>([]);
  const q = query(applied, 'Z');
  const first = useLoad(() => api.get<ListBody<LedgerEntry>>(`${base}?limit=50${q ? `&${q}` : ''}`), [base, q]);
  const [next, setNext] = useState<string | null>(null);
  const more = useAction();
  const download = useAction();
  const entries = [...(first.data?.data ?? []), ...pages.flat()];
  const cursor = pages.length === 0 ? first.data?.next_after ?? null : next;

  const set = (name: keyof Filters) => (e: { target: { value: string } }) => setFilters({ ...filters, [name]: e.target.value });
  return (
    <Section
      title={t('Ledger entries')}
      actions={
        <button type="button" onClick={() => download.run(() => downloadCsv(`${base}?format=csv${q ? `&${q}` : ''}`, csvName))} disabled={download.busy}>
          {t('Download CSV')}
        </button>
      }
    >
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setPages([]);
          setApplied(filters);
        }}
      >
        <Field label={t('Type')}>
          <select value={filters.type} onChange={set('type')}>
            <option value="">{t('All')}</option>
            {TYPES.map((type) => (
              <option key={type} value={type}>
                {t(type)}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('Model')}>
          <input value={filters.model} onChange={set('model')} />
        </Field>
        <Field label={t('Key id')}>
          <input value={filters.key_id} onChange={set('key_id')} />
        </Field>
        <Field label={t('From (UTC day)')}>
          <input type="date" value={filters.from} onChange={set('from')} />
        </Field>
        <Field label={t('To (UTC day, exclusive)')}>
          <input type="date" value={filters.to} onChange={set('to')} />
        </Field>
        <button type="submit">{t('Apply')}</button>
      </form>
      <ErrorNote error={first.error ?? more.error ?? download.error} />
      {!first.data ? (
        <Loading />
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('Scrollable table')}>
          <table data-testid="ledger-table">
            <caption className="visually-hidden">{t('Ledger entries')}</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t('Time')}</th>
                <th scope="col">{t('Type')}</th>
                <th scope="col" className="num">{t('Amount')}</th>
                <th scope="col" className="num">{t('Available after')}</th>
                <th scope="col">{t('Key')}</th>
                <th scope="col">{t('Model')}</th>
                <th scope="col">{t('Task or request')}</th>
                <th scope="col">{t('Reference')}</th>
                {onRefund && <th scope="col">{t('Action')}</th>}
              </tr>
            </thead>
            <tbody>
              {entries.length === 0 && (
                <tr>
                  <td colSpan={onRefund ? 10 : 9} className="muted">{t('No entries.')}</td>
                </tr>
              )}
              {entries.map((e) => (
                <tr key={e.id} data-type={e.type}>
                  <td>{e.sequence}</td>
                  <td>
                    <When iso={e.created_at} />
                  </td>
                  <td>{t(e.type)}</td>
                  <td className="num">
                    <Money minor={e.amount} />
                  </td>
                  <td className="num">
                    <Money minor={e.available_after} />
                  </td>
                  <td>{e.key_id ?? e.actor ?? '—'}</td>
                  <td>{e.model ?? '—'}</td>
                  <td className="mono">{e.task_id ?? e.request_id ?? '—'}</td>
                  <td>{e.reference ?? e.description ?? '—'}</td>
                  {onRefund && (
                    <td>
                      {e.type === 'settlement' && e.reservation_id && (
                        <button type="button" onClick={() => onRefund(e)}>
                          {t('Refund')}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button
          type="button"
          disabled={more.busy}
          onClick={() =>
            more.run(async () => {
              const page = await api.get<ListBody<LedgerEntry>>(`${base}?limit=50&after=${encodeURIComponent(cursor)}${q ? `&${q}` : ''}`);
              setPages([...pages, page.data]);
              setNext(page.next_after);
            })
          }
        >
          {t('Load more')}
        </button>
      )}
    </Section>
  );
}

interface Statement {
  readonly month: string;
  readonly timezone: string;
  readonly closed: boolean;
  readonly opening_balance: number;
  readonly credits: number;
  readonly charges: { total: number; overrun: number; by_model: { model: string; requests: number; amount: number }[] };
  readonly refunds: number;
  readonly closing_balance: number;
}

/** A month's statement: its totals, and its CSV. */
export function Statements({ base, csvPrefix, defaultMonth }: { base: string; csvPrefix: string; defaultMonth: string }) {
  const { t } = useI18n();
  const [month, setMonth] = useState(defaultMonth);
  const [shown, setShown] = useState(defaultMonth);
  const statement = useLoad(() => api.get<Statement>(`${base}/${shown}`), [base, shown]);
  const download = useAction();
  return (
    <Section title={t('Monthly statement')}>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(month);
        }}
      >
        <Field label={t('Month')}>
          <input type="month" value={month} onChange={(e) => setMonth(e.target.value)} required />
        </Field>
        <button type="submit">{t('Show')}</button>
        <button type="button" onClick={() => download.run(() => downloadCsv(`${base}/${shown}?format=csv`, `${csvPrefix}-${shown}.csv`))}>
          {t('Download statement CSV')}
        </button>
      </form>
      <ErrorNote error={statement.error ?? download.error} />
      {statement.data && (
        <dl className="facts" data-testid="statement">
          <dt>{t('Opening balance')}</dt>
          <dd>
            <Money minor={statement.data.opening_balance} />
          </dd>
          <dt>{t('Credits')}</dt>
          <dd>
            <Money minor={statement.data.credits} />
          </dd>
          <dt>{t('Charges')}</dt>
          <dd>
            <Money minor={statement.data.charges.total} />
          </dd>
          <dt>{t('Refunds')}</dt>
          <dd>
            <Money minor={statement.data.refunds} />
          </dd>
          <dt>{t('Closing balance')}</dt>
          <dd>
            <Money minor={statement.data.closing_balance} />
          </dd>
          <dt>{t('Status')}</dt>
          <dd>{statement.data.closed ? t('closed') : t('open (the month is not over)')}</dd>
        </dl>
      )}
    </Section>
  );
}
