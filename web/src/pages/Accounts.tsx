import { useState } from 'react';
import { api, type ListBody } from '../api';
import type { AccountView } from '../account-context';
import { useI18n } from '../i18n';
import { Link, navigate } from '../router';
import { ErrorNote, Field, Loading, Money, Section, TableScroll, useAction, useLoad } from '../ui';

export function Accounts() {
  const { t } = useI18n();
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [name, setName] = useState('');
  const accounts = useLoad(() => api.get<ListBody<AccountView>>(`/admin/v1/accounts?limit=100${query ? `&q=${encodeURIComponent(query)}` : ''}`), [query]);
  const create = useAction();
  return (
    <>
      <h1>{t('Accounts')}</h1>
      <Section title={t('Open an account')}>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(async () => {
              const opened = await api.post<AccountView>('/admin/v1/accounts', { name });
              navigate(`/accounts/${encodeURIComponent(opened.id)}`);
            });
          }}
        >
          <Field label={t('Name')}>
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
          </Field>
          <button type="submit" disabled={create.busy}>
            {t('Open account')}
          </button>
        </form>
        <ErrorNote error={create.error} />
      </Section>
      <Section title={t('All accounts')}>
        <form
          className="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery(search);
          }}
        >
          <Field label={t('Search by name')}>
            <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
          </Field>
          <button type="submit">{t('Search')}</button>
        </form>
        <ErrorNote error={accounts.error} />
        {!accounts.data ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="accounts-table">
              <caption className="visually-hidden">{t('All accounts')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Name')}</th>
                  <th scope="col">{t('Account id')}</th>
                  <th scope="col" className="num">{t('Available')}</th>
                  <th scope="col" className="num">{t('Frozen')}</th>
                  <th scope="col">{t('Time zone')}</th>
                </tr>
              </thead>
              <tbody>
                {accounts.data.data.map((a) => (
                  <tr key={a.id}>
                    <td>
                      <Link to={`/accounts/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                    </td>
                    <td className="mono">{a.id}</td>
                    <td className="num">
                      <Money minor={a.balance.available} />
                    </td>
                    <td className="num">
                      <Money minor={a.balance.frozen} />
                    </td>
                    <td>{a.settings.timezone}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
    </>
  );
}
