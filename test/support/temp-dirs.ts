import fs from 'node:fs';
import { tempDir } from '../../src/db/database';

const made = new Set<string>();

/** A fresh directory in the temporary folder that the end of the process removes. */
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

// In parallel runs each test file runs in a worker process, whose directories the main process
// never sees: each process removes its own when it exits.
process.once('exit', removeAllTestTempDirs);
