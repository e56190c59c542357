import { randomFillSync, randomUUID } from 'node:crypto';

/** Random bytes drawn 4 KiB at a time: one small randomBytes call per id cost more than the rest of making it. */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/**
 * Prefixed ids whose first part is the creation time, so ids sort by creation and cursor
 * pagination can use them directly: <prefix>_<12 hex ms timestamp><16 hex random>.
 */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, '0')}${randomHex(8)}`;
}

export { randomUUID };
