import { useEffect, useState } from 'react';
import { api, type ListBody } from '../api';
import { useI18n } from '../i18n';
import { keyLabel } from '../key-names';
import { Link } from '../router';
import { ErrorNote, Field, Loading, Money, Section, TableScroll, When, useAction, useLoad } from '../ui';
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

const FILTERS = ['q', 'status'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const STATUSES = ['active', 'expired', 'revoked'] as const;
/** The operator's pages show instants in UTC. */
const ZONE = 'UTC';

/** Every account's keys for the operator: searched by name, prefix or id, each linking to its account. */
export function AllKeys() {
  const { t } = useI18n();
  const { values, keep } = useUrlQuery(FILTERS);
  const [form, setForm] = useState<Filters>(values);
  const [pages, setPages] = useState<ListBody<KeyListing>[]>([]);
  const params = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ''));
  const q = params.toString();
  const first = useLoad(() => api.get<ListBody<KeyListing>>(`/admin/v1/keys?limit=50${q ? `&${q}` : ''}`), [q]);
  useEffect(() => setPages([]), [q]);
  const more = useAction();
  const keys = [...(first.data?.data ?? []), ...pages.flatMap((p) => p.data)];
  const last = pages.length > 0 ? pages[pages.length - 1]! : first.data;
  const cursor = last?.next_after ?? null;

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
        <ErrorNote error={first.error ?? more.error} />
        {!first.data ? (
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
                {keys.length === 0 && (
                  <tr>
                    <td colSpan={8} className="muted">{t('No keys.')}</td>
                  </tr>
                )}
                {keys.map((k) => (
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
        {cursor && (
          <button
            type="button"
            disabled={more.busy}
            onClick={() =>
              more.run(async () => {
                setPages([...pages, await api.get<ListBody<KeyListing>>(`/admin/v1/keys?limit=50&after=${encodeURIComponent(cursor)}${q ? `&${q}` : ''}`)]);
              })
            }
          >
            {t('Load more')}
          </button>
        )}
      </Section>
    </>
  );
}
