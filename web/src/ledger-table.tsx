import { Fragment, useState } from 'react';
import { api, downloadCsv } from './api';
import { useAccount } from './account-context';
import { dateTimeText, isDay, signedYuanText, yuanText } from './format';
import { IdDisclosure } from './id-disclosure';
import { useI18n } from './i18n';
import { KeyName, keyLabel, useKeyDirectory, type KeyDirectory } from './key-names';
import { ledgerLines, pricingText, type LedgerEntry, type LedgerLine, type LineKind, type Translate } from './ledger-lines';
import { ErrorNote, Field, Loading, LoadMore, Money, Section, TableScroll, When, ZoneNote, useAction, useLoad, usePagedList } from './ui';
import { filterText, oneOf, setDayFilters } from './filters';
import { filtersFromAddress, writeQuery } from './url-query';

export type { LedgerEntry } from './ledger-lines';

const TYPES = ['credit', 'reservation', 'settlement', 'release', 'refund'];

/** The filters, as the address's query names them (`key` is a key id; `from`/`to` are days in the account's zone, both included), and what each may hold. */
const FILTERS = { type: oneOf(TYPES), model: filterText, key: filterText, from: isDay, to: isDay };
type Filters = Record<keyof typeof FILTERS, string>;

/** The API's query for the filters, days in the account's zone. */
function query(filters: Filters, timeZone: string): string {
  const params = new URLSearchParams();
  if (filters.type) params.set('type', filters.type);
  if (filters.model) params.set('model', filters.model);
  if (filters.key) params.set('key_id', filters.key);
  setDayFilters(params, filters, timeZone);
  return params.toString();
}

const KIND_LABEL: Record<LineKind, string> = { credit: 'Credit', refund: 'Refund', charge: 'Charge', released: 'Released hold', hold: 'Hold' };

/** A line's amount: signed money in or out, or, for a hold and a released hold, the amount held (no money moved). */
function LineAmount({ line }: { line: LedgerLine }) {
  const { t } = useI18n();
  if (line.signed !== null) return <span className={`money ${line.signed < 0 ? 'out' : 'in'}`}>{signedYuanText(line.signed)}</span>;
  const held = yuanText(line.held ?? 0);
  return <span className="money hold">{line.kind === 'hold' ? t('{amount} held', { amount: held }) : t('{amount} hold released', { amount: held })}</span>;
}

/** One entry as the expanded line lists it: a hold and its release are amounts held, not money in or out. */
function entryAmount(entry: LedgerEntry, t: Translate): string {
  switch (entry.type) {
    case 'reservation':
      return t('{amount} held', { amount: yuanText(entry.amount) });
    case 'release':
      return t('{amount} hold released', { amount: yuanText(entry.amount) });
    case 'settlement':
      return signedYuanText(-entry.amount);
    default:
      return signedYuanText(entry.amount);
  }
}

/**
 * The ledger with filters, pages and a CSV download of what the filters select. `base` is the
 * API path (the owner's /v1/account/ledger, or the operator's /admin/v1/accounts/{id}/ledger);
 * `keysPath` lists the account's keys, which name the keys entries give by id; `onRefund` lets
 * the operator start a refund from a charge.
 */
export function LedgerTable({ base, keysPath, csvName, onRefund }: { base: string; keysPath: string; csvName: string; onRefund?: (entry: LedgerEntry) => void }) {
  const { t } = useI18n();
  const zone = useAccount()?.settings.timezone ?? 'UTC';
  const keys = useKeyDirectory(keysPath);
  const [filters, setFilters] = useState<Filters>(() => filtersFromAddress(FILTERS));
  const [applied, setApplied] = useState(filters);
  const q = query(applied, zone);
  const entries = usePagedList<LedgerEntry>(`${base}${q ? `?${q}` : ''}`, 50);
  const download = useAction();
  const keyOptions = [...keys.values()];

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
      <ZoneNote timeZone={zone} />
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filters);
          writeQuery(filters);
        }}
      >
        <Field label={t('Type')}>
          <select value={filters.type} onChange={set('type')} name="type">
            <option value="">{t('All')}</option>
            {TYPES.map((type) => (
              <option key={type} value={type}>
                {t(type)}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('Model')}>
          <input value={filters.model} onChange={set('model')} name="model" />
        </Field>
        <Field label={t('Key')}>
          <select value={filters.key} onChange={set('key')} name="key">
            <option value="">{t('All keys')}</option>
            {filters.key && !keys.has(filters.key) && <option value={filters.key}>{filters.key}</option>}
            {keyOptions.map((k) => (
              <option key={k.id} value={k.id}>
                {k.revoked ? t('{key} (revoked)', { key: keyLabel(k, t) }) : keyLabel(k, t)}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('From day')}>
          <input type="date" value={filters.from} onChange={set('from')} name="from" />
        </Field>
        <Field label={t('To day (included)')}>
          <input type="date" value={filters.to} onChange={set('to')} name="to" />
        </Field>
        <button type="submit">{t('Apply')}</button>
      </form>
      <ErrorNote error={entries.error ?? download.error} />
      {!entries.items ? <Loading /> : <LedgerLines entries={entries.items} keys={keys} title={t('Ledger entries')} testId="ledger-table" onRefund={onRefund} />}
      {entries.more && entries.items && ledgerLines(entries.items).some((line) => line.kind === 'hold') && (
        <p className="muted">{t('A hold stays a hold until its settlement or release is loaded: it may be on a page not loaded yet.')}</p>
      )}
      <LoadMore more={entries.more} />
    </Section>
  );
}

/**
 * Ledger entries as the ledger reads them (ledger-lines.ts): a call's reservation and its
 * settlement or release as one line with a signed amount (a hold shown as a hold), which opens
 * onto both entries. The ledger page shows its loaded entries with it, the playground the entries
 * of its call; `onRefund` adds the operator's Refund button to each charge.
 */
export function LedgerLines({ entries, keys, title, testId, onRefund }: { entries: readonly LedgerEntry[]; keys: KeyDirectory; title: string; testId: string; onRefund?: (entry: LedgerEntry) => void }) {
  const { t, locale } = useI18n();
  const zone = useAccount()?.settings.timezone ?? 'UTC';
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const lines = ledgerLines(entries);
  const columns = onRefund ? 9 : 8;
  const toggle = (id: string) => {
    const changed = new Set(open);
    if (!changed.delete(id)) changed.add(id);
    setOpen(changed);
  };
  return (
    <TableScroll>
      <table data-testid={testId} className="ledger">
        <caption className="visually-hidden">{title}</caption>
        <thead>
          <tr>
            <th scope="col">{t('Entry')}</th>
            <th scope="col">{t('Time')}</th>
            <th scope="col" className="num">{t('Amount')}</th>
            <th scope="col" className="num">{t('Available after')}</th>
            <th scope="col">{t('Key')}</th>
            <th scope="col">{t('Model')}</th>
            <th scope="col">{t('Units and prices')}</th>
            <th scope="col">{t('Reference')}</th>
            {onRefund && <th scope="col">{t('Action')}</th>}
          </tr>
        </thead>
        <tbody>
          {lines.length === 0 && (
            <tr>
              <td colSpan={columns} className="muted">{t('No entries.')}</td>
            </tr>
          )}
          {lines.map((line) => {
            const e = line.last;
            const note = e.reference ?? e.description;
            const trace = e.task_id ?? e.request_id;
            const expanded = open.has(e.id);
            const detailsId = `entries-${e.id}`;
            return (
              <Fragment key={e.id}>
                <tr data-type={e.type} data-kind={line.kind} data-reservation-id={e.reservation_id ?? undefined}>
                  <td className="kind">
                    {line.entries.length > 1 ? (
                      <button type="button" className="expand" aria-expanded={expanded} aria-controls={expanded ? detailsId : undefined} onClick={() => toggle(e.id)}>
                        <span aria-hidden="true">{expanded ? '▾' : '▸'}</span> {t(KIND_LABEL[line.kind])}
                      </button>
                    ) : (
                      t(KIND_LABEL[line.kind])
                    )}
                  </td>
                  <td className="time">
                    <When iso={e.created_at} timeZone={zone} />
                  </td>
                  <td className="num">
                    <LineAmount line={line} />
                  </td>
                  <td className="num">
                    <Money minor={e.available_after} />
                  </td>
                  <td className="key">
                    <KeyName keyId={e.key_id} actor={e.actor} keys={keys} />
                  </td>
                  <td>{e.model ?? '—'}</td>
                  <td className="pricing">{line.pricing ? pricingText(line.pricing, t, locale) : '—'}</td>
                  <td className="reference">
                    {note && <span className="reference-text">{note}</span>} {trace && <IdDisclosure value={trace} what={e.task_id ? t('task') : t('request')} />}
                    {!note && !trace && '—'}
                  </td>
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
                {expanded && (
                  <tr className="entries" id={detailsId}>
                    <td colSpan={columns}>
                      <table data-testid="line-entries">
                        <caption className="visually-hidden">{t('The entries of this line')}</caption>
                        <thead>
                          <tr>
                            <th scope="col">#</th>
                            <th scope="col">{t('Type')}</th>
                            <th scope="col">{t('Time')}</th>
                            <th scope="col" className="num">{t('Amount')}</th>
                            <th scope="col" className="num">{t('Available after')}</th>
                            <th scope="col" className="num">{t('Frozen after')}</th>
                            <th scope="col">{t('Reservation id')}</th>
                            <th scope="col">{t('Task or request')}</th>
                          </tr>
                        </thead>
                        <tbody>
                          {line.entries.map((entry) => (
                            <tr key={entry.id} data-type={entry.type}>
                              <td>{entry.sequence}</td>
                              <td>{t(entry.type)}</td>
                              <td>
                                <When iso={entry.created_at} timeZone={zone} />
                              </td>
                              <td className="num money">{entryAmount(entry, t)}</td>
                              <td className="num">
                                <Money minor={entry.available_after} />
                              </td>
                              <td className="num">
                                <Money minor={entry.frozen_after} />
                              </td>
                              <td className="mono full-id">{entry.reservation_id ?? '—'}</td>
                              <td className="mono full-id">{entry.task_id ?? entry.request_id ?? '—'}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

interface Statement {
  readonly month: string;
  readonly timezone: string;
  readonly starts_at: string;
  readonly ends_at: string;
  readonly closed: boolean;
  readonly opening_balance: number;
  readonly credits: number;
  readonly charges: { total: number; overrun: number; by_model: { model: string; requests: number; amount: number }[] };
  readonly refunds: number;
  readonly closing_balance: number;
}

/** A month's statement: its totals, and its CSV. */
export function Statements({ base, csvPrefix, defaultMonth }: { base: string; csvPrefix: string; defaultMonth: string }) {
  const { t, locale } = useI18n();
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
          <dt>{t('Period')}</dt>
          <dd>
            {t('{start} to {end} ({zone})', { start: dateTimeText(statement.data.starts_at, statement.data.timezone, locale), end: dateTimeText(statement.data.ends_at, statement.data.timezone, locale), zone: statement.data.timezone })}
          </dd>
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
