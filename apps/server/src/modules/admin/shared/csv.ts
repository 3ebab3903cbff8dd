import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

// CSV exports of what a back-office list shows, streamed: rows are read a page at a time (by id,
// newest first) and written as they come, so an export of a million rows never sits in memory.
// Amounts are integer centavos, and the same in reais as an exact decimal (integer arithmetic,
// never a float): "123456" and "1234.56".

export const CSV_PAGE_ROWS = 1000;

export function reais(cents: number | null): string {
  if (cents === null) return '';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

// RFC 4180 quoting; a cell a spreadsheet would run as a formula (= + - @ at the start) is
// prefixed with an apostrophe (OWASP's CSV injection advice). Numbers are written as numbers.
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(cells: Array<string | number | boolean | null>): string {
  return cells.map(csvCell).join(',') + '\r\n';
}

// Pages through `page(afterId)` (rows with id below afterId, newest first, at most CSV_PAGE_ROWS)
// and streams the header and a line per row.
export function sendCsv<Row extends { id: string }>(reply: FastifyReply, filename: string, header: string[], page: (beforeId: string | undefined) => Promise<Row[]>, line: (row: Row) => Array<string | number | boolean | null>): FastifyReply {
  async function* lines() {
    yield csvLine(header);
    let before: string | undefined;
    for (;;) {
      const rows = await page(before);
      if (rows.length === 0) return;
      yield rows.map((r) => csvLine(line(r))).join('');
      if (rows.length < CSV_PAGE_ROWS) return;
      before = rows[rows.length - 1].id;
    }
  }
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  reply.header('cache-control', 'no-store');
  return reply.send(Readable.from(lines()));
}
