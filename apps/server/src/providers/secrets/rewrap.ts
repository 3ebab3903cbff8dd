import type { Store } from '../../store/index.js';
import { rewrap, type Keyring } from './envelope.js';

// `keys:rewrap`: every connector account's data key wrapped again with the current master key
// (the first of MASTER_KEYS). The secrets themselves are not re-encrypted. One row per
// transaction, so a failure leaves each row either old or new, both readable while the old key
// is still listed.
export async function rewrapAll(store: Store, keyring: Keyring): Promise<{ rewrapped: number; current: number }> {
  const rows = await store.db.selectFrom('connector_accounts').select(['id', 'secrets', 'secrets_key_id']).orderBy('id').execute();
  let rewrapped = 0;
  for (const row of rows) {
    const next = rewrap(keyring, row.id, row.secrets);
    if (next === null) continue;
    await store.write((tx) => tx.updateTable('connector_accounts').set({ secrets: next, secrets_key_id: keyring.current.id }).where('id', '=', row.id).where('secrets', '=', row.secrets).execute());
    rewrapped++;
  }
  return { rewrapped, current: rows.length - rewrapped };
}
