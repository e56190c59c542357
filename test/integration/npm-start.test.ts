import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens, countTokens } from '../../src/billing/tokens';
import { chatPricing } from '../../src/chat/model-type';
import { tempDir } from '../../src/db/database';
import { postmasterPid } from '../../src/db/embedded-postgres';
import { waitFor } from '../support/wait';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const ADMIN_TOKEN = 'npm-start-test-admin-token';
const ROOT = path.resolve(__dirname, '../..');

/** `npm start` (or another script) as a user runs it: its own process group, like a terminal's foreground job. */
class NpmProcess {
  readonly child: ChildProcess;
  private output = '';
  readonly exited: Promise<number | null>;
  /** Every process of the group that writes to this output (npm, the gateway) has ended. */
  readonly finished: Promise<void>;

  constructor(dataDir: string, script: string[] = ['start'], env: Record<string, string> = {}) {
    this.child = spawn('npm', script, {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        RECONCILE_INTERVAL_MS: '3600000',
        SHUTDOWN_GRACE_MS: '1000',
        ...env,
      },
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.finished = Promise.all([
      new Promise((resolve) => this.child.stdout!.once('close', resolve)),
      new Promise((resolve) => this.child.stderr!.once('close', resolve)),
    ]).then(() => undefined);
  }

  get log(): string {
    return this.output;
  }

  /** The JSON log lines with this message. */
  lines(msg: string): Record<string, unknown>[] {
    return this.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === msg);
  }

  /** The gateway's URL and process id once it logs that it listens. */
  async listening(): Promise<{ url: string; pid: number }> {
    const line = await waitFor(
      'the gateway to listen',
      async () => {
        if (this.child.exitCode !== null) throw new Error(`npm start exited with ${this.child.exitCode}:\n${this.output}`);
        return this.lines('gateway listening')[0];
      },
      120_000,
      100,
    );
    return { url: line.url as string, pid: line.pid as number };
  }

  /**
   * Ctrl-C: SIGINT to the whole group, as a terminal sends it to its foreground job. npm itself
   * dies of it at once; the gateway below it drains and stops: wait for it, and for its last line.
   */
  async interrupt(): Promise<void> {
    this.signalGroup('SIGINT');
    await this.finished;
    expect(this.lines('gateway stopped'), `the gateway stopped cleanly:\n${this.output}`).to.have.length(1);
  }

  /** A signal to the whole process group, as a terminal sends Ctrl-C (SIGINT) to its foreground job. */
  signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.child.pid!, signal);
    } catch {
      // already gone
    }
  }
}

describe('npm start with the embedded database @integration', function () {
  this.timeout(300_000);
  let dataDir: string;
  const started: NpmProcess[] = [];

  function npmStart(env: Record<string, string> = {}): NpmProcess {
    const gateway = new NpmProcess(dataDir, ['start'], env);
    started.push(gateway);
    return gateway;
  }

  beforeEach(() => {
    dataDir = tempDir('gateway-npm-start-');
    // As root the embedded server runs as the `postgres` user, which must reach its directory.
    fs.chmodSync(dataDir, 0o755);
  });

  afterEach(async () => {
    for (const p of started.splice(0)) {
      p.signalGroup('SIGKILL');
      await p.finished;
    }
    // A server left behind by a killed gateway: stop it before deleting its directory.
    const pid = postmasterPid(path.join(dataDir, 'postgres'));
    if (pid !== null) {
      process.kill(pid, 'SIGQUIT');
      await waitFor('the leftover PostgreSQL to stop', async () => postmasterPid(path.join(dataDir, 'postgres')) === null, 30_000, 50);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function admin(url: string, method: string, route: string, body?: unknown): Promise<any> {
    const res = await fetch(url + route, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${method} ${route}`).to.be.lessThan(300);
    return res.json();
  }

  async function fundedKey(url: string, amount: number): Promise<string> {
    const account = await admin(url, 'POST', '/admin/v1/accounts', { name: 'npm start test' });
    await admin(url, 'POST', `/admin/v1/accounts/${account.id}/credits`, { amount, reference: 'npm-start-test' });
    return (await admin(url, 'POST', `/admin/v1/accounts/${account.id}/keys`, {})).key as string;
  }

  async function balance(url: string, key: string): Promise<{ available: number; frozen: number }> {
    const res = await fetch(`${url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { balance: { available: number; frozen: number } }).balance;
  }

  /**
   * Ctrl-C while the gateway's event loop is busy: stopped (SIGSTOP) when the group gets SIGINT,
   * and continued half a second later. A process between npm and the gateway that relays signals
   * and kills a child that does not acknowledge one within a few milliseconds (the tsx command
   * does: it sends the signal again after 30 ms, and SIGKILL 30 ms later) would kill it in that
   * half second, on a loaded machine even without the stop; the gateway must get the signal
   * itself and drain.
   */
  async function interruptWhileBusy(npm: NpmProcess): Promise<void> {
    const [{ pid }] = npm.lines('gateway listening') as [{ pid: number }];
    process.kill(pid, 'SIGSTOP');
    try {
      npm.signalGroup('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  }

  it('Ctrl-C mid-stream: the database outlives the drain, the delivered tokens are settled, nothing stays frozen', async () => {
    const first = npmStart();
    const { url } = await first.listening();
    const key = await fundedKey(url, 1_000_000);

    // A stream that sends two tokens and then stalls (the upstream deadline is a minute away):
    // only the shutdown's grace period ends it.
    const messages = [{ role: 'user' as const, content: 'Keep going [sim:stall]' }];
    const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat-fast', messages, stream: true });
    let text = '';
    let interrupted = false;
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (!interrupted && text.trim().split(/\s+/).length >= 2) {
          interrupted = true;
          await interruptWhileBusy(first);
        }
      }
    } catch {
      // The gateway closes the connection when the grace period is over.
    }
    expect(interrupted, 'two tokens arrived before the interrupt').to.equal(true);
    await first.finished;
    expect(first.lines('gateway stopped'), `the gateway stopped cleanly:\n${first.log}`).to.have.length(1);
    expect(first.log, 'the database was not stopped under the draining gateway').not.to.match(/terminating connection due to administrator command|job claims failing|lease acquisition failing|ECONNREFUSED/);
    expect(first.lines('shutdown grace period over: closing the connections of the requests still running')).to.have.length(1);
    expect(postmasterPid(path.join(dataDir, 'postgres')), 'the gateway stopped its database last').to.equal(null);

    const second = npmStart();
    const again = await second.listening();
    expect(second.lines('adopted the embedded PostgreSQL server a previous process left running')).to.have.length(0);
    const fast = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES).get('chat-fast')!;
    // Counted as the gateway counts a stream without usage: with the model's tokenizer.
    const delivered = tokenCharge(chatPricing(fast), countMessageTokens(messages, fast.tokenizer), countTokens(text, fast.tokenizer));
    expect(await balance(again.url, key), 'the two delivered tokens were charged, and no reservation is left').to.include({ available: 1_000_000 - delivered, frozen: 0 });

    // The audit CLI attaches to the running gateway's database and finds the ledger in order.
    const audit = new NpmProcess(dataDir, ['run', 'audit']);
    started.push(audit);
    await audit.finished;
    expect(await audit.exited, audit.log).to.equal(0);
    expect(audit.log).to.include('"ok": true');
    expect(await balance(again.url, key), 'the audit left the gateway and its database running').to.include({ frozen: 0 });
    expect(postmasterPid(path.join(dataDir, 'postgres'))).to.not.equal(null);

    await second.interrupt();
  });

  it('SIGKILL: the next start adopts the database the killed gateway left running, on the same data; a second gateway is refused', async () => {
    const first = npmStart();
    const { url } = await first.listening();
    const key = await fundedKey(url, 500_000);
    first.signalGroup('SIGKILL');
    await first.finished;
    const orphan = postmasterPid(path.join(dataDir, 'postgres'));
    expect(orphan, 'the database runs in its own session: a kill of the gateway group does not reach it').to.not.equal(null);

    const second = npmStart();
    const again = await second.listening();
    expect(second.lines('adopted the embedded PostgreSQL server a previous process left running')[0]).to.include({ pid: orphan });
    expect(await balance(again.url, key)).to.include({ available: 500_000, frozen: 0 });
    const ready = await fetch(`${again.url}/readyz`);
    expect(ready.status).to.equal(200);
    expect(await ready.json()).to.deep.equal({ status: 'ready' });
    // npm start runs the compiled gateway (dist/), which finds the built dashboard beside the package.
    const command = fs.readFileSync(`/proc/${again.pid}/cmdline`, 'utf8').split('\0');
    expect(command).to.include('dist/src/main.js').and.not.include('src/main.ts');
    const page = await fetch(`${again.url}/dashboard`);
    expect(page.status, await page.clone().text()).to.equal(200);
    expect(page.headers.get('content-type')).to.include('text/html');

    const third = npmStart();
    await third.finished;
    expect(await third.exited, 'a second gateway on the same DATA_DIR is refused').to.equal(1);
    expect(third.log).to.include(`process ${again.pid}`).and.include('DATABASE_URL').and.include('Only one gateway runs per DATA_DIR');
    expect(third.log, 'the refusal is a message, not a stack trace').not.to.match(/\n\s+at /);
    expect((await fetch(`${again.url}/readyz`)).status, 'the refused start left the running gateway alone').to.equal(200);

    await second.interrupt();
    expect(postmasterPid(path.join(dataDir, 'postgres')), 'the adopted database is stopped with its new owner').to.equal(null);
  });

  it('SIGTERM to npm alone, as a supervisor sends it, reaches the gateway: it stops cleanly, and its database with it', async () => {
    const npm = npmStart();
    const { pid } = await npm.listening();
    // The start script execs node: with a shell between them, npm's SIGTERM ended the shell and
    // left the gateway running without it.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect(parent, 'the gateway is npm\'s own child').to.equal(npm.child.pid);
    process.kill(npm.child.pid!, 'SIGTERM');
    await npm.finished;
    expect(npm.lines('gateway stopped'), `the gateway stopped cleanly:\n${npm.log}`).to.have.length(1);
    expect(postmasterPid(path.join(dataDir, 'postgres')), 'the embedded database is stopped with it').to.equal(null);
  });

  it('a start that fails (its port is taken) leaves no embedded server and no claim on the DATA_DIR behind', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const failed = npmStart({ PORT: String((taken.address() as AddressInfo).port) });
      await failed.finished;
      expect(await failed.exited, failed.log).to.equal(1);
      expect(failed.log).to.include('EADDRINUSE');
      expect(failed.lines('embedded PostgreSQL started'), 'the database was started before the port was tried').to.have.length(1);
      expect(postmasterPid(path.join(dataDir, 'postgres')), 'and stopped again').to.equal(null);
      expect(fs.existsSync(path.join(dataDir, 'postgres.owner')), 'the claim on the DATA_DIR is released').to.equal(false);
    } finally {
      taken.close();
    }
  });
});
