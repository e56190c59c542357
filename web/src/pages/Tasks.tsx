import { useState } from 'react';
import { api, type ListBody } from '../api';
import { yuanText } from '../format';
import { useI18n } from '../i18n';
import { ErrorNote, Field, Loading, LoadMore, Money, Section, TableScroll, When, ZoneNote, useAction, useLoad, usePagedList } from '../ui';

const KINDS = ['video', 'minutes', 'summary', 'image', 'podcast', 'erase', 'asset', 'asset_session'];

interface Attempt {
  readonly attempt: number;
  readonly at: string;
  readonly ok: boolean;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly signature?: string | null;
}
interface Delivery {
  readonly id: string;
  readonly reason: string;
  readonly status: string;
  readonly requested_at: string;
  readonly attempts: Attempt[];
}
interface Task {
  readonly id: string;
  readonly kind: string;
  readonly model: string | null;
  readonly status: string;
  readonly created_at: string;
  readonly finished_at: string | null;
  readonly billing: { reserved: number; status: string; amount: number | null; refunded: number };
  readonly error: { code?: string; message?: string } | null;
  readonly detail: (Record<string, unknown> & { webhook?: { url: string; signed: boolean; deliveries: Delivery[] } | null }) | null;
}

/** Result links a task's own rendering carries (video_url, audio_url, result.data[].url …). */
function links(detail: Task['detail']): string[] {
  const found: string[] = [];
  const visit = (value: unknown, key: string) => {
    if (typeof value === 'string' && /url$/i.test(key) && /^https?:\/\//.test(value)) found.push(value);
    else if (Array.isArray(value)) value.forEach((v) => visit(v, key));
    else if (value && typeof value === 'object' && key !== 'webhook') for (const [k, v] of Object.entries(value)) visit(v, k);
  };
  visit(detail, '');
  return [...new Set(found)];
}

function seconds(from: string, to: string | null): string {
  return to ? `${Math.round((Date.parse(to) - Date.parse(from)) / 100) / 10} s` : '—';
}

function unsettled(task: Task): boolean {
  return task.status === 'queued' || task.status === 'running' || task.billing.status === 'reserved';
}

/** Tasks a page asks for. */
const PAGE = 20;

export function Tasks() {
  const { t } = useI18n();
  const [kind, setKind] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  // Watched while a task shown, on any page loaded, is unfinished or its charge still open: its status and cost change by themselves.
  const tasks = usePagedList<Task>(`/v1/tasks${kind ? `?kind=${kind}` : ''}`, PAGE, { pollWhile: (shown) => shown.some(unsettled) });
  const redeliver = useAction();
  return (
    <>
      <h1>{t('Tasks')}</h1>
      <ZoneNote />
      <Section title={t('Asynchronous tasks')}>
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <Field label={t('Kind')}>
            <select value={kind} onChange={(e) => setKind(e.target.value)}>
              <option value="">{t('All')}</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {t(k)}
                </option>
              ))}
            </select>
          </Field>
          <button type="button" onClick={tasks.reload}>
            {t('Refresh')}
          </button>
        </form>
        <ErrorNote error={tasks.error ?? redeliver.error} />
        {!tasks.items ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="tasks-table" className="cards">
              <caption className="visually-hidden">{t('Asynchronous tasks')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Task')}</th>
                  <th scope="col">{t('Kind')}</th>
                  <th scope="col">{t('Model')}</th>
                  <th scope="col">{t('Status')}</th>
                  <th scope="col">{t('Created')}</th>
                  <th scope="col">{t('Took')}</th>
                  <th scope="col" className="num">{t('Cost')}</th>
                  <th scope="col">{t('Results')}</th>
                  <th scope="col">{t('Webhook')}</th>
                </tr>
              </thead>
              <tbody>
                {tasks.items.length === 0 && (
                  <tr>
                    <td colSpan={9} className="muted">{t('No tasks yet.')}</td>
                  </tr>
                )}
                {tasks.items.map((task) => (
                  <TaskRow key={task.id} task={task} open={open === task.id} onToggle={() => setOpen(open === task.id ? null : task.id)} onRedeliver={() =>
                    redeliver.run(() => api.post(`/v1/videos/generations/${encodeURIComponent(task.id)}/webhook/redeliver`))
                  } />
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <LoadMore more={tasks.more} />
      </Section>
    </>
  );
}

/** A task's cost: what was charged (or reserved, before billing), and what of it was refunded. */
function Cost({ billing }: { billing: Task['billing'] }) {
  const { t } = useI18n();
  if (billing.amount === null) {
    return (
      <>
        <Money minor={billing.reserved} />
        <span className="muted"> ({t('reserved')})</span>
      </>
    );
  }
  if (billing.refunded > 0 && billing.refunded >= billing.amount) {
    return (
      <>
        <s>
          <Money minor={billing.amount} />
        </s>{' '}
        <span className="badge">{t('refunded')}</span>
      </>
    );
  }
  return (
    <>
      <Money minor={billing.amount} />
      {billing.refunded > 0 && (
        <span className="muted">
          {' '}
          ({t('{amount} refunded', { amount: yuanText(billing.refunded) })})
        </span>
      )}
    </>
  );
}

function TaskRow({ task, open, onToggle, onRedeliver }: { task: Task; open: boolean; onToggle: () => void; onRedeliver: () => Promise<void> }) {
  const { t } = useI18n();
  const webhook = task.detail?.webhook ?? null;
  return (
    <>
      <tr data-task-id={task.id}>
        <td className="mono" data-label={t('Task')}>{task.id}</td>
        <td data-label={t('Kind')}>{t(task.kind)}</td>
        <td data-label={t('Model')}>{task.model ?? '—'}</td>
        <td data-label={t('Status')}>
          {t(task.status)}
          {task.status === 'failed' && task.error && (
            <p className="failure" data-testid="task-failure">
              {task.error.code && <code>{task.error.code}</code>} {task.error.message}
            </p>
          )}
        </td>
        <td data-label={t('Created')}>
          <When iso={task.created_at} />
        </td>
        <td data-label={t('Took')}>{seconds(task.created_at, task.finished_at)}</td>
        <td className="num" data-label={t('Cost')} data-testid="task-cost">
          <Cost billing={task.billing} />
        </td>
        <td data-label={t('Results')}>
          {links(task.detail).length > 0 && (
            <ul className="results">
              {links(task.detail).map((url, i) => (
                <li key={url}>
                  <a href={url} target="_blank" rel="noreferrer">
                    {t('Result {n}', { n: i + 1 })}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </td>
        <td data-label={t('Webhook')}>
          {webhook && (
            <button type="button" onClick={onToggle} aria-expanded={open}>
              {t('Deliveries ({n})', { n: webhook.deliveries.length })}
            </button>
          )}
        </td>
      </tr>
      {open && webhook && <Deliveries taskId={task.id} callback={webhook.url} signed={webhook.signed} onRedeliver={onRedeliver} />}
    </>
  );
}

/** A video's webhook deliveries, newest first, from GET /v1/videos/generations/{id}/webhook/deliveries. */
function Deliveries({ taskId, callback, signed, onRedeliver }: { taskId: string; callback: string; signed: boolean; onRedeliver: () => Promise<void> }) {
  const { t } = useI18n();
  const deliveries = useLoad(() => api.get<ListBody<Delivery>>(`/v1/videos/generations/${encodeURIComponent(taskId)}/webhook/deliveries`), [taskId]);
  return (
    <tr>
      <td colSpan={9}>
        <p>
          {t('Callback')}: <code>{callback}</code> · {signed ? t('signed') : t('unsigned')}{' '}
          <button type="button" onClick={() => void onRedeliver()}>
            {t('Redeliver')}
          </button>
        </p>
        <ErrorNote error={deliveries.error} />
        {deliveries.data && (
          <table data-testid="deliveries">
            <caption className="visually-hidden">{t('Webhook deliveries')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('Delivery')}</th>
                <th scope="col">{t('Reason')}</th>
                <th scope="col">{t('Status')}</th>
                <th scope="col">{t('Attempts')}</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((d) => (
                <tr key={d.id}>
                  <td className="mono">{d.id}</td>
                  <td>{t(d.reason)}</td>
                  <td>{t(d.status)}</td>
                  <td>
                    {d.attempts.map((a) => (
                      <div key={a.attempt}>
                        #{a.attempt} <When iso={a.at} /> {a.ok ? '✓' : '✗'} {a.status_code ?? a.error ?? ''} ({a.duration_ms} ms)
                        {a.signature && <code className="signature"> {a.signature}</code>}
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </td>
    </tr>
  );
}
