import fs from 'node:fs';
import { tempDir } from '../../src/db/database';

const made = new Set<string>();

/** A fresh directory in the temporary folder that the end of the test run removes (global-fixture.ts). */
export function testTempDir(prefix: string): string {
  const dir = tempDir(prefix);
  made.add(dir);
  return dir;
}

/** Removes a directory made by testTempDir now (a test done with it); the end of the run does the rest. */
export function removeTestTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
}

export function removeAllTestTempDirs(): void {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
}
