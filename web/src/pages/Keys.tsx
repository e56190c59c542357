import { sessionKeyId } from '../api';
import { useI18n } from '../i18n';
import { KeysPanel } from '../keys-panel';

export function Keys() {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('Keys')}</h1>
      <p className="muted">{t('A new key can do at most what the key you signed in with can do; omitted limits are inherited from it.')}</p>
      <p className="muted">{t('A change cannot make a key wider than the key you signed in with. To regenerate the secret of that key, sign in with another one.')}</p>
      <KeysPanel
        listPath="/v1/account/keys"
        keyPath={(id) => `/v1/account/keys/${encodeURIComponent(id)}`}
        regeneratePath={(id) => `/v1/account/keys/${encodeURIComponent(id)}/regenerate`}
        currentKeyId={sessionKeyId()}
      />
    </>
  );
}
