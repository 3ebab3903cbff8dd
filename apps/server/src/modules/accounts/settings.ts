import { DEFAULT_FEE_SCHEDULE, assertFeeSchedule, type FeeSchedule, type PaymentMethod } from '../../domain/fees.js';

// Per-account money settings, kept as JSON on the account row and changed through the admin
// API. Defaults: Pix 0.99%, card 3.99% + R$ 0,39; Pix available D+0, card D+30 (calendar days).
export interface AccountSettings {
  fees: FeeSchedule;
  settlementDelayDays: Record<PaymentMethod, number>;
}

export const DEFAULT_SETTLEMENT_DELAY_DAYS: Readonly<Record<PaymentMethod, number>> = Object.freeze({ pix: 0, credit_card: 30 });
export const MAX_SETTLEMENT_DELAY_DAYS = 365;

export function parseSettings(json: string | null | undefined): AccountSettings {
  const raw = (json ? JSON.parse(json) : {}) as Partial<AccountSettings>;
  const settings: AccountSettings = {
    fees: {
      pix: { ...DEFAULT_FEE_SCHEDULE.pix, ...(raw.fees?.pix ?? {}) },
      credit_card: { ...DEFAULT_FEE_SCHEDULE.credit_card, ...(raw.fees?.credit_card ?? {}) },
    },
    settlementDelayDays: { ...DEFAULT_SETTLEMENT_DELAY_DAYS, ...(raw.settlementDelayDays ?? {}) },
  };
  assertFeeSchedule(settings.fees);
  return settings;
}

// Brazil has had no daylight saving since 2019: São Paulo is UTC-3 all year, so a fixed offset
// gives the local calendar date that D+0 / D+30 and settlement dates are counted in.
const SAO_PAULO_OFFSET_MS = -3 * 3600_000;

// São Paulo's calendar date at `ms` (today: `localDate(clock.nowMs())`, from the Clock).
export function localDate(ms: number): string {
  return new Date(ms + SAO_PAULO_OFFSET_MS).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
