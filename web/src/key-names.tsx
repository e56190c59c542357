import { api, type ListBody } from './api';
import { IdDisclosure } from './id-disclosure';
import { useI18n } from './i18n';
import type { KeyView } from './keys-panel';
import type { Translate } from './ledger-lines';
import { useLoad } from './ui';

/** An account's keys by id, revoked ones included (the keys API lists them all), to name the keys the ledger and usage give by id. */
export type KeyDirectory = ReadonlyMap<string, KeyView>;

export function useKeyDirectory(listPath: string): KeyDirectory {
  const keys = useLoad(() => api.get<ListBody<KeyView>>(listPath), [listPath]);
  return keyDirectory(keys.data?.data ?? []);
}

/** The keys a page loaded (all of the account's), by id. */
export function keyDirectory(keys: readonly KeyView[]): KeyDirectory {
  return new Map(keys.map((k) => [k.id, k]));
}

/**
 * A key as people know it, on every page that names one: its name, or for an unnamed key its
 * prefix ("Unnamed key · tr-AbC…"), or just "Unnamed key" where the prefix is not given (the request log).
 */
export function keyLabel(key: { readonly name: string | null; readonly prefix: string | null }, t: Translate): string {
  if (key.name !== null) return key.name;
  return key.prefix === null ? t('Unnamed key') : t('Unnamed key · {prefix}…', { prefix: key.prefix });
}

/**
 * Who made an entry: a key by its name (revoked keys keep theirs), with its id one click away; the
 * operator; or, for charges recorded before the actor was kept, "unknown".
 */
export function KeyName({ keyId, actor, keys }: { keyId: string | null; actor?: string | null; keys: KeyDirectory }) {
  const { t } = useI18n();
  if (!keyId) {
    if (actor === 'admin') return <span>{t('operator')}</span>;
    if (actor === 'unknown') return <span className="muted">{t('unknown')}</span>;
    return <span>—</span>;
  }
  const key = keys.get(keyId);
  if (!key) return <IdDisclosure value={keyId} what={t('key')} />;
  const label = keyLabel(key, t);
  return (
    <span className="key-name" data-key-id={keyId}>
      <span className="key-label">{label}</span>
      {key.revoked && <span className="badge">{t('revoked')}</span>} <IdDisclosure value={keyId} what={label} short />
    </span>
  );
}
