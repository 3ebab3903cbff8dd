// Test support for DisputesTest.php (plain JavaScript; tsx loads the server's TypeScript): a
// sandbox has no acquirer to charge a payment back, so this applies a chargeback's stage to a payment through the server's own dispute service (what the
// card sync does with Adyen's notifications), in the test server's SQLite database. Run from the
// repository root: node --import tsx sdks/php/tests/Support/dispute-stage.mjs <db file> <payment id> <dispute ref> <rank> <status>
import { Store } from '../../../../apps/server/src/store/index.js';
import { applyDisputeStage } from '../../../../apps/server/src/modules/disputes/service.js';

async function main() {
  const [file, paymentId, ref, rank, status] = process.argv.slice(2);
  const store = Store.open({ url: `sqlite:${file}` });
  try {
    const changed = await store.write((tx) => applyDisputeStage(tx, store.engine, paymentId, {
      sourceRef: ref, connectorAccountId: 'cna_php_test', rank: Number(rank), status, amountCents: null,
      reason: 'Fraudulent', reasonCode: '10.4', respondBy: '2026-12-19T10:00:00.000Z',
    }, Date.now()));
    console.log(changed ? 'applied' : 'unchanged');
  } finally {
    await store.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
