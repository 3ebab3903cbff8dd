import { useState } from 'preact/hooks';
import { ApiFailure, call, client, mutationHeaders, type Schemas } from '../api/client';
import { ConfirmDialog } from '../components';
import { useApp } from '../context';
import type { MessageKey } from '../i18n';

// The merchant's payout bank account on the account page: where its own share of sales is paid.
// Everyone who may see the account sees it; setting it redirects money, so it takes the
// accounts:set_payout_bank_account permission (admins) and a reason, kept in the audit log. The
// server validates it as a recipient's bank account; its refusal is shown on the field it names.

type BankAccount = Schemas['BankAccount'];
type Field = keyof BankAccount;
const ACCOUNT_TYPES: BankAccount['accountType'][] = ['checking', 'savings', 'payment'];
const EMPTY: BankAccount = { bankCode: '', agency: '', account: '', accountType: 'checking' };

export function PayoutBankAccount({ account, onChanged }: { account: Schemas['AdminAccount']; onChanged: () => void }) {
  const { t, can } = useApp();
  const [editing, setEditing] = useState(false);
  const [done, setDone] = useState(false);
  const current = account.payoutBankAccount;
  return (
    <section aria-labelledby="payout-title">
      <h2 id="payout-title">{t('account.payout')}</h2>
      {current ? (
        <dl class="summary" data-payout-bank-account={`${current.bankCode}/${current.agency}/${current.account}/${current.accountType}`}>
          <div><dt>{t('bank.code')}</dt><dd><code>{current.bankCode}</code></dd></div>
          <div><dt>{t('bank.agency')}</dt><dd><code>{current.agency}</code></dd></div>
          <div><dt>{t('bank.account')}</dt><dd><code>{current.account}</code></dd></div>
          <div><dt>{t('bank.accountType')}</dt><dd>{t(`bank.type.${current.accountType}` as MessageKey)}</dd></div>
        </dl>
      ) : <p>{t('account.payout.none')}</p>}
      <p class="hint">{t('account.payout.help')}</p>
      {done ? <p role="status" class="notice">{t('account.payout.done')}</p> : null}
      {can('accounts:set_payout_bank_account') ? (
        <button type="button" onClick={() => setEditing(true)}>{current ? t('account.payout.change') : t('account.payout.set')}</button>
      ) : null}
      {editing ? (
        <PayoutDialog
          account={account}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setDone(true);
            onChanged();
          }}
        />
      ) : null}
    </section>
  );
}

function PayoutDialog({ account, onClose, onSaved }: { account: Schemas['AdminAccount']; onClose: () => void; onSaved: () => void }) {
  const { t } = useApp();
  const [bank, setBank] = useState<BankAccount>(account.payoutBankAccount ?? EMPTY);
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const set = (field: Field, value: string) => {
    setBank((b) => ({ ...b, [field]: value }));
    setErrors((e) => ({ ...e, [field]: undefined }));
  };
  const input = (field: Exclude<Field, 'accountType'>, label: MessageKey, help: MessageKey | null, attrs: { maxLength: number; inputMode?: 'numeric' }) => {
    const id = `payout-${field}`;
    const described = errors[field] ? `${id}-error` : help ? `${id}-help` : undefined;
    return (
      <div class="field">
        <label for={id}>{t(label)}</label>
        <input
          id={id}
          name={field}
          required
          aria-required="true"
          autoComplete="off"
          aria-invalid={errors[field] ? 'true' : 'false'}
          aria-describedby={described}
          value={bank[field]}
          onInput={(e) => set(field, (e.target as HTMLInputElement).value)}
          {...attrs}
        />
        {errors[field] ? <p id={`${id}-error`} class="field-error">{errors[field]}</p> : help ? <p id={`${id}-help`} class="hint">{t(help)}</p> : null}
      </div>
    );
  };
  return (
    <ConfirmDialog
      title={`${account.payoutBankAccount ? t('account.payout.change') : t('account.payout.set')}: ${account.name}`}
      message={t('account.payout.confirm')}
      confirmLabel={t('common.save')}
      reason="required"
      onClose={onClose}
      onConfirm={async (reason, key) => {
        const bankAccount = { ...bank, bankCode: bank.bankCode.trim(), agency: bank.agency.trim(), account: bank.account.trim() };
        try {
          await call(client.PATCH('/admin/accounts/{id}/payout-bank-account', { params: { path: { id: account.id }, header: mutationHeaders(key) }, body: { bankAccount, reason: reason ?? '' } }));
        } catch (err) {
          // `bankAccount.account` and the like: shown on that field, the dialog stays open.
          const field = err instanceof ApiFailure ? /^bankAccount\.(\w+)$/.exec(err.body.param ?? '')?.[1] : undefined;
          if (err instanceof ApiFailure && field && field in EMPTY) {
            setErrors({ [field as Field]: err.body.message });
            return 'stay';
          }
          throw err;
        }
        onSaved();
      }}
    >
      <div class="bank-fields">
        {input('bankCode', 'bank.code', 'bank.codeHelp', { maxLength: 3, inputMode: 'numeric' })}
        {input('agency', 'bank.agency', null, { maxLength: 7 })}
        {input('account', 'bank.account', 'bank.accountHelp', { maxLength: 22 })}
        <div class="field">
          <label for="payout-accountType">{t('bank.accountType')}</label>
          <select id="payout-accountType" name="accountType" value={bank.accountType} onChange={(e) => set('accountType', (e.target as HTMLSelectElement).value)}>
            {ACCOUNT_TYPES.map((type) => <option key={type} value={type}>{t(`bank.type.${type}` as MessageKey)}</option>)}
          </select>
        </div>
      </div>
    </ConfirmDialog>
  );
}
