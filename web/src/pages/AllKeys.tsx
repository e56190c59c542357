import { useState } from 'react';
import { useI18n } from '../i18n';
import { keyLabel } from '../key-names';
import { Link } from '../router';
import { ErrorNote, Field, Loading, LoadMore, Money, Section, TableScroll, When, usePagedList } from '../ui';
import { filterText, oneOf } from '../filters';
import { useUrlQuery } from '../url-query';

/** One key of GET /admin/v1/keys (never a secret or a hash). */
interface KeyListing {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly status: 'active' | 'expired' | 'revoked';
  readonly account_id: string;
  readonly account_name: string | null;
  readonly spent: number;
  readonly created_at: string;
  readonly last_used_at: string | null;
}

const STATUSES = ['active', 'expired', 'revoked'] as const;
/** The search and the status, as the address's query and the API name them, and what each may hold. */
const FILTERS = { q: filterText, status: oneOf(STATUSES) };
type Filters = Record<keyof typeof FILTERS, string>;
/** The operator's pages show instants in UTC. */
const ZONE = 'UTC';

/** Every account's keys for the operator: searched by name, prefix or id, each linking to its account. */
export function AllKeys() {
  const { t } = useI18n();
  const { values, keep } = useUrlQuery(FILTERS);
  const [form, setForm] = useState<Filters>(values);
  const q = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== '')).toString();
  const keys = usePagedList<KeyListing>(`/admin/v1/keys${q ? `?${q}` : ''}`, 50);

  return (
    <>
      <h1>{t('All keys')}</h1>
      <Section title={t('Keys of every account')}>
        <form
          className="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            keep(form);
          }}
        >
          <Field label={t('Name, prefix or key id')}>
            <input type="search" value={form.q} onChange={(e) => setForm({ ...form, q: e.target.value })} name="q" />
          </Field>
          <Field label={t('Status')}>
            <select value={form.status} onChange={(e) => setForm({ ...form, status: e.target.value })} name="status">
              <option value="">{t('All')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(s)}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit">{t('Search')}</button>
        </form>
        <ErrorNote error={keys.error} />
        {!keys.items ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="all-keys-table">
              <caption className="visually-hidden">{t('Keys of every account')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Account')}</th>
                  <th scope="col">{t('Key name')}</th>
                  <th scope="col">{t('Key id')}</th>
                  <th scope="col">{t('Prefix')}</th>
                  <th scope="col">{t('Status')}</th>
                  <th scope="col" className="num">{t('Spent')}</th>
                  <th scope="col">{t('Last used ({zone})', { zone: ZONE })}</th>
                  <th scope="col">{t('Created ({zone})', { zone: ZONE })}</th>
                </tr>
              </thead>
              <tbody>
                {keys.items.length === 0 && (
                  <tr>
                    <td colSpan={8} className="muted">{t('No keys.')}</td>
                  </tr>
                )}
                {keys.items.map((k) => (
                  <tr key={k.id} data-status={k.status}>
                    <td>
                      <Link to={`/accounts/${encodeURIComponent(k.account_id)}`}>{k.account_name ?? k.account_id}</Link>
                    </td>
                    <td>{k.name ?? <span className="muted">{keyLabel(k, t)}</span>}</td>
                    <td className="mono">{k.id}</td>
                    <td className="mono">{k.prefix}…</td>
                    <td>{t(k.status)}</td>
                    <td className="num">
                      <Money minor={k.spent} />
                    </td>
                    <td>{k.last_used_at ? <When iso={k.last_used_at} timeZone={ZONE} /> : t('never')}</td>
                    <td>
                      <When iso={k.created_at} timeZone={ZONE} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <LoadMore more={keys.more} />
      </Section>
    </>
  );
}
