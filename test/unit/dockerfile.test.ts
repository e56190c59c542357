import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../..');

interface Stage {
  readonly from: string;
  readonly name: string | null;
  readonly instructions: { op: string; args: string }[];
}

/** The Dockerfile's stages and instructions (line continuations joined, comments dropped). */
function stages(): Stage[] {
  const text = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const out: Stage[] = [];
  for (const line of text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line)!;
    if (op!.toUpperCase() === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args!)!;
      out.push({ from: m[1]!, name: m[2] ?? null, instructions: [] });
    } else out[out.length - 1]!.instructions.push({ op: op!.toUpperCase(), args: args! });
  }
  return out;
}

/**
 * No Docker engine runs here, so the image is checked by what its Dockerfile says: a build stage
 * whose `npm ci` builds the dashboard (package.json's prepare script) and that compiles the
 * gateway, a final stage with both builds and no build tools, running as a non-root user that
 * owns /data.
 */
describe('the Dockerfile builds the dashboard and runs as a non-root user owning /data', () => {
  const [build, run] = stages();

  it('has a build stage whose npm ci builds web/dist, that compiles the gateway into dist, then drops the development dependencies', () => {
    expect(stages()).to.have.length(2);
    expect(build!.name).to.equal('build');
    const commands = build!.instructions.filter((i) => i.op === 'RUN').map((i) => i.args).join(' && ');
    expect(commands).to.match(/npm ci\b.*test -f web\/dist\/index\.html.*npm run build\s+&&\s+test -f dist\/src\/main\.js.*npm prune --omit=dev/);
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scripts.prepare).to.equal('npm run build:web');
    expect(scripts['build:web']).to.include('vite build');
    expect(scripts.build).to.include('tsconfig.build.json');
    const copied = build!.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copied).to.include.members(['web ./web', 'tsconfig.build.json ./', 'src ./src', 'projections ./projections', 'simulator ./simulator']);
  });

  it('copies the built dashboard and the pruned dependencies into the final stage, and only sources that exist', () => {
    const copies = run!.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies).to.include('--from=build /app/web/dist ./web/dist');
    expect(copies).to.include('--from=build /app/dist ./dist');
    // The compiled gateway reads its default catalog from the sources (src/billing/catalog.json).
    expect(copies).to.include('src ./src');
    expect(copies).to.include('--from=build /app/node_modules ./node_modules');
    for (const copy of [...build!.instructions, ...run!.instructions].filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) expect(existsSync(path.join(ROOT, source)), `COPY ${source}`).to.equal(true);
    }
    expect(run!.instructions.some((i) => i.op === 'RUN' && /\bnpm (ci|install)\b/.test(i.args)), 'no install in the final stage').to.equal(false);
  });

  it('runs as the unprivileged node user, which owns the data directory', () => {
    const ops = run!.instructions;
    const user = ops.findIndex((i) => i.op === 'USER');
    expect(ops[user]!.args).to.equal('node');
    const owns = ops.findIndex((i) => i.op === 'RUN' && /mkdir -p \/data && chown node:node \/data/.test(i.args));
    expect(owns, 'chown before USER').to.be.within(0, user - 1);
    expect(ops.find((i) => i.op === 'ENV')!.args).to.include('DATA_DIR=/data');
    expect(ops.find((i) => i.op === 'VOLUME')!.args).to.equal('/data');
  });

  it('runs the compiled gateway with the command of npm start, V8 heap settings included', () => {
    const cmd = run!.instructions.filter((i) => i.op === 'CMD');
    expect(cmd).to.have.length(1);
    // An ENTRYPOINT would run with the CMD as its arguments: the command would no longer be npm start's.
    expect(run!.instructions.map((i) => i.op), 'no ENTRYPOINT').to.not.include('ENTRYPOINT');
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
    // The script execs node, so that npm's child is the gateway itself (a signal sent to npm alone reaches it); the image runs the same node command.
    expect(scripts.start).to.match(/^exec node --max-old-space-size=\d+ --max-semi-space-size=\d+ dist\/src\/main\.js$/);
    expect(JSON.parse(cmd[0]!.args)).to.deep.equal(scripts.start!.replace(/^exec /, '').split(' '));
    // npm start compiles first, so that it never runs a build older than the sources.
    expect(scripts.prestart).to.equal('npm run -s build');
  });

  it('keeps the local build output out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).to.include.members(['node_modules', 'web/dist', 'dist']);
  });
});
