import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import type { Logger } from '../log';
import { isAlive, postmasterPid, runningEmbeddedServer, startEmbeddedServer, stopEmbeddedServer, type EmbeddedServer } from './embedded-postgres';

export interface Database {
  readonly pool: Pool;
  readonly url: string;
  /** Closes the pool and, for an embedded server, stops it. */
  close(): Promise<void>;
}

/**
 * Who opens the database. A gateway owns its DATA_DIR's embedded server: one gateway per
 * DATA_DIR. A tool (audit, projections:rebuild) attaches to the server a running gateway owns,
 * and starts one for its own run only when none runs.
 */
export type DatabaseRole = 'gateway' | 'tool';

/** Another live process owns the embedded database of this DATA_DIR. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/**
 * Connects to DATABASE_URL, or to the embedded PostgreSQL server under dataDir (created on first
 * start, kept between starts) so that a fresh clone runs with no database set up. A server that a
 * killed gateway left running is adopted; one that runs but does not answer is stopped and started
 * again.
 */
export async function openDatabase(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPort: number;
  logger: Logger;
  poolSize?: number;
  role: DatabaseRole;
}): Promise<Database> {
  if (options.databaseUrl) {
    const pool = createPool(options.databaseUrl, options.poolSize);
    return { pool, url: options.databaseUrl, close: () => pool.end() };
  }
  const dir = path.join(options.dataDir, 'postgres');
  const running = await runningEmbeddedServer(dir);
  if (running && options.role === 'tool') {
    const pool = createPool(running.url, options.poolSize);
    return { pool, url: running.url, close: () => pool.end() };
  }
  const release = claimDataDir(options.dataDir, options.role);
  let server: EmbeddedServer;
  try {
    if (running) {
      options.logger.info({ pid: running.pid, dir }, 'adopted the embedded PostgreSQL server a previous process left running');
      server = running;
    } else {
      const stuck = postmasterPid(dir);
      if (stuck !== null) {
        options.logger.warn({ pid: stuck, dir }, 'stopping an embedded PostgreSQL server that runs but does not answer');
        await stopEmbeddedServer(dir, stuck);
      }
      server = await startEmbeddedPostgres({ dir, port: options.embeddedPort, persistent: true, logger: options.logger });
    }
  } catch (err) {
    release();
    throw err;
  }
  const pool = createPool(server.url, options.poolSize);
  return {
    pool,
    url: server.url,
    async close() {
      await pool.end();
      await server.stop();
      release();
    },
  };
}

/**
 * How long a query waits for a connection (a new one to open, or a busy pool to free one) before
 * it fails: a database whose network drops packets answers nothing, and without a bound every
 * request would wait on it instead of answering 503 (src/db/unavailable.ts).
 */
export const CONNECT_TIMEOUT_MS = 10_000;

export function createPool(url: string, max = 20, connectTimeoutMs = CONNECT_TIMEOUT_MS, queryTimeoutMs?: number): Pool {
  // keepAlive: the kernel probes an idle connection, so one to a server that vanished is found dead.
  const pool = new Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: connectTimeoutMs, query_timeout: queryTimeoutMs, keepAlive: true });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on('error', () => undefined);
  // So does a checked-out client whose connection dies between two statements (the server stops
  // while a transaction waits on other work): the statements fail on their own, and the pool
  // discards the dead client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export type { EmbeddedServer };

/** An embedded server on `dir` (tests, benchmarks); `persistent: false` deletes it when stopped. */
export async function startEmbeddedPostgres(options: { dir: string; port: number; persistent: boolean; logger: Logger }): Promise<EmbeddedServer> {
  const port = options.port || (await freePort());
  const server = await startEmbeddedServer({ dir: options.dir, port, logger: options.logger });
  if (options.persistent) return server;
  return {
    ...server,
    async stop() {
      await server.stop();
      fs.rmSync(options.dir, { recursive: true, force: true });
    },
  };
}

interface OwnerRecord {
  readonly pid: number;
  /** /proc start time of that pid: a pid reused by another program after a reboot is not the owner. */
  readonly started: string | null;
  readonly role: DatabaseRole;
}

function ownerFile(dataDir: string): string {
  return path.join(dataDir, 'postgres.owner');
}

/**
 * Records this process as the owner of dataDir's embedded server, or refuses when another live
 * process owns it. Returns the release. Created exclusively, so two gateways starting at the
 * same moment cannot both win.
 */
function claimDataDir(dataDir: string, role: DatabaseRole): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = ownerFile(dataDir);
  const mine: OwnerRecord = { pid: process.pid, started: processStart(process.pid), role };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine) + '\n', { flag: 'wx' });
      return () => {
        if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(file);
    if (owner && owner.pid !== process.pid && isAlive(owner.pid) && (owner.started === null || owner.started === processStart(owner.pid))) {
      const what = owner.role === 'gateway' ? 'a running gateway' : 'a running tool (audit or projections:rebuild)';
      throw new DataDirInUseError(
        `DATA_DIR ${dataDir} is in use: its embedded PostgreSQL belongs to ${what}, process ${owner.pid}. ` +
          'Only one gateway runs per DATA_DIR. Stop that process first, or run two gateways on one external PostgreSQL: ' +
          'set the same DATABASE_URL=postgres://... for both (then they may also share DATA_DIR), or give the second its own DATA_DIR.',
      );
    }
    // The owner died (killed, or the machine restarted): its claim is void.
    fs.rmSync(file, { force: true });
  }
  throw new DataDirInUseError(`DATA_DIR ${dataDir}: another process claimed its embedded PostgreSQL at the same moment`);
}

function readOwner(file: string): OwnerRecord | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<OwnerRecord>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, started: parsed.started ?? null, role: parsed.role === 'tool' ? 'tool' : 'gateway' } : null;
  } catch {
    return null;
  }
}

function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after `(comm)`; the start time is field 22 overall, the 20th after the comm.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
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
