import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_FILE, generatedTypes, serverDocument } from './openapi.js';

const text = await generatedTypes(await serverDocument());
writeFileSync(GENERATED_FILE, text);
console.log(`wrote ${fileURLToPath(GENERATED_FILE)} (${text.length} chars)`);
