import { useState } from 'react';
import { api } from '../api';
import { useI18n } from '../i18n';
import { priceLines, priceUnitText } from '../prices';
import { ErrorNote, Loading, Money, Section, TableScroll, When, useAction, useLoad } from '../ui';

interface Consumers {
  readonly head: string | null;
  readonly consumers: { name: string; position: string | null; behind: number; behind_capped: boolean; lag_seconds: number; active_here: boolean }[];
}
interface DroppedDelivery {
  readonly id: string;
  readonly task_id: string;
  readonly account_id: string;
  readonly callback_url: string;
  readonly requested_at: string;
  readonly attempts: { attempt: number; status_code: number | null; error: string | null }[];
}
interface CatalogModel {
  readonly id: string;
  readonly type: string;
  readonly channels: readonly { name: string; priority: number; weight: number }[];
  readonly pricing: Readonly<Record<string, unknown>>;
  readonly available: boolean;
}
interface AuditRun {
  readonly id: string;
  readonly status: 'running' | 'passed' | 'failed' | 'error' | 'abandoned';
  readonly started_at: string;
  readonly finished_at: string | null;
  readonly duration_ms: number | null;
  readonly report: { ok: boolean; eventsInLog: number; mismatches: string[]; invariantViolations: string[]; lagging: string[]; staleReservations: unknown[] } | null;
  readonly error: string | null;
}
interface Job {
  readonly kind: string;
  readonly key: string;
  readonly due_at: string;
  readonly attempts: number;
  readonly last_error: string | null;
}

/** A model's prices in yuan, each with its unit ("¥1.00 per 1M input tokens"). */
function CatalogPrices({ pricing }: { pricing: CatalogModel['pricing'] }) {
  const { t, locale } = useI18n();
  const lines = priceLines(pricing);
  if (lines.length === 0) return <span className="muted">{t('no price of its own')}</span>;
  return (
    <ul className="plain prices">
      {lines.map((line) => (
        <li key={`${line.member}/${line.variant ?? line.unit ?? ''}`}>
          <Money minor={line.minor} /> {priceUnitText(line, t, locale)}
        </li>
      ))}
    </ul>
  );
}

/** The gateway itself: projection and process-manager lag, failing jobs, the catalog. */
export function Operations() {
  const { t } = useI18n();
  const consumers = useLoad(() => api.get<Consumers>('/admin/v1/consumers'), []);
  const jobs = useLoad(() => api.get<{ data: Job[] }>('/admin/v1/jobs?failing=true'), []);
  const dropped = useLoad(() => api.get<{ data: DroppedDelivery[] }>('/admin/v1/webhooks/dropped?limit=50'), []);
  const models = useLoad(() => api.get<{ data: CatalogModel[] }>('/admin/v1/catalog'), []);
  // A running audit is watched until it finishes: its result replaces "Running since" by itself.
  const audit = useLoad(() => api.get<{ running: AuditRun | null; last: AuditRun | null }>('/admin/v1/audit'), [], { pollWhile: (a) => a.running !== null });
  const runAudit = useAction();
  const reload = useAction();
  const [catalog, setCatalog] = useState<{ models: number; unavailable: string[] } | null>(null);
  return (
    <>
      <h1>{t('Operations')}</h1>
      <Section title={t('Projection and process-manager lag')} actions={<button type="button" onClick={consumers.reload}>{t('Refresh')}</button>}>
        <ErrorNote error={consumers.error} />
        {!consumers.data ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="consumers-table">
              <caption className="visually-hidden">{t('Projection and process-manager lag')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Consumer')}</th>
                  <th scope="col" className="num">{t('Events behind')}</th>
                  <th scope="col" className="num">{t('Seconds behind')}</th>
                  <th scope="col">{t('Runs here')}</th>
                </tr>
              </thead>
              <tbody>
                {consumers.data.consumers.map((c) => (
                  <tr key={c.name}>
                    <td>{c.name}</td>
                    <td className="num">{c.behind}{c.behind_capped ? '+' : ''}</td>
                    <td className="num">{Math.round(c.lag_seconds * 10) / 10}</td>
                    <td>{c.active_here ? t('yes') : t('no')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
      <Section title={t('Failing jobs')} actions={<button type="button" onClick={jobs.reload}>{t('Refresh')}</button>}>
        <ErrorNote error={jobs.error} />
        {!jobs.data ? (
          <Loading />
        ) : jobs.data.data.length === 0 ? (
          <p className="muted">{t('No failing jobs.')}</p>
        ) : (
          <TableScroll>
            <table data-testid="jobs-table">
              <caption className="visually-hidden">{t('Failing jobs')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Kind')}</th>
                  <th scope="col">{t('Key')}</th>
                  <th scope="col">{t('Due')}</th>
                  <th scope="col" className="num">{t('Attempts')}</th>
                  <th scope="col">{t('Last error')}</th>
                </tr>
              </thead>
              <tbody>
                {jobs.data.data.map((j) => (
                  <tr key={`${j.kind}/${j.key}`}>
                    <td>{j.kind}</td>
                    <td className="mono">{j.key}</td>
                    <td>
                      <When iso={j.due_at} timeZone="UTC" />
                    </td>
                    <td className="num">{j.attempts}</td>
                    <td>{j.last_error}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
      <Section
        title={t('Audit')}
        actions={
          <button
            type="button"
            disabled={runAudit.busy || !!audit.data?.running}
            onClick={() => runAudit.run(() => api.post('/admin/v1/audit'))}
          >
            {t('Run the audit')}
          </button>
        }
      >
        <p>{t('The audit replays the whole log into a scratch copy of every read model, compares them with the live ones and checks the ledger invariants.')}</p>
        <ErrorNote error={audit.error ?? runAudit.error} />
        {audit.data?.running && (
          <p role="status">
            {t('Running since')} <When iso={audit.data.running.started_at} timeZone="UTC" />
          </p>
        )}
        {audit.data && !audit.data.last && !audit.data.running && <p className="muted">{t('No audit has run yet.')}</p>}
        {audit.data?.last && (
          <dl className="facts" data-testid="audit-last">
            <dt>{t('Last result')}</dt>
            <dd>{t(audit.data.last.status)}</dd>
            <dt>{t('Finished')}</dt>
            <dd>
              <When iso={audit.data.last.finished_at} timeZone="UTC" />
            </dd>
            {audit.data.last.report && (
              <>
                <dt>{t('Events in the log')}</dt>
                <dd>{audit.data.last.report.eventsInLog}</dd>
                <dt>{t('Read models differing from a replay')}</dt>
                <dd>{audit.data.last.report.mismatches.join(', ') || t('none')}</dd>
                <dt>{t('Ledger invariant violations')}</dt>
                <dd>{audit.data.last.report.invariantViolations.join('; ') || t('none')}</dd>
                <dt>{t('Stale reservations')}</dt>
                <dd>{audit.data.last.report.staleReservations.length}</dd>
              </>
            )}
            {audit.data.last.error && (
              <>
                <dt>{t('Error')}</dt>
                <dd>{audit.data.last.error}</dd>
              </>
            )}
          </dl>
        )}
      </Section>
      <Section title={t('Dropped webhooks')} actions={<button type="button" onClick={dropped.reload}>{t('Refresh')}</button>}>
        <ErrorNote error={dropped.error} />
        {!dropped.data ? (
          <Loading />
        ) : dropped.data.data.length === 0 ? (
          <p className="muted">{t('No dropped webhooks.')}</p>
        ) : (
          <TableScroll>
            <table data-testid="dropped-table">
              <caption className="visually-hidden">{t('Dropped webhooks')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Delivery')}</th>
                  <th scope="col">{t('Task')}</th>
                  <th scope="col">{t('Account id')}</th>
                  <th scope="col">{t('Callback')}</th>
                  <th scope="col">{t('Requested')}</th>
                  <th scope="col">{t('Last attempt')}</th>
                </tr>
              </thead>
              <tbody>
                {dropped.data.data.map((d) => {
                  const last = d.attempts[d.attempts.length - 1];
                  return (
                    <tr key={d.id}>
                      <td className="mono">{d.id}</td>
                      <td className="mono">{d.task_id}</td>
                      <td className="mono">{d.account_id}</td>
                      <td className="mono">{d.callback_url}</td>
                      <td>
                        <When iso={d.requested_at} timeZone="UTC" />
                      </td>
                      <td>{last ? `#${last.attempt} ${last.status_code ?? last.error ?? ''}` : '—'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
      <Section title={t('Catalog')}>
        <ErrorNote error={models.error} />
        {models.data && (
          <TableScroll>
            <table className="wide" data-testid="catalog-table">
              <caption className="visually-hidden">{t('Catalog')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Model')}</th>
                  <th scope="col">{t('Type')}</th>
                  <th scope="col">{t('Prices')}</th>
                  <th scope="col">{t('Channels')}</th>
                  <th scope="col">{t('Status')}</th>
                </tr>
              </thead>
              <tbody>
                {models.data.data.map((m) => (
                  <tr key={m.id} data-model={m.id}>
                    <td>{m.id}</td>
                    <td>{m.type}</td>
                    <td>
                      <CatalogPrices pricing={m.pricing} />
                    </td>
                    <td>
                      <ul className="plain">
                        {m.channels.map((c) => (
                          <li key={c.name}>
                            {c.name}
                            {m.channels.length > 1 && <span className="muted"> {t('priority {priority}, weight {weight}', { priority: c.priority, weight: c.weight })}</span>}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>{m.available ? t('available') : t('unavailable')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <p>{t('Reloading re-reads the catalog file with the start-up checks; an invalid file is refused and the current catalog stays.')}</p>
        <button
          type="button"
          disabled={reload.busy}
          onClick={() =>
            reload.run(async () => {
              setCatalog(await api.post<{ models: number; unavailable: string[] }>('/admin/v1/catalog/reload'));
            })
          }
        >
          {t('Reload the catalog')}
        </button>
        <ErrorNote error={reload.error} />
        {catalog && (
          <div role="status">
            <p>{t('{n} models in the catalog.', { n: catalog.models })}</p>
            {catalog.unavailable.length > 0 && (
              <p>
                {t('Unavailable (their channel is not configured)')}: {catalog.unavailable.join(', ')}
              </p>
            )}
          </div>
        )}
      </Section>
    </>
  );
}
