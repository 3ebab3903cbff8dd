// Lists: a page from await, every item across pages from for await, a capped collector.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_AUTO_PAGING_ITEMS, Pagamentos } from '../src/index.js';
import { ENGINES, merchant, recordingFetch, startServer, type Call, type Running } from './harness.js';

const COUNT = 250;

for (const engine of ENGINES) {
  describe(`pagination across ${COUNT} objects (${engine})`, () => {
    let server: Running;
    let client: Pagamentos;
    let calls: Call[];
    let ids: string[]; // newest first, as the API lists them

    before(async () => {
      server = await startServer(engine);
      const recorded = recordingFetch();
      calls = recorded.calls;
      ({ client } = await merchant(server.baseUrl, { fetch: recorded.fetch }));
      const created: string[] = [];
      for (let i = 0; i < COUNT; i += 25) {
        const batch = await Promise.all(Array.from({ length: Math.min(25, COUNT - i) }, (_, j) => client.payments.create({ amountInCents: 100 + i + j, method: 'pix' })));
        created.push(...batch.map((p) => p.id));
      }
      // A few card payments the `method: 'pix'` filter must keep out of every page.
      await Promise.all([1, 2, 3].map(() => client.payments.create({ amountInCents: 5000, method: 'credit_card', cardToken: 'tok_visa' })));
      ids = [...created].sort().reverse();
    });
    after(() => server.close());

    const gets = (from: number) => calls.slice(from).filter((c) => c.method === 'GET');

    test('await list() is a page; nextPage() walks on with the filters kept', async () => {
      const from = calls.length;
      const first = await client.payments.list({ method: 'pix', limit: 100 });
      assert.equal(first.object, 'list');
      assert.equal(first.data.length, 100);
      assert.equal(first.hasMore, true);
      const second = await first.nextPage();
      const third = await second.nextPage();
      assert.deepEqual([...first.data, ...second.data, ...third.data].map((p) => p.id), ids);
      assert.equal(third.hasMore, false);
      assert.equal(third.hasNextPage(), false);
      assert.throws(() => third.nextPage(), RangeError);
      const urls = gets(from).map((c) => new URL(c.url));
      assert.equal(urls.length, 3);
      for (const u of urls) assert.equal(u.searchParams.get('method'), 'pix');
      assert.equal(urls[1].searchParams.get('startingAfter'), first.data[99].id);
    });

    test('for await iterates every item across pages, fetching each page once', async () => {
      const from = calls.length;
      const seen: string[] = [];
      for await (const p of client.payments.list({ method: 'pix', limit: 100 })) seen.push(p.id);
      assert.deepEqual(seen, ids);
      assert.equal(gets(from).length, 3);
      // A page is iterable too, from itself on.
      const page = await client.payments.list({ method: 'pix', limit: 60 });
      const fromPage: string[] = [];
      for await (const p of page) fromPage.push(p.id);
      assert.deepEqual(fromPage, ids);
    });

    test('breaking out of for await fetches no further page', async () => {
      const from = calls.length;
      let n = 0;
      for await (const _ of client.payments.list({ method: 'pix', limit: 50 })) if (++n === 60) break;
      assert.equal(gets(from).length, 2);
    });

    test('endingBefore walks toward newer objects', async () => {
      const cursor = ids[200];
      const seen: string[] = [];
      for await (const p of client.payments.list({ method: 'pix', endingBefore: cursor, limit: 30 })) seen.push(p.id);
      assert.equal(seen.length, 200);
      assert.deepEqual([...seen].sort().reverse(), ids.slice(0, 200));
    });

    test('autoPagingToArray collects up to its limit, capped at 10 000', async () => {
      const from = calls.length;
      const some = await client.payments.list({ method: 'pix', limit: 100 }).autoPagingToArray({ limit: 120 });
      assert.deepEqual(some.map((p) => p.id), ids.slice(0, 120));
      assert.equal(gets(from).length, 2);
      const all = await client.payments.list({ method: 'pix', limit: 100 }).autoPagingToArray({ limit: MAX_AUTO_PAGING_ITEMS });
      assert.equal(all.length, COUNT);
      assert.equal(MAX_AUTO_PAGING_ITEMS, 10_000);
      for (const limit of [0, -1, 1.5, 10_001]) {
        await assert.rejects(client.payments.list().autoPagingToArray({ limit }), RangeError, String(limit));
      }
    });

    test('withResponse on a list gives the first page and its answer', async () => {
      const { data, response } = await client.payments.list({ limit: 5 }).withResponse();
      assert.equal(data.data.length, 5);
      assert.equal(response.status, 200);
      assert.match(response.correlationId!, /^req_/);
    });
  });
}
