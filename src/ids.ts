import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Prefixed ids whose first part is the creation time, so ids sort by creation and cursor
 * pagination can use them directly: <prefix>_<12 hex ms timestamp><16 hex random>.
 */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`;
}

export { randomUUID };
