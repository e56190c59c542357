import { useState, type FormEvent } from 'react';
import { api, type ListBody } from './api';
import { dateTimeInputIn, instantOfWallClock, parseYuan, yuanInput } from './format';
import { useI18n } from './i18n';
import { keyLabel } from './key-names';
import type { Translate } from './units';
import { ErrorNote, Field, Loading, Money, Section, TableScroll, When, useAction, useLoad, useZone } from './ui';

export interface KeyView {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly allowed_models: string[] | null;
  readonly budget: { amount: number; period: 'total' | 'day' | 'month'; spent: number; remaining: number } | null;
  readonly expires_at: string | null;
  readonly rate_limit_per_minute: number | null;
  readonly tokens_per_minute: number | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked: boolean;
}

/** A key's settings as its form holds them: text, empty for "none". */
export interface SettingsForm {
  readonly name: string;
  readonly models: string;
  readonly budget: string;
  readonly period: string;
  readonly expires: string;
  readonly rate: string;
  readonly tokens: string;
}

const EMPTY_FORM: SettingsForm = { name: '', models: '', budget: '', period: 'month', expires: '', rate: '', tokens: '' };

/** A key's settings in its form; the expiry as a wall clock of the account's zone. */
function formOf(key: KeyView, timeZone: string): SettingsForm {
  return {
    name: key.name ?? '',
    models: key.allowed_models?.join(', ') ?? '',
    budget: key.budget ? yuanInput(key.budget.amount) : '',
    period: key.budget?.period ?? 'month',
    expires: key.expires_at ? dateTimeInputIn(key.expires_at, timeZone) : '',
    rate: key.rate_limit_per_minute === null ? '' : String(key.rate_limit_per_minute),
    tokens: key.tokens_per_minute === null ? '' : String(key.tokens_per_minute),
  };
}

/**
 * The request body of a form: a new key leaves out what is empty (the API gives it the acting
 * key's limit), a change (`before`: the form as the key filled it) sends it as null (no limit of its
 * own); the API decides what the signed-in key may grant, and its refusal is shown as it is. The
 * expiry is read on a wall clock of the account's zone, and a change sends it only when it was
 * edited: the form holds it to the minute, so sending it back would move it earlier.
 */
export function settingsBody(form: SettingsForm, before: SettingsForm | null, timeZone: string, t: Translate): Record<string, unknown> {
  const budget = form.budget.trim() === '' ? null : parseYuan(form.budget);
  if (budget === null && form.budget.trim() !== '') throw new Error(t('The budget is an amount in yuan, with at most six decimals.'));
  const expires = form.expires === '' ? null : instantOfWallClock(form.expires, timeZone);
  if (expires === null && form.expires !== '') throw new Error(t('The expiry is a date and time.'));
  const models = form.models.split(',').map((m) => m.trim()).filter(Boolean);
  const fields: Record<string, unknown> = {
    name: form.name.trim() === '' ? null : form.name.trim(),
    allowed_models: models.length === 0 ? null : models,
    budget: budget === null ? null : { amount: budget, period: form.period },
    rate_limit_per_minute: form.rate ? Number(form.rate) : null,
    tokens_per_minute: form.tokens ? Number(form.tokens) : null,
  };
  if (!before) return Object.fromEntries(Object.entries({ ...fields, expires_at: expires?.toISOString() ?? null }).filter(([, value]) => value !== null));
  return form.expires === before.expires ? fields : { ...fields, expires_at: expires?.toISOString() ?? null };
}

/** The fields of a key's settings, for a new key and for a change alike. */
function SettingsFields({ form, onChange }: { form: SettingsForm; onChange: (form: SettingsForm) => void }) {
  const { t } = useI18n();
  const zone = useZone();
  const set = (name: keyof SettingsForm) => (e: { target: { value: string } }) => onChange({ ...form, [name]: e.target.value });
  return (
    <>
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
        <select value={form.period} onChange={set('period')} name="period">
          <option value="total">{t('total')}</option>
          <option value="day">{t('day')}</option>
          <option value="month">{t('month')}</option>
        </select>
      </Field>
      <Field label={t('Expires ({zone})', { zone })}>
        <input type="datetime-local" value={form.expires} onChange={set('expires')} name="expires_at" />
      </Field>
      <Field label={t('Requests per minute')}>
        <input type="number" min={1} value={form.rate} onChange={set('rate')} name="rate_limit_per_minute" />
      </Field>
      <Field label={t('Tokens per minute')}>
        <input type="number" min={1} value={form.tokens} onChange={set('tokens')} name="tokens_per_minute" />
      </Field>
    </>
  );
}

/** A secret the API showed once (a new key, a regenerated one), with a copy button. */
function SecretNotice({ secret, testId }: { secret: string; testId: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  return (
    <div className="notice" role="status">
      <p>{t('This is the only time the key is shown. Copy it now.')}</p>
      <code data-testid={testId}>{secret}</code>{' '}
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false));
        }}
      >
        {copied ? t('Copied') : t('Copy')}
      </button>
    </div>
  );
}

/**
 * An account's keys: create (the secret shown once, with a copy button), change a key's settings,
 * regenerate its secret (the new one shown once), revoke; spend against budget, last use.
 * `listPath` lists and creates; `keyPath` is a key's own path (PATCH changes it, DELETE revokes
 * it); `regeneratePath` gives it a new secret: the owner's or the operator's routes. The key the
 * session was opened with (`currentKeyId`) is marked, and not regenerated from this session (its
 * new secret would end the session before it could be shown).
 */
export function KeysPanel({
  listPath,
  keyPath,
  regeneratePath,
  currentKeyId,
}: {
  listPath: string;
  keyPath: (id: string) => string;
  regeneratePath: (id: string) => string;
  currentKeyId?: string | null;
}) {
  const { t } = useI18n();
  const zone = useZone();
  const keys = useLoad(() => api.get<ListBody<KeyView>>(listPath), [listPath]);
  const [issued, setIssued] = useState<(KeyView & { key: string }) | null>(null);
  const [regenerated, setRegenerated] = useState<(KeyView & { key: string }) | null>(null);
  const [form, setForm] = useState<SettingsForm>(EMPTY_FORM);
  const [editing, setEditing] = useState<{ id: string; before: SettingsForm; form: SettingsForm } | null>(null);
  const create = useAction();
  const revoke = useAction();
  const change = useAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      setIssued(await api.post<KeyView & { key: string }>(listPath, settingsBody(form, null, zone, t)));
      setForm(EMPTY_FORM);
    });
  };
  const saveChange = (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    void change.run(async () => {
      await api.patch<KeyView>(keyPath(editing.id), settingsBody(editing.form, editing.before, zone, t));
      setEditing(null);
    });
  };

  return (
    <>
      <Section title={t('Create a key')}>
        <form className="filters" onSubmit={submit} data-testid="create-key">
          <SettingsFields form={form} onChange={setForm} />
          <button type="submit" disabled={create.busy}>
            {t('Create key')}
          </button>
        </form>
        <ErrorNote error={create.error} />
        {issued && <SecretNotice key={issued.key} secret={issued.key} testId="new-key" />}
      </Section>
      <Section title={t('Keys')}>
        <ErrorNote error={keys.error ?? revoke.error} />
        {regenerated && (
          <>
            <p>{t('Key {name} has a new secret; the old one no longer works.', { name: keyLabel(regenerated, t) })}</p>
            <SecretNotice key={regenerated.key} secret={regenerated.key} testId="regenerated-key" />
          </>
        )}
        {editing && (
          <form className="filters" onSubmit={saveChange} data-testid="edit-key" aria-label={t('Change key')}>
            <SettingsFields form={editing.form} onChange={(next) => setEditing({ ...editing, form: next })} />
            <button type="submit" disabled={change.busy}>
              {t('Save changes')}
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              {t('Cancel')}
            </button>
          </form>
        )}
        <ErrorNote error={change.error} />
        {!keys.data ? (
          <Loading />
        ) : (
          <TableScroll>
            <table data-testid="keys-table">
              <caption className="visually-hidden">{t('Keys')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('Name')}</th>
                  <th scope="col">{t('Prefix')}</th>
                  <th scope="col">{t('Allowed models')}</th>
                  <th scope="col">{t('Spend / budget')}</th>
                  <th scope="col">{t('Expires ({zone})', { zone })}</th>
                  <th scope="col">{t('Rate')}</th>
                  <th scope="col">{t('Tokens per minute')}</th>
                  <th scope="col">{t('Last used')}</th>
                  <th scope="col">{t('Status')}</th>
                  <th scope="col">{t('Action')}</th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td>
                      {keyLabel(k, t)}
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
                    <td>{k.tokens_per_minute ?? t('no limit')}</td>
                    <td>{k.last_used_at ? <When iso={k.last_used_at} /> : t('never')}</td>
                    <td>{k.revoked ? t('revoked') : t('active')}</td>
                    <td>
                      {!k.revoked && (
                        <div className="row">
                          <button type="button" onClick={() => setEditing({ id: k.id, before: formOf(k, zone), form: formOf(k, zone) })} aria-label={t('Edit key {name}', { name: keyLabel(k, t) })}>
                            {t('Edit')}
                          </button>
                          {k.id !== currentKeyId && (
                            <button
                              type="button"
                              disabled={change.busy}
                              aria-label={t('Regenerate key {name}', { name: keyLabel(k, t) })}
                              onClick={() => {
                                if (!window.confirm(t('Regenerate the secret of key {name}? The old secret stops working at once.', { name: keyLabel(k, t) }))) return;
                                void change.run(async () => setRegenerated(await api.post<KeyView & { key: string }>(regeneratePath(k.id))));
                              }}
                            >
                              {t('Regenerate')}
                            </button>
                          )}
                          <button
                            type="button"
                            className="danger"
                            disabled={revoke.busy}
                            onClick={() => {
                              if (!window.confirm(t('Revoke key {name}? Requests with it fail at once.', { name: keyLabel(k, t) }))) return;
                              void revoke.run(() => api.delete(keyPath(k.id)));
                            }}
                          >
                            {t('Revoke')}
                          </button>
                        </div>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Section>
    </>
  );
}
