// Refreshes src/domain/str-participants.ts (bank code -> ISPB, name) from a file:
//
//   npm run -s banks:refresh -- ParticipantesSTR.csv --date 2026-11-28 \
//     [--url https://www.bcb.gov.br/content/estabilidadefinanceira/str1/ParticipantesSTR.csv] [--out path]
//
// The file is the Banco Central's list of STR participants (the URL above, published daily), or
// BancosBrasileiros' data/bancos.csv, which is built from it. Nothing is downloaded: fetch the
// file yourself, look at the diff, commit it.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { participantsFromCsv, participantsModule } from '../src/domain/banks.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const [value] = args.splice(i, 2).slice(1);
  return value;
};
const date = opt('date');
const url = opt('url') ?? 'https://www.bcb.gov.br/content/estabilidadefinanceira/str1/ParticipantesSTR.csv';
const out = opt('out') ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'domain', 'str-participants.ts');
const [file] = args;
if (!file || !date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
  process.stderr.write('usage: refresh-str-participants <file.csv> --date YYYY-MM-DD [--url URL] [--out PATH]\n');
  process.exit(2);
}
try {
  const list = participantsFromCsv(readFileSync(file, 'utf8'));
  writeFileSync(out, participantsModule(list, { file: basename(file), url, date }));
  process.stdout.write(`${list.length} participants with a bank code written to ${out}\n`);
} catch (error) {
  process.stderr.write(`refresh-str-participants: ${(error as Error).message}\n`);
  process.exit(1);
}
