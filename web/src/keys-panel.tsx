import { useState, type FormEvent } from 'react';
import { api, type ListBody } from './api';
import { parseYuan } from './format';
import { useI18n } from './i18n';
import { ErrorNote, Field, Loading, Money, Section, When, useAction, useLoad } from './ui';

export interface KeyView {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly allowed_models: string[] | null;
  readonly budget: { amount: number; period: 'total' | 'day' | 'month'; spent: number; remaining: number } | null;
  readonly expires_at: string | null;
  readonly rate_limit_per_minute: number | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked: boolean;
}

/**
 * An account's keys: create (the secret shown once, with a copy button), revoke, spend against
 * budget, last use. `listPath`/`createPath` and `revokePath` are the owner's or the operator's routes.
 */
export function KeysPanel({ listPath, revokePath, currentKeyId }: { listPath: string; revokePath: (id: string) => string; currentKeyId?: string }) {
  const { t } = useI18n();
  const keys = useLoad(() => api.get<ListBody<KeyView>>(listPath), [listPath]);
  const [issued, setIssued] = useState<(KeyView & { key: string }) | null>(null);
  const [copied, setCopied] = useState(false);
  const [form, setForm] = useState({ name: '', models: '', budget: '', period: 'month', expires: '', rate: '' });
  const create = useAction();
  const revoke = useAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      const budget = form.budget.trim() === '' ? undefined : parseYuan(form.budget);
      if (budget === null) throw new Error(t('The budget is an amount in yuan, with at most six decimals.'));
      const body = {
        ...(form.name ? { name: form.name } : {}),
        ...(form.models.trim() ? { allowed_models: form.models.split(',').map((m) => m.trim()).filter(Boolean) } : {}),
        ...(budget !== undefined ? { budget: { amount: budget, period: form.period } } : {}),
        ...(form.expires ? { expires_at: new Date(form.expires).toISOString() } : {}),
        ...(form.rate ? { rate_limit_per_minute: Number(form.rate) } : {}),
      };
      setIssued(await api.post<KeyView & { key: string }>(listPath, body));
      setCopied(false);
      setForm({ name: '', models: '', budget: '', period: 'month', expires: '', rate: '' });
    });
  };
  const set = (name: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value });

  return (
    <>
      <Section title={t('Create a key')}>
        <form className="filters" onSubmit={submit} data-testid="create-key">
          <Field label={t('Name')}>
            <input value={form.name} onChange={set('name')} name="name" />
          </Field>
          <Field label={t('Allowed models (comma-separated; empty: all)')}>
            <input value={form.models} onChange={set('models')} name="allowed_models" />
          </Field>
          <Field label={t('Budget (yuan)')}>
            <input value={form.budget} onChange={set('budget')} inputMode="decimal" name="budget" />
          </Field>
          <Field label={t('Budget period')}>
            <select value={form.period} onChange={set('period')}>
              <option value="total">{t('total')}</option>
              <option value="day">{t('day')}</option>
              <option value="month">{t('month')}</option>
            </select>
          </Field>
          <Field label={t('Expires')}>
            <input type="datetime-local" value={form.expires} onChange={set('expires')} name="expires_at" />
          </Field>
          <Field label={t('Requests per minute')}>
            <input type="number" min={1} value={form.rate} onChange={set('rate')} name="rate_limit_per_minute" />
          </Field>
          <button type="submit" disabled={create.busy}>
            {t('Create key')}
          </button>
        </form>
        <ErrorNote error={create.error} />
        {issued && (
          <div className="notice" role="status">
            <p>{t('This is the only time the key is shown. Copy it now.')}</p>
            <code data-testid="new-key">{issued.key}</code>{' '}
            <button
              type="button"
              onClick={() => {
                void navigator.clipboard?.writeText(issued.key).then(() => setCopied(true), () => setCopied(false));
              }}
            >
              {copied ? t('Copied') : t('Copy')}
            </button>
          </div>
        )}
      </Section>
      <Section title={t('Keys')}>
        <ErrorNote error={keys.error ?? revoke.error} />
        {!keys.data ? (
          <Loading />
        ) : (
          <div className="table-wrap" tabIndex={0} role="region" aria-label={t('Scrollable table')}>
            <table data-testid="keys-table">
              <caption className="visually-hidden">{t('Keys')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Name')}</th>
                  <th scope="col">{t('Prefix')}</th>
                  <th scope="col">{t('Allowed models')}</th>
                  <th scope="col">{t('Spend / budget')}</th>
                  <th scope="col">{t('Expires')}</th>
                  <th scope="col">{t('Rate')}</th>
                  <th scope="col">{t('Last used')}</th>
                  <th scope="col">{t('Status')}</th>
                  <th scope="col">{t('Action')}</th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td>
                      {k.name ?? '—'}
                      {k.id === currentKeyId && <span className="badge">{t('this session')}</span>}
                    </td>
                    <td className="mono">{k.prefix}…</td>
                    <td>{k.allowed_models?.join(', ') ?? t('all')}</td>
                    <td>
                      {k.budget ? (
                        <>
                          <Money minor={k.budget.spent} /> / <Money minor={k.budget.amount} /> ({t(k.budget.period)})
                        </>
                      ) : (
                        t('no budget')
                      )}
                    </td>
                    <td>{k.expires_at ? <When iso={k.expires_at} /> : t('never')}</td>
                    <td>{k.rate_limit_per_minute ?? t('gateway default')}</td>
                    <td>{k.last_used_at ? <When iso={k.last_used_at} /> : t('never')}</td>
                    <td>{k.revoked ? t('revoked') : t('active')}</td>
                    <td>
                      {!k.revoked && (
                        <button
                          type="button"
                          className="danger"
                          disabled={revoke.busy}
                          onClick={() => {
                            if (!window.confirm(t('Revoke key {name}? Requests with it fail at once.', { name: k.name ?? k.prefix }))) return;
                            void revoke.run(() => api.delete(revokePath(k.id)));
                          }}
                        >
                          {t('Revoke')}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}
