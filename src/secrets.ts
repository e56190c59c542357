import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * A secret from the environment, or else one kept in DATA_DIR/<file>, generated the first time it
 * is needed. `onGenerated` sees a new secret once (the admin token is printed to the console,
 * never to the redacted log).
 */
export function persistentSecret(configured: string | undefined, dataDir: string, file: string, prefix: string, onGenerated?: (secret: string, file: string) => void): string {
  if (configured) return configured;
  const target = path.join(dataDir, file);
  if (fs.existsSync(target)) return fs.readFileSync(target, 'utf8').trim();
  const secret = prefix + randomBytes(24).toString('base64url');
  fs.mkdirSync(dataDir, { recursive: true });
  // Gateways sharing a data volume may start together: the secret is written whole to a file of
  // this process's own, then linked into place, which fails if another process got there first.
  // The first one wins and every process uses it.
  const draft = `${target}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(draft, secret + '\n', { mode: 0o600 });
  try {
    fs.linkSync(draft, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return fs.readFileSync(target, 'utf8').trim();
  } finally {
    fs.rmSync(draft, { force: true });
  }
  onGenerated?.(secret, target);
  return secret;
}

/** ADMIN_TOKEN, or the one generated at first start and printed once. */
export function resolveAdminToken(configured: string | undefined, dataDir: string, print: (line: string) => void): string {
  return persistentSecret(configured, dataDir, 'admin-token', 'adm_', (token, file) => print(`Generated admin token (kept in ${file}; shown this once): ${token}`));
}
