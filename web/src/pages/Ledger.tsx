import { useAccount } from '../account-context';
import { monthIn } from '../format';
import { useI18n } from '../i18n';
import { LedgerTable, Statements } from '../ledger-table';

export function Ledger() {
  const { t } = useI18n();
  const account = useAccount()!;
  return (
    <>
      <h1>{t('Ledger')}</h1>
      <LedgerTable base="/v1/account/ledger" keysPath="/v1/account/keys" csvName={`ledger-${account.id}.csv`} />
      <Statements base="/v1/account/statements" csvPrefix={`statement-${account.id}`} defaultMonth={monthIn(new Date(), account.settings.timezone)} />
    </>
  );
}
