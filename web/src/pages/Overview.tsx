import { api } from '../api';
import { useAccount } from '../account-context';
import { StackedBars, type StackedRow } from '../charts';
import { addDays, dayIn, dayText, shortDayText, startOfDayIn } from '../format';
import { useI18n } from '../i18n';
import { ErrorNote, Loading, Money, Section, TableScroll, ZoneNote, useLoad } from '../ui';

interface UsageRow {
  readonly day: string;
  readonly model: string | null;
  readonly amount: number;
  readonly requests: number;
}

/** The last 30 days in the account's zone, today included, oldest first. */
function lastDays(timeZone: string, count = 30): string[] {
  const today = dayIn(new Date(), timeZone);
  return Array.from({ length: count }, (_, i) => addDays(today, i + 1 - count));
}

export function Overview() {
  const { t, locale } = useI18n();
  const account = useAccount()!;
  const zone = account.settings.timezone;
  const balance = useLoad(() => api.get<typeof account>('/v1/account'), []);
  const days = lastDays(zone);
  const from = startOfDayIn(days[0]!, zone).toISOString();
  const usage = useLoad(() => api.get<{ data: UsageRow[] }>(`/v1/usage?group_by=day,model&from=${encodeURIComponent(from)}`), [from]);

  const models = [...new Set((usage.data?.data ?? []).map((r) => r.model ?? '—'))].sort();
  const rows: StackedRow[] = days.map((day) => {
    const row: Record<string, string | number> = { label: shortDayText(day, locale) };
    for (const r of usage.data?.data ?? []) if (r.day === day) row[r.model ?? '—'] = (Number(row[r.model ?? '—'] ?? 0) || 0) + r.amount;
    return row as StackedRow;
  });
  const current = balance.data ?? account;

  return (
    <>
      <h1>{t('Overview')}</h1>
      <div className="tiles">
        <div className="tile">
          <span className="tile-label">{t('Available')}</span>
          <strong data-testid="available">
            <Money minor={current.balance.available} />
          </strong>
        </div>
        <div className="tile">
          <span className="tile-label">{t('Frozen')}</span>
          <strong data-testid="frozen">
            <Money minor={current.balance.frozen} />
          </strong>
        </div>
        <div className="tile">
          <span className="tile-label">{t('Time zone')}</span>
          <strong>{zone}</strong>
        </div>
      </div>
      <Section title={t('Spend of the last 30 days, by day and model')}>
        <ZoneNote timeZone={zone} />
        <ErrorNote error={usage.error} />
        {!usage.data ? (
          <Loading />
        ) : (
          <>
            <StackedBars rows={rows} series={models} title={t('Spend of the last 30 days, by day and model')} />
            <TableScroll>
              <table data-testid="spend-table">
                <caption className="visually-hidden">{t('Spend of the last 30 days, by day and model')}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('Day')}</th>
                    <th scope="col">{t('Model')}</th>
                    <th scope="col" className="num">{t('Requests')}</th>
                    <th scope="col" className="num">{t('Amount')}</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.data.data.length === 0 && (
                    <tr>
                      <td colSpan={4} className="muted">{t('No spend yet.')}</td>
                    </tr>
                  )}
                  {usage.data.data.map((r) => (
                    <tr key={`${r.day}/${r.model}`}>
                      <td>{dayText(r.day, locale)}</td>
                      <td>{r.model ?? '—'}</td>
                      <td className="num">{r.requests}</td>
                      <td className="num">
                        <Money minor={r.amount} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          </>
        )}
      </Section>
    </>
  );
}
