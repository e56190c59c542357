import { useState } from 'react';
import { api } from '../api';
import { AccountContext, type AccountView } from '../account-context';
import { monthIn, parseYuan, yuanInput } from '../format';
import { useI18n } from '../i18n';
import { KeysPanel } from '../keys-panel';
import { LedgerTable, Statements, type LedgerEntry } from '../ledger-table';
import { Link } from '../router';
import { ErrorNote, Field, Loading, Money, Section, useAction, useLoad } from '../ui';

/** One account as the operator sees it: balances, credits, refunds, ledger, statements, keys; dates in the account's zone. */
export function AccountDetail({ accountId }: { accountId: string }) {
  const { t } = useI18n();
  const base = `/admin/v1/accounts/${encodeURIComponent(accountId)}`;
  const account = useLoad(() => api.get<AccountView>(base), [base]);
  const [credit, setCredit] = useState({ amount: '', reference: '', note: '' });
  const [refund, setRefund] = useState({ reservation_id: '', amount: '', reference: '', reason: '' });
  const creditAction = useAction();
  const refundAction = useAction();
  const [done, setDone] = useState<string | null>(null);

  if (account.error) return <ErrorNote error={account.error} />;
  if (!account.data) return <Loading />;
  const a = account.data;
  const startRefund = (entry: LedgerEntry) =>
    setRefund({ reservation_id: entry.reservation_id ?? '', amount: yuanInput(entry.amount), reference: `refund-${entry.reservation_id}`, reason: '' });

  return (
    <AccountContext.Provider value={a}>
      <p>
        <Link to="/accounts">← {t('Accounts')}</Link>
      </p>
      <h1>{a.name}</h1>
      <div className="tiles">
        <div className="tile">
          <span className="tile-label">{t('Available')}</span>
          <strong data-testid="available">
            <Money minor={a.balance.available} />
          </strong>
        </div>
        <div className="tile">
          <span className="tile-label">{t('Frozen')}</span>
          <strong>
            <Money minor={a.balance.frozen} />
          </strong>
        </div>
        <div className="tile">
          <span className="tile-label">{t('Account id')}</span>
          <strong className="mono">{a.id}</strong>
        </div>
      </div>
      <div className="two">
        <Section title={t('Add credit')}>
          <form
            className="stack"
            data-testid="credit-form"
            onSubmit={(e) => {
              e.preventDefault();
              void creditAction.run(async () => {
                const amount = parseYuan(credit.amount);
                if (amount === null || amount <= 0) throw new Error(t('The amount is in yuan, with at most six decimals.'));
                await api.post(`${base}/credits`, { amount, reference: credit.reference, ...(credit.note ? { note: credit.note } : {}) });
                setDone(t('Credited.'));
                setCredit({ amount: '', reference: '', note: '' });
              });
            }}
          >
            <Field label={t('Amount (yuan)')}>
              <input value={credit.amount} onChange={(e) => setCredit({ ...credit, amount: e.target.value })} required inputMode="decimal" name="amount" />
            </Field>
            <Field label={t('Reference (idempotency: the same one credits once)')}>
              <input value={credit.reference} onChange={(e) => setCredit({ ...credit, reference: e.target.value })} required name="reference" />
            </Field>
            <Field label={t('Note')}>
              <input value={credit.note} onChange={(e) => setCredit({ ...credit, note: e.target.value })} name="note" />
            </Field>
            <button type="submit" disabled={creditAction.busy}>
              {t('Credit')}
            </button>
          </form>
          <ErrorNote error={creditAction.error} />
        </Section>
        <Section title={t('Refund a charge')}>
          <form
            className="stack"
            data-testid="refund-form"
            onSubmit={(e) => {
              e.preventDefault();
              void refundAction.run(async () => {
                const amount = parseYuan(refund.amount);
                if (amount === null || amount <= 0) throw new Error(t('The amount is in yuan, with at most six decimals.'));
                await api.post(`${base}/refunds`, { reservation_id: refund.reservation_id, amount, reference: refund.reference, reason: refund.reason });
                setDone(t('Refunded.'));
                setRefund({ reservation_id: '', amount: '', reference: '', reason: '' });
              });
            }}
          >
            <Field label={t('Reservation id')}>
              <input value={refund.reservation_id} onChange={(e) => setRefund({ ...refund, reservation_id: e.target.value })} required name="reservation_id" />
            </Field>
            <Field label={t('Amount (yuan)')}>
              <input value={refund.amount} onChange={(e) => setRefund({ ...refund, amount: e.target.value })} required inputMode="decimal" name="amount" />
            </Field>
            <Field label={t('Reference')}>
              <input value={refund.reference} onChange={(e) => setRefund({ ...refund, reference: e.target.value })} required name="reference" />
            </Field>
            <Field label={t('Reason')}>
              <input value={refund.reason} onChange={(e) => setRefund({ ...refund, reason: e.target.value })} required name="reason" />
            </Field>
            <button type="submit" disabled={refundAction.busy}>
              {t('Refund')}
            </button>
          </form>
          <ErrorNote error={refundAction.error} />
        </Section>
      </div>
      {done && <p role="status">{done}</p>}
      <LedgerTable base={`${base}/ledger`} keysPath={`${base}/keys`} csvName={`ledger-${a.id}.csv`} onRefund={startRefund} />
      <Statements base={`${base}/statements`} csvPrefix={`statement-${a.id}`} defaultMonth={monthIn(new Date(), a.settings.timezone)} />
      <KeysPanel
        listPath={`${base}/keys`}
        keyPath={(id) => `/admin/v1/keys/${encodeURIComponent(id)}`}
        regeneratePath={(id) => `${base}/keys/${encodeURIComponent(id)}/regenerate`}
      />
    </AccountContext.Provider>
  );
}
