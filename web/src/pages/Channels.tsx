import { useState, type FormEvent } from 'react';
import { api, type ListBody } from '../api';
import { useI18n } from '../i18n';
import { ErrorNote, Field, Loading, LoadMore, Section, TableScroll, When, useAction, useLoad, usePagedList } from '../ui';

/** Times on this page are the gateway's instants, shown in UTC and named so. */
const ZONE = 'UTC';

interface ChannelHealth {
  readonly state: 'closed' | 'cooling_down' | 'open' | 'half_open' | 'disabled';
  readonly until: string | null;
  readonly reason: string | null;
  readonly consecutive_failures: number;
  readonly last_latency_ms?: number;
}
interface RecentCalls {
  readonly window_seconds: number;
  readonly calls: number;
  readonly errors: number;
  readonly client_errors: number;
  readonly error_rate: number | null;
  readonly latency_ms: { mean: number; max: number } | null;
}
interface Channel {
  readonly id: string;
  readonly protocol: string;
  readonly base_url: string;
  readonly auth_kind: string;
  readonly credentials_rotated_at: string | null;
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly health: ChannelHealth;
  readonly recent_calls: RecentCalls;
}
interface CatalogModel {
  readonly id: string;
  readonly channels: readonly { name: string }[];
}
interface TestResult {
  readonly outcome: string;
  readonly status: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
}
interface HistoryEntry {
  readonly revision: number;
  readonly type: string;
  readonly actor: string;
  readonly at: string;
  readonly changes: Readonly<Record<string, unknown>>;
}

const STATE_LABELS: Record<ChannelHealth['state'], string> = {
  closed: 'Healthy (circuit closed)',
  cooling_down: 'Cooling down (rate limited)',
  open: 'Circuit open',
  half_open: 'Circuit half-open (the next call probes it)',
  disabled: 'Disabled',
};

const OUTCOME_LABELS: Record<string, string> = {
  ok: 'OK',
  credentials_refused: 'Credentials refused',
  answered_with_error: 'Reachable, answered with an error',
  provider_error: 'Provider error',
  timeout: 'Timed out',
  unreachable: 'Unreachable',
};

const EVENT_LABELS: Record<string, string> = {
  ChannelCreated: 'Channel created',
  ChannelChanged: 'Settings changed',
  ChannelCredentialsRotated: 'Credentials rotated',
  ChannelCredentialsReEncrypted: 'Credentials sealed again',
  ChannelEnabled: 'Enabled',
  ChannelDisabled: 'Disabled',
  ChannelDeleted: 'Deleted',
};

/** The CHANNELS field that carries each authentication kind's credentials. */
const CREDENTIAL_FIELD: Record<string, 'api_key' | 'headers' | 'volcengine' | 'alibaba'> = {
  none: 'api_key',
  bearer: 'api_key',
  headers: 'headers',
  volcengine: 'volcengine',
  acs3: 'alibaba',
};

function percent(rate: number | null, locale: string): string {
  return rate === null ? '—' : rate.toLocaleString(locale, { style: 'percent', maximumFractionDigits: 2 });
}

function Health({ health }: { health: ChannelHealth }) {
  const { t } = useI18n();
  return (
    <div data-testid="channel-health" data-state={health.state}>
      <strong>{t(STATE_LABELS[health.state])}</strong>
      {health.until && (
        <div>
          {t('until')} <When iso={health.until} timeZone={ZONE} /> {ZONE}
        </div>
      )}
      {health.reason && health.state !== 'closed' && <div className="muted">{health.reason}</div>}
      {health.consecutive_failures > 0 && <div className="muted">{t('{n} consecutive failures', { n: health.consecutive_failures })}</div>}
    </div>
  );
}

/** The channels of the routing (GET/POST/PATCH/DELETE /admin/v1/channels): health, recent calls, and the operator's actions. */
export function Channels() {
  const { t, locale } = useI18n();
  const channels = useLoad(() => api.get<ListBody<Channel>>('/admin/v1/channels?limit=100'), []);
  const catalog = useLoad(() => api.get<{ data: CatalogModel[] }>('/admin/v1/catalog'), []);
  const [selected, setSelected] = useState<string | null>(null);
  const modelsOf = (name: string) => (catalog.data?.data ?? []).filter((m) => m.channels.some((c) => c.name === name)).map((m) => m.id);
  const current = channels.data?.data.find((c) => c.id === selected) ?? null;
  const windowSeconds = channels.data?.data[0]?.recent_calls.window_seconds;
  return (
    <>
      <h1>{t('Channels')}</h1>
      <Section title={t('All channels')} actions={<button type="button" onClick={channels.reload}>{t('Refresh')}</button>}>
        <p className="muted">
          {t('Health, latency and error rates are what the gateway process answering this page has seen of its own calls')}
          {windowSeconds ? ` (${t('the last {minutes} minutes', { minutes: windowSeconds / 60 })})` : ''}. {t('Errors: timeouts, network failures and 5xx answers; 4xx answers are counted apart.')}
        </p>
        <ErrorNote error={channels.error ?? catalog.error} />
        {!channels.data ? (
          <Loading />
        ) : channels.data.data.length === 0 ? (
          <p className="muted">{t('No channels are recorded: the gateway serves from CHANNELS or the simulator, which this page does not manage.')}</p>
        ) : (
          <TableScroll>
            <table className="wide" data-testid="channels-table">
              <caption className="visually-hidden">{t('All channels')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Channel')}</th>
                  <th scope="col">{t('Protocol')}</th>
                  <th scope="col">{t('Health')}</th>
                  <th scope="col" className="num">{t('Number of calls')}</th>
                  <th scope="col" className="num">{t('Error rate')}</th>
                  <th scope="col" className="num">{t('Latency (mean / max)')}</th>
                  <th scope="col">{t('Models')}</th>
                </tr>
              </thead>
              <tbody>
                {channels.data.data.map((c) => (
                  <tr key={c.id} data-channel={c.id}>
                    <td>
                      <button type="button" className="link" aria-pressed={selected === c.id} onClick={() => setSelected(c.id)}>
                        {c.id}
                      </button>
                    </td>
                    <td>{c.protocol}</td>
                    <td>
                      <Health health={c.health} />
                    </td>
                    <td className="num">
                      {c.recent_calls.calls.toLocaleString(locale)}
                      {c.recent_calls.client_errors > 0 && <div className="muted">{t('{n} answered 4xx', { n: c.recent_calls.client_errors })}</div>}
                    </td>
                    <td className="num">{percent(c.recent_calls.error_rate, locale)}</td>
                    <td className="num">{c.recent_calls.latency_ms ? `${c.recent_calls.latency_ms.mean} / ${c.recent_calls.latency_ms.max} ms` : '—'}</td>
                    <td>{modelsOf(c.id).join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
      {current && <ChannelPanel key={current.id} channel={current} models={modelsOf(current.id)} onChanged={channels.reload} onDeleted={() => (setSelected(null), channels.reload())} />}
    </>
  );
}

function ChannelPanel({ channel, models, onChanged, onDeleted }: { channel: Channel; models: string[]; onChanged: () => void; onDeleted: () => void }) {
  const { t } = useI18n();
  const name = encodeURIComponent(channel.id);
  // The channel's events, oldest first, 100 a page.
  const history = usePagedList<HistoryEntry>(`/admin/v1/channels/${name}/events`, 100);
  const test = useAction();
  const [result, setResult] = useState<TestResult | null>(null);
  const toggle = useAction();
  const [reason, setReason] = useState('');
  const remove = useAction();
  const [confirming, setConfirming] = useState(false);
  const changed = () => {
    onChanged();
    history.reload();
  };
  const disable = (event: FormEvent) => {
    event.preventDefault();
    void toggle.run(async () => {
      await api.patch(`/admin/v1/channels/${name}`, reason.trim() ? { enabled: false, reason: reason.trim() } : { enabled: false });
      setReason('');
      changed();
    });
  };
  return (
    <Section title={t('Channel {name}', { name: channel.id })}>
      <dl className="facts" data-testid="channel-facts">
        <dt>{t('Protocol')}</dt>
        <dd>{channel.protocol}</dd>
        <dt>{t('Base URL')}</dt>
        <dd className="mono wrap">{channel.base_url}</dd>
        <dt>{t('Health')}</dt>
        <dd>
          <Health health={channel.health} />
        </dd>
        <dt>{t('Last latency')}</dt>
        <dd>{channel.health.last_latency_ms === undefined ? '—' : `${channel.health.last_latency_ms} ms`}</dd>
        <dt>{t('Enabled by the operator')}</dt>
        <dd>{channel.enabled ? t('yes') : `${t('no')}: ${channel.disabled_reason ?? ''}`}</dd>
        <dt>{t('Authentication')}</dt>
        <dd>{channel.auth_kind}</dd>
        <dt>{t('Credentials last set')}</dt>
        <dd>{channel.credentials_rotated_at ? <><When iso={channel.credentials_rotated_at} timeZone={ZONE} /> {ZONE}</> : '—'}</dd>
        <dt>{t('Models')}</dt>
        <dd>{models.join(', ') || '—'}</dd>
      </dl>

      <h3>{t('Test')}</h3>
      <p className="muted">{t('One small call through the channel as recorded now (a disabled channel too); no client money moves.')}</p>
      <button type="button" disabled={test.busy} onClick={() => test.run(async () => setResult(await api.post<TestResult>(`/admin/v1/channels/${name}/test`)))}>
        {t('Test the channel')}
      </button>
      <ErrorNote error={test.error} />
      {result && (
        <p role="status" data-testid="channel-test" data-outcome={result.outcome}>
          {t('Outcome')}: <strong>{t(OUTCOME_LABELS[result.outcome] ?? result.outcome)}</strong>
          {result.status !== null && ` · HTTP ${result.status}`} · {t('{ms} ms', { ms: result.latency_ms })}
          {result.error && ` · ${result.error}`}
        </p>
      )}

      <h3>{t('Enable or disable')}</h3>
      {channel.enabled && (
        <form className="filters" onSubmit={disable} data-testid="disable-channel">
          <Field label={t('Reason (recorded in the history)')}>
            <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
          </Field>
          <button type="submit" className="danger" disabled={toggle.busy}>
            {t('Disable')}
          </button>
        </form>
      )}
      {(!channel.enabled || channel.health.state === 'disabled') && (
        <button
          type="button"
          disabled={toggle.busy}
          onClick={() =>
            toggle.run(async () => {
              await api.patch(`/admin/v1/channels/${name}`, { enabled: true });
              changed();
            })
          }
        >
          {t('Enable')}
        </button>
      )}
      <ErrorNote error={toggle.error} />

      <RotateCredentials channel={channel} onRotated={changed} />

      <h3>{t('Delete')}</h3>
      <p className="muted">{t('Refused while a catalog model names the channel or an unfinished task lives on it; its history stays.')}</p>
      {confirming ? (
        <div className="row">
          <button
            type="button"
            className="danger"
            disabled={remove.busy}
            onClick={() =>
              remove.run(async () => {
                setConfirming(false);
                await api.delete(`/admin/v1/channels/${name}`);
                onDeleted();
              })
            }
          >
            {t('Delete channel {name} for good', { name: channel.id })}
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            {t('Cancel')}
          </button>
        </div>
      ) : (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          {t('Delete the channel')}
        </button>
      )}
      <ErrorNote error={remove.error} />

      <h3>{t('History')}</h3>
      <ErrorNote error={history.error} />
      <TableScroll>
        <table className="wide" data-testid="channel-history">
          <caption className="visually-hidden">{t('History')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('Time ({zone})', { zone: ZONE })}</th>
              <th scope="col">{t('Event')}</th>
              <th scope="col">{t('Actor')}</th>
              <th scope="col">{t('Changes')}</th>
            </tr>
          </thead>
          <tbody>
            {(history.items ?? []).map((e) => (
              <tr key={e.revision} data-type={e.type}>
                <td>
                  <When iso={e.at} timeZone={ZONE} />
                </td>
                <td>{t(EVENT_LABELS[e.type] ?? e.type)}</td>
                <td>{e.actor}</td>
                <td className="mono wrap">
                  {Object.entries(e.changes)
                    .map(([field, value]) => `${field}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
                    .join('; ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <LoadMore more={history.more} />
    </Section>
  );
}

/**
 * New credentials for the channel, sent once and forgotten: the form never holds or shows the
 * current ones (no answer of the API carries them). An API key for bearer channels; the JSON of
 * CHANNELS' field for the others.
 */
function RotateCredentials({ channel, onRotated }: { channel: Channel; onRotated: () => void }) {
  const { t } = useI18n();
  const field = CREDENTIAL_FIELD[channel.auth_kind] ?? 'api_key';
  const [value, setValue] = useState('');
  const [done, setDone] = useState(false);
  const rotate = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    void rotate.run(async () => {
      let credential: unknown = value;
      if (field !== 'api_key') {
        try {
          credential = JSON.parse(value);
        } catch {
          throw new Error(t('The credentials must be a JSON object, as in CHANNELS.'));
        }
      }
      await api.patch(`/admin/v1/channels/${encodeURIComponent(channel.id)}`, { [field]: credential });
      setValue('');
      setDone(true);
      onRotated();
    });
  };
  return (
    <>
      <h3>{t('Rotate the credentials')}</h3>
      <p className="muted">{t('Every gateway process uses the new credentials from its next call; the current ones are never shown. Test the channel afterwards.')}</p>
      <form className="stack" onSubmit={submit} data-testid="rotate-credentials" autoComplete="off">
        {field === 'api_key' ? (
          <Field label={t('New API key')}>
            <input type="password" autoComplete="new-password" value={value} onChange={(e) => setValue(e.target.value)} required maxLength={8192} />
          </Field>
        ) : (
          <Field label={t('New credentials (the JSON of CHANNELS’ {field})', { field })}>
            <textarea className="mono" rows={4} value={value} onChange={(e) => setValue(e.target.value)} required spellCheck={false} />
          </Field>
        )}
        <button type="submit" disabled={rotate.busy || value === ''}>
          {t('Rotate')}
        </button>
      </form>
      <ErrorNote error={rotate.error} />
      {done && <p role="status">{t('Credentials rotated.')}</p>}
    </>
  );
}
