import { useState } from 'react';
import { api } from '../api';
import { StackedBars } from '../charts';
import { useI18n } from '../i18n';
import { ErrorNote, Field, Loading, Money, Section, TableScroll, useLoad } from '../ui';

type Group = 'day' | 'model' | 'key' | 'endpoint';
const GROUPS: Group[] = ['day', 'model', 'key', 'endpoint'];
const FIELD: Record<Group, string> = { day: 'day', model: 'model', key: 'key_id', endpoint: 'endpoint' };

interface UsageBody {
  readonly data: (Record<string, string | number | null | Record<string, number>> & { amount: number; requests: number; charged: number; refunded: number; units: Record<string, number> })[];
  readonly total: { amount: number; requests: number; charged: number; refunded: number };
}

export function Usage() {
  const { t } = useI18n();
  const [group, setGroup] = useState<Group>('day');
  const [days, setDays] = useState(30);
  const from = new Date(Date.now() - days * 86_400_000).toISOString();
  const usage = useLoad(() => api.get<UsageBody>(`/v1/usage?group_by=${group}&from=${encodeURIComponent(from)}`), [group, days]);
  const label = (row: UsageBody['data'][number]) => String(row[FIELD[group]] ?? '—');
  return (
    <>
      <h1>{t('Usage')}</h1>
      <Section title={t('Usage by {group}', { group: t(group) })}>
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <Field label={t('Group by')}>
            <select value={group} onChange={(e) => setGroup(e.target.value as Group)}>
              {GROUPS.map((g) => (
                <option key={g} value={g}>
                  {t(g)}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('Days')}>
            <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {[7, 30, 90, 365].map((d) => (
                <option key={d} value={d}>
                  {d}
                </option>
              ))}
            </select>
          </Field>
        </form>
        <ErrorNote error={usage.error} />
        {!usage.data ? (
          <Loading />
        ) : (
          <>
            <StackedBars rows={usage.data.data.map((r) => ({ label: label(r), amount: r.amount }))} series={['amount']} title={t('Usage')} />
            <TableScroll>
              <table data-testid="usage-table">
                <caption className="visually-hidden">{t('Usage')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t(group)}</th>
                    <th scope="col" className="num">{t('Requests')}</th>
                    <th scope="col" className="num">{t('Charged')}</th>
                    <th scope="col" className="num">{t('Refunded')}</th>
                    <th scope="col" className="num">{t('Amount')}</th>
                    <th scope="col">{t('Units')}</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.data.data.map((r) => (
                    <tr key={label(r)}>
                      <td>{label(r)}</td>
                      <td className="num">{r.requests}</td>
                      <td className="num">
                        <Money minor={r.charged} />
                      </td>
                      <td className="num">
                        <Money minor={r.refunded} />
                      </td>
                      <td className="num">
                        <Money minor={r.amount} />
                      </td>
                      <td className="mono">
                        {Object.entries(r.units)
                          .map(([k, v]) => `${k}=${v}`)
                          .join(' ')}
                      </td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row">{t('Total')}</th>
                    <td className="num">{usage.data.total.requests}</td>
                    <td className="num">
                      <Money minor={usage.data.total.charged} />
                    </td>
                    <td className="num">
                      <Money minor={usage.data.total.refunded} />
                    </td>
                    <td className="num">
                      <Money minor={usage.data.total.amount} />
                    </td>
                    <td />
                  </tr>
                </tfoot>
              </table>
            </TableScroll>
          </>
        )}
      </Section>
    </>
  );
}
