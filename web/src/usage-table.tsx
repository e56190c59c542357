import type { ReactNode } from 'react';
import { useI18n } from './i18n';
import { Money, TableScroll } from './ui';
import { unitsText } from './units';

/** What GET /v1/usage and GET /admin/v1/usage give a group and the total. */
export interface UsageTotals {
  readonly requests: number;
  readonly charged: number;
  readonly refunded: number;
  readonly amount: number;
  readonly units?: Readonly<Record<string, number>>;
}

/**
 * A usage answer as a table: the group, requests, charged, refunded, amount and units per row, and
 * the total row. The owner's Usage page and the operator's Revenue page name their groups each
 * their own way (`group`); everything else is read the same.
 */
export function UsageTable<Row extends UsageTotals>({
  rows,
  total,
  caption,
  groupLabel,
  rowKey,
  group,
  testId,
  totalTestId,
  className,
  query,
}: {
  readonly rows: readonly Row[];
  readonly total: UsageTotals;
  readonly caption: string;
  readonly groupLabel: string;
  readonly rowKey: (row: Row) => string;
  readonly group: (row: Row) => ReactNode;
  readonly testId: string;
  readonly totalTestId?: string;
  readonly className?: string;
  /** The query the answer came from, kept on the table for a test to ask the API the same. */
  readonly query?: string;
}) {
  const { t, locale } = useI18n();
  return (
    <TableScroll>
      <table className={className} data-testid={testId} data-query={query}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{groupLabel}</th>
            <th scope="col" className="num">{t('Requests')}</th>
            <th scope="col" className="num">{t('Charged')}</th>
            <th scope="col" className="num">{t('Refunded')}</th>
            <th scope="col" className="num">{t('Amount')}</th>
            <th scope="col">{t('Units')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)} data-group={rowKey(r)}>
              <td>{group(r)}</td>
              <td className="num">{r.requests.toLocaleString(locale)}</td>
              <td className="num">
                <Money minor={r.charged} />
              </td>
              <td className="num">
                <Money minor={r.refunded} />
              </td>
              <td className="num">
                <Money minor={r.amount} />
              </td>
              <td>{unitsText(r.units ?? null, t, locale)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr data-testid={totalTestId}>
            <th scope="row">{t('Total')}</th>
            <td className="num">{total.requests.toLocaleString(locale)}</td>
            <td className="num">
              <Money minor={total.charged} />
            </td>
            <td className="num">
              <Money minor={total.refunded} />
            </td>
            <td className="num">
              <Money minor={total.amount} />
            </td>
            <td>{total.units ? unitsText(total.units, t, locale) : null}</td>
          </tr>
        </tfoot>
      </table>
    </TableScroll>
  );
}
