// Payouts against the platform's balance at the PSP (issue 26), as pure money logic.
//
// Before a run's payouts by Pix are sent, the platform's Pix balance at the PSP is read; what is
// already promised from it (payouts queued but not sent yet) comes off, and the run's payouts
// and the ones held by earlier runs share the rest, oldest first. A settlement is never passed by
// a younger one: the first that does not fit is held, and so is every one after it (a large old
// payout is not starved by a stream of small new ones). All amounts are integer centavos.

export interface PayoutCandidate {
  id: string;
  amount: number;
}

export interface Allocation {
  pay: string[];
  hold: string[];
  // The balance left once the paid ones are sent (never negative).
  left: number;
}

// `candidates` oldest first; `available` the balance less what is already promised (may be
// negative: then nothing fits).
export function allocateBalance(available: number, candidates: readonly PayoutCandidate[]): Allocation {
  if (!Number.isSafeInteger(available)) throw new RangeError('a balance is an integer number of centavos');
  const pay: string[] = [];
  const hold: string[] = [];
  let left = Math.max(available, 0);
  let blocked = false;
  for (const c of candidates) {
    if (!Number.isSafeInteger(c.amount) || c.amount <= 0) throw new RangeError(`settlement ${c.id}: a payout is a positive integer number of centavos`);
    if (!blocked && c.amount <= left) {
      pay.push(c.id);
      left -= c.amount;
    } else {
      blocked = true;
      hold.push(c.id);
    }
  }
  return { pay, hold, left };
}

export class PayoutExceedsSettlement extends Error {
  constructor(readonly settlementId: string, readonly payout: number, readonly held: number) {
    super(`settlement ${settlementId}: a payout of ${payout} centavos, but it holds ${held}`);
    this.name = 'PayoutExceedsSettlement';
  }
}

// A payout's amount is the settlement's, and the settlement's is the sum of its receivables:
// anything else is a bug, and no money leaves.
export function assertPayoutAmount(settlementId: string, payout: number, settlementAmount: number, receivablesSum: number): number {
  if (!Number.isSafeInteger(payout) || payout <= 0 || payout > settlementAmount || payout > receivablesSum || settlementAmount !== receivablesSum) {
    throw new PayoutExceedsSettlement(settlementId, payout, Math.min(settlementAmount, receivablesSum));
  }
  return payout;
}
