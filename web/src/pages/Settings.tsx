import { useState } from 'react';
import { api } from '../api';
import { useAccount, type AccountView } from '../account-context';
import { useI18n } from '../i18n';
import { ErrorNote, Field, Loading, Section, useAction, useLoad } from '../ui';

const RECEIVER = `// Node 20: verify the gateway's webhook, then answer 2xx within 10 seconds.
const http = require('node:http');
const crypto = require('node:crypto');
const SECRET = process.env.WEBHOOK_SECRET; // whsec_...

http.createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', () => {
    const timestamp = req.headers['x-service-timestamp'];
    const given = String(req.headers['x-service-signature'] || '');
    const expected = 'sha256=' + crypto.createHmac('sha256', SECRET).update(timestamp + '.' + raw).digest('hex');
    const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
    const valid = given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    if (!valid || !fresh) return res.writeHead(401).end();
    const event = JSON.parse(raw); // task_id is the idempotency key: it may arrive more than once
    console.log(event.task_id, event.status);
    res.writeHead(204).end();
  });
}).listen(8000);`;

export function Settings() {
  const { t } = useI18n();
  const account = useAccount()!;
  const secret = useLoad(() => api.get<{ secret: string | null }>('/v1/account/webhook-secret'), []);
  const [revealed, setRevealed] = useState(false);
  const rotate = useAction();
  const save = useAction();
  const [mode, setMode] = useState(account.settings.default_video_url_mode);
  const [zone, setZone] = useState(account.settings.timezone);
  const [saved, setSaved] = useState<AccountView | null>(null);
  const value = secret.data?.secret ?? null;

  return (
    <>
      <h1>{t('Webhooks & settings')}</h1>
      <Section title={t('Webhook secret')}>
        <ErrorNote error={secret.error ?? rotate.error} />
        {!secret.data ? (
          <Loading />
        ) : (
          <>
            <p>
              <code data-testid="webhook-secret">{value === null ? t('none yet: rotate to create one') : revealed ? value : `whsec_${'•'.repeat(12)}`}</code>
            </p>
            <div className="row">
              {value !== null && (
                <button type="button" onClick={() => setRevealed(!revealed)} aria-pressed={revealed}>
                  {revealed ? t('Hide') : t('Reveal')}
                </button>
              )}
              <button
                type="button"
                className="danger"
                disabled={rotate.busy}
                onClick={() => {
                  if (!window.confirm(t('Rotate the webhook secret? Deliveries from now on are signed with the new one.'))) return;
                  void rotate.run(async () => {
                    await api.post('/v1/account/webhook-secret');
                    setRevealed(true);
                  });
                }}
              >
                {t('Rotate')}
              </button>
            </div>
          </>
        )}
        <h3>{t('How deliveries are signed')}</h3>
        <p>
          {t('Each delivery is a POST with X-Service-Timestamp (Unix seconds) and X-Service-Signature: sha256= followed by the hex HMAC-SHA256, keyed by this secret, of the timestamp, a dot, and the raw body. Compare in constant time, and refuse timestamps more than 5 minutes away.')}
        </p>
        <pre className="code" tabIndex={0} aria-label={t('Sample receiver')}>
          {RECEIVER}
        </pre>
      </Section>
      <Section title={t('Account settings')}>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(async () => {
              setSaved(await api.patch<AccountView>('/v1/account/settings', { default_video_url_mode: mode, timezone: zone }));
            });
          }}
        >
          <Field label={t('Default video_url_mode')}>
            <select value={mode} onChange={(e) => setMode(e.target.value as typeof mode)}>
              <option value="auto">auto</option>
              <option value="upstream">upstream</option>
              <option value="tos">tos</option>
            </select>
          </Field>
          <Field label={t('Time zone (IANA)')}>
            <input value={zone} onChange={(e) => setZone(e.target.value)} required />
          </Field>
          <button type="submit" disabled={save.busy}>
            {t('Save')}
          </button>
        </form>
        <ErrorNote error={save.error} />
        {saved && <p role="status">{t('Saved: every page now shows dates in this time zone.')}</p>}
      </Section>
    </>
  );
}
