import { APIPromise, type RequestOptions, type ResponseMeta } from './core.js';

export interface ListParams {
  limit?: number;
  startingAfter?: string;
  endingBefore?: string;
}

interface ListBody<T> {
  data: T[];
  hasMore: boolean;
}

type FetchPage<T, P> = (params: P, options?: RequestOptions) => Promise<{ data: ListBody<T>; response: ResponseMeta }>;

/** The most `autoPagingToArray` collects: past it, iterate with `for await` instead. */
export const MAX_AUTO_PAGING_ITEMS = 10_000;

/**
 * One page of a list (newest first): `data`, `hasMore`, `nextPage()`. Also an async iterable
 * over every item from this page on, fetching the next pages as it goes.
 */
export class Page<T extends { id: string }, P extends ListParams = ListParams> implements AsyncIterable<T> {
  readonly object = 'list' as const;
  readonly data: T[];
  readonly hasMore: boolean;

  constructor(
    private readonly fetchPage: FetchPage<T, P>,
    private readonly params: P,
    private readonly options: RequestOptions | undefined,
    body: ListBody<T>,
  ) {
    this.data = body.data;
    this.hasMore = body.hasMore;
  }

  hasNextPage(): boolean {
    return this.hasMore && this.data.length > 0;
  }

  // The next page in the direction of travel: older (startingAfter the last item) by default,
  // newer (endingBefore the first item) when the list was started with endingBefore.
  nextPage(): Promise<Page<T, P>> {
    if (!this.hasNextPage()) throw new RangeError('No next page: check hasNextPage() first.');
    const backwards = this.params.endingBefore !== undefined && this.params.startingAfter === undefined;
    const params: P = backwards
      ? { ...this.params, endingBefore: this.data[0].id }
      : { ...this.params, startingAfter: this.data[this.data.length - 1].id, endingBefore: undefined };
    return this.fetchPage(params, this.options).then(({ data }) => new Page(this.fetchPage, params, this.options, data));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    // The walk starts at this page and moves on: `page` is a cursor, not a second `this`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let page: Page<T, P> = this;
    for (;;) {
      yield* page.data;
      if (!page.hasNextPage()) return;
      page = await page.nextPage();
    }
  }

  /** Every item from this page on, up to `limit` (at most 10 000). */
  autoPagingToArray(options: { limit: number }): Promise<T[]> {
    return collect(this, options.limit);
  }
}

async function collect<T>(items: AsyncIterable<T>, limit: number): Promise<T[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUTO_PAGING_ITEMS) {
    throw new RangeError(`autoPagingToArray needs a limit from 1 to ${MAX_AUTO_PAGING_ITEMS}; iterate with for await to go further.`);
  }
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * What `list()` returns: await it for the first page, or iterate it with `for await` for every
 * item across all pages.
 */
export class PagePromise<T extends { id: string }, P extends ListParams = ListParams> extends APIPromise<Page<T, P>> implements AsyncIterable<T> {
  constructor(fetchPage: FetchPage<T, P>, params: P, options: RequestOptions | undefined) {
    super(fetchPage(params, options).then(({ data, response }) => ({ data: new Page(fetchPage, params, options, data), response })));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* await this;
  }

  /** Every item across pages, up to `limit` (at most 10 000). */
  autoPagingToArray(options: { limit: number }): Promise<T[]> {
    return collect(this, options.limit);
  }
}
