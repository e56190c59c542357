import { useState } from 'react';
import { api } from '../api';
import { useAccount } from '../account-context';
import { StackedBars } from '../charts';
import { addDays, dayIn, dayText, shortDayText, startOfDayIn } from '../format';
import { useI18n } from '../i18n';
import { KeyName, keyLabel, useKeyDirectory } from '../key-names';
import { ErrorNote, Field, Loading, Section, ZoneNote, useLoad } from '../ui';
import { UsageTable } from '../usage-table';
import { readQuery, writeQuery } from '../url-query';

type Group = 'day' | 'model' | 'key' | 'endpoint';
const GROUPS: Group[] = ['day', 'model', 'key', 'endpoint'];
const FIELD: Record<Group, string> = { day: 'day', model: 'model', key: 'key_id', endpoint: 'endpoint' };
const GROUP_LABEL: Record<Group, string> = { day: 'Day', model: 'Model', key: 'Key', endpoint: 'Endpoint' };
const TITLE: Record<Group, string> = { day: 'Usage by day', model: 'Usage by model', key: 'Usage by key', endpoint: 'Usage by endpoint' };
const PERIODS = [7, 30, 90, 365];

interface UsageBody {
  readonly data: (Record<string, string | number | null | Record<string, number>> & { amount: number; requests: number; charged: number; refunded: number; units: Record<string, number> })[];
  readonly total: { amount: number; requests: number; charged: number; refunded: number };
}

/** Usage of the last days (today included, days in the account's zone), grouped as the query of the address says. */
export function Usage() {
  const { t, locale } = useI18n();
  const zone = useAccount()?.settings.timezone ?? 'UTC';
  const keys = useKeyDirectory('/v1/account/keys');
  const [choice, setChoice] = useState(() => readQuery(['group', 'days'] as const));
  const group: Group = GROUPS.find((g) => g === choice.group) ?? 'day';
  const days = PERIODS.find((d) => String(d) === choice.days) ?? 30;
  const choose = (name: 'group' | 'days', value: string) => {
    const next = { ...choice, [name]: value };
    setChoice(next);
    writeQuery(next);
  };
  const from = startOfDayIn(addDays(dayIn(new Date(), zone), 1 - days), zone).toISOString();
  const usage = useLoad(() => api.get<UsageBody>(`/v1/usage?group_by=${group}&from=${encodeURIComponent(from)}`), [group, from]);
  const value = (row: UsageBody['data'][number]) => {
    const v = row[FIELD[group]];
    return typeof v === 'string' ? v : null;
  };
  /** A row's group as text, for the chart's axis: a day in the page's language, a key by its name. */
  const label = (row: UsageBody['data'][number], short: boolean) => {
    const v = value(row);
    if (v === null) return '—';
    if (group === 'day') return short ? shortDayText(v, locale) : dayText(v, locale);
    const key = group === 'key' ? keys.get(v) : undefined;
    return key ? keyLabel(key, t) : v;
  };
  return (
    <>
      <h1>{t('Usage')}</h1>
      <Section title={t(TITLE[group])}>
        <ZoneNote timeZone={zone} />
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <Field label={t('Group by')}>
            <select value={group} onChange={(e) => choose('group', e.target.value)} name="group">
              {GROUPS.map((g) => (
                <option key={g} value={g}>
                  {t(GROUP_LABEL[g])}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('Period')}>
            <select value={days} onChange={(e) => choose('days', e.target.value)} name="days">
              {PERIODS.map((d) => (
                <option key={d} value={d}>
                  {t('Last {count} days', { count: d })}
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
            <StackedBars rows={usage.data.data.map((r) => ({ label: label(r, true), amount: r.amount }))} series={['amount']} seriesLabels={{ amount: t('Amount') }} title={t('Usage')} />
            <UsageTable
              rows={usage.data.data}
              total={usage.data.total}
              caption={t('Usage')}
              groupLabel={t(GROUP_LABEL[group])}
              rowKey={(r) => value(r) ?? ''}
              group={(r) => (group === 'key' ? <KeyName keyId={value(r)} keys={keys} /> : label(r, false))}
              testId="usage-table"
            />
          </>
        )}
      </Section>
    </>
  );
}
