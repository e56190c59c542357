import { useState } from 'react';
import { api, type ListBody } from '../api';
import type { AccountView } from '../account-context';
import { StackedBars } from '../charts';
import { addDays, dayIn, startOfDayIn } from '../format';
import { useI18n } from '../i18n';
import { ErrorNote, Field, Loading, Section, useLoad } from '../ui';
import { UsageTable } from '../usage-table';

type Group = 'day' | 'model' | 'account_id' | 'channel';
const GROUPS: readonly Group[] = ['day', 'model', 'account_id', 'channel'];
const GROUP_LABELS: Record<Group, string> = { day: 'Day', model: 'Model', account_id: 'Account', channel: 'Channel' };

/** The zones the range may be read in: the gateway's default account zone, UTC and the browser's own. */
const DEFAULT_ZONE = 'Asia/Shanghai';
const ZONES = [...new Set([DEFAULT_ZONE, 'UTC', Intl.DateTimeFormat().resolvedOptions().timeZone])];

interface Totals {
  readonly requests: number;
  readonly charged: number;
  readonly refunded: number;
  readonly amount: number;
  readonly units: Readonly<Record<string, number>>;
}
type UsageRow = Totals & { readonly day?: string; readonly model?: string | null; readonly account_id?: string; readonly channel?: string | null };
interface UsageBody {
  readonly data: UsageRow[];
  readonly total: Totals;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** Pages of accounts read for their names (100 each); an account beyond them shows by its id. */
const NAME_PAGES = 50;

async function accountNames(): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  let after: string | null = null;
  for (let page = 0; page < NAME_PAGES; page++) {
    const body: ListBody<AccountView> = await api.get<ListBody<AccountView>>(`/admin/v1/accounts?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    for (const a of body.data) names.set(a.id, a.name);
    if (!body.has_more || !body.next_after) break;
    after = body.next_after;
  }
  return names;
}

/** Revenue and usage across accounts (GET /admin/v1/usage): by day, model, account or channel, over days of a named zone. */
export function Revenue() {
  const { t } = useI18n();
  const [zone, setZone] = useState(DEFAULT_ZONE);
  const [to, setTo] = useState(() => dayIn(new Date(), DEFAULT_ZONE));
  const [from, setFrom] = useState(() => addDays(dayIn(new Date(), DEFAULT_ZONE), -29));
  const [group, setGroup] = useState<Group>('day');
  const [account, setAccount] = useState('');
  // Up to NAME_PAGES requests: once per visit, not on every change or return to the tab.
  const names = useLoad(accountNames, [], { once: true });
  const valid = DAY.test(from) && DAY.test(to) && from <= to;
  const query = valid
    ? `/admin/v1/usage?group_by=${group}&from=${encodeURIComponent(startOfDayIn(from, zone).toISOString())}&to=${encodeURIComponent(startOfDayIn(addDays(to, 1), zone).toISOString())}${account ? `&account_id=${encodeURIComponent(account)}` : ''}`
    : null;
  const usage = useLoad(() => (query ? api.get<UsageBody>(query) : Promise.resolve(null)), [query]);
  const accountName = (id: string) => names.data?.get(id) ?? id;
  const label = (row: UsageRow): string => {
    switch (group) {
      case 'day':
        return row.day ?? '—';
      case 'model':
        return row.model ?? '—';
      case 'account_id':
        return row.account_id ? accountName(row.account_id) : '—';
      case 'channel':
        return row.channel ?? t('no channel recorded');
    }
  };
  const amountLabel = t('Amount');
  return (
    <>
      <h1>{t('Revenue & usage')}</h1>
      <Section title={t('Revenue and usage across accounts')}>
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <Field label={t('From (day in {zone})', { zone })}>
            <input type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} required />
          </Field>
          <Field label={t('To (day in {zone}, included)', { zone })}>
            <input type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} required />
          </Field>
          <Field label={t('Time zone')}>
            <select value={zone} onChange={(e) => setZone(e.target.value)}>
              {ZONES.map((z) => (
                <option key={z} value={z}>
                  {z}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('Group by')}>
            <select value={group} onChange={(e) => setGroup(e.target.value as Group)}>
              {GROUPS.map((g) => (
                <option key={g} value={g}>
                  {t(GROUP_LABELS[g])}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('Account')}>
            <select value={account} onChange={(e) => setAccount(e.target.value)}>
              <option value="">{t('All accounts')}</option>
              {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
        </form>
        <p className="muted">{t('Charges less refunds, counted when recorded. The range is read in the zone chosen; the Day grouping shows each account’s own local date.')}</p>
        {!valid && <p className="error">{t('Choose a start day on or before the end day.')}</p>}
        <ErrorNote error={usage.error ?? names.error} />
        {valid && !usage.data ? (
          <Loading />
        ) : usage.data && usage.data.data.length === 0 ? (
          <p className="muted">{t('No usage in this range.')}</p>
        ) : (
          usage.data && (
            <>
              <StackedBars rows={usage.data.data.map((r) => ({ label: label(r), [amountLabel]: r.amount }))} series={[amountLabel]} title={t('Revenue and usage across accounts')} />
              <UsageTable
                rows={usage.data.data}
                total={usage.data.total}
                caption={t('Revenue and usage across accounts')}
                groupLabel={t(GROUP_LABELS[group])}
                rowKey={(r) => String(r[group] ?? '')}
                group={(r) => (
                  <>
                    {label(r)}
                    {group === 'account_id' && r.account_id && accountName(r.account_id) !== r.account_id && <div className="muted mono">{r.account_id}</div>}
                  </>
                )}
                testId="revenue-table"
                totalTestId="revenue-total"
                className="wide"
                query={query ?? ''}
              />
            </>
          )
        )}
      </Section>
    </>
  );
}
