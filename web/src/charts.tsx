import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { yuanText } from './format';

/** Colours with at least 3:1 contrast on white, for the bars. */
const COLOURS = ['#1f5fa8', '#b4480c', '#2e7d32', '#7b1fa2', '#a61b4a', '#00695c', '#5d4037', '#455a64'];

export interface StackedRow {
  readonly label: string;
  readonly [series: string]: string | number;
}

/**
 * Amounts (integer minor units) per label, stacked by series; axis and tooltip show yuan. The
 * chart is a picture of the table the page shows next to it, so it is hidden from screen readers.
 * `seriesLabels` names a series in the legend and tooltip when its key is not a name for people.
 */
export function StackedBars({ rows, series, title, seriesLabels = {} }: { rows: readonly StackedRow[]; series: readonly string[]; title: string; seriesLabels?: Readonly<Record<string, string>> }) {
  return (
    <figure className="chart" aria-hidden="true" title={title}>
      <ResponsiveContainer width="100%" height={280}>
        <BarChart data={rows as StackedRow[]} margin={{ top: 8, right: 16, bottom: 8, left: 16 }} accessibilityLayer={false}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="label" />
          <YAxis tickFormatter={(v: number) => yuanText(Math.round(v))} width={110} />
          <Tooltip formatter={(v) => yuanText(Math.round(Number(v)))} />
          <Legend />
          {series.map((name, i) => (
            <Bar key={name} dataKey={name} name={seriesLabels[name] ?? name} stackId="amount" fill={COLOURS[i % COLOURS.length]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
