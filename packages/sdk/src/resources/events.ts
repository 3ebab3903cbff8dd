import { APIResource, segment, type APIPromise, type RequestOptions } from '../core.js';
import type { PagePromise } from '../pagination.js';
import type { Event, EventListParams, EventRedeliverParams, EventRedeliverResult } from '../types.js';

export class Events extends APIResource {
  retrieve(id: string, options?: RequestOptions): APIPromise<Event> {
    return this.client.request({ method: 'GET', path: `/v1/events/${segment(id)}` }, options);
  }

  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<Event, EventListParams> {
    return this.client.list('/v1/events', params, options);
  }

  /** Delivers the event again: to `endpointId`, or to every enabled endpoint whose filter matches. */
  redeliver(id: string, params: EventRedeliverParams = {}, options?: RequestOptions): APIPromise<EventRedeliverResult> {
    return this.client.request({ method: 'POST', path: `/v1/events/${segment(id)}/redeliver`, body: params }, options);
  }
}
