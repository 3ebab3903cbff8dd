import { efiDialect } from './efi.js';
import { standardDialect, type PixDialect } from './standard.js';

export const DIALECTS: Record<PixDialect['name'], PixDialect> = { standard: standardDialect, efi: efiDialect };
export const DIALECT_NAMES = Object.keys(DIALECTS) as Array<PixDialect['name']>;
export type { PixDialect };
