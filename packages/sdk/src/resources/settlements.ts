import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { DailyStatement, DailyStatementParams, Receivable, Settlement, SettlementListParams, SettlementReceivableListParams } from '../types.js';

export class Settlements extends APIResource {
  retrieve(id: string, options?: RequestOptions): APIPromise<Settlement> {
    return this.client.request({ method: 'GET', path: `/v1/settlements/${segment(id)}` }, options);
  }

  list(params: SettlementListParams = {}, options?: RequestOptions): PagePromise<Settlement, SettlementListParams> {
    return this.client.list('/v1/settlements', params, options);
  }

  /**
   * What one payee was paid on one São Paulo calendar date: the settlements paid that day (by
   * when the PSP settled them), with their Pix end-to-end ids, and the total in centavos.
   * `recipientId` absent: the merchant's own; `date` absent: today in São Paulo.
   */
  dailyStatement(params: DailyStatementParams = {}, options?: RequestOptions): APIPromise<DailyStatement> {
    return this.client.request({ method: 'GET', path: '/v1/settlements/daily-statement', query: params }, options);
  }

  /** The receivables a settlement paid out. */
  listReceivables(id: string, params: SettlementReceivableListParams = {}, options?: RequestOptions): PagePromise<Receivable, SettlementReceivableListParams> {
    return this.client.list(`/v1/settlements/${segment(id)}/receivables`, params, options);
  }
}
