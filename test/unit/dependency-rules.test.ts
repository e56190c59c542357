import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { removeTestTempDir, testTempDir } from '../support/temp-dirs';

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** Runs the project's own dependency rules (the file `npm test` uses) over a tree of files. */
function cruise(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = testTempDir('depcruise-fixture-');
  fs.copyFileSync(CONFIG, path.join(dir, '.dependency-cruiser.cjs'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return new Promise((resolve) => {
    execFile(process.execPath, [DEPCRUISE, '--config', '.dependency-cruiser.cjs', 'src', 'simulator'], { cwd: dir }, (err, stdout, stderr) => {
      removeTestTempDir(dir);
      resolve({ code: err ? Number(err.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

/** A tiny gateway that keeps every rule: a root, a feature handed its deps, and the feature types. */
const LAYERED = {
  'src/feature-types.ts': 'export type Clock = () => Date;\n',
  'src/chat/feature.ts': "import type { Clock } from '../feature-types';\nexport const chat = (clock: Clock) => clock();\n",
  'src/gateway.ts': "import { chat } from './chat/feature';\nexport const start = () => chat(() => new Date());\n",
  'src/main.ts': "import { start } from './gateway';\nimport { sim } from '../simulator/index';\nstart();\nsim();\n",
  'simulator/index.ts': 'export const sim = () => 1;\n',
  // The transport, the wire types and a protocol adapter that uses them; a feature that goes through the adapter.
  'src/upstreams/wire.ts': 'export interface WireRequest { path: string }\n',
  'src/upstreams/channel.ts': "import type { WireRequest } from './wire';\nexport class Channel { call(r: WireRequest) { return r.path; } }\n",
  'src/upstreams/ark/video.ts': "import type { Channel } from '../channel';\nexport const create = (c: Channel) => c.call({ path: '/contents/generations/tasks' });\n",
  'src/video/kind.ts': "import { create } from '../upstreams/ark/video';\nexport const submit = create;\n",
  // A listed exception (the adapter helpers remove theirs) may still use the transport.
  'src/tasks/upstream-task.ts': "import type { Channel } from '../upstreams/channel';\nexport type C = Channel;\n",
};

/** The same tree with one breach of each rule. */
const BREACHES = {
  ...LAYERED,
  // A cycle made only of type imports.
  'src/chat/a.ts': "import type { B } from './b';\nexport interface A { b: B }\n",
  'src/chat/b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
  // The composition root imported from below it (type-only).
  'src/billing/metered.ts': "import type { start } from '../gateway';\nexport type S = typeof start;\n",
  // A feature imported by the feature types.
  'src/feature-types.ts': "import type { chat } from './chat/feature';\nexport type Chat = typeof chat;\nexport type Clock = () => Date;\n",
  // A feature imported by the HTTP layer.
  'src/http/app.ts': "import type { chat } from '../chat/feature';\nexport type Chat = typeof chat;\n",
  // The simulator imported by a module of src/ other than the entry point.
  'src/chat/sim.ts': "import { sim } from '../../simulator/index';\nexport const s = sim;\n",
  // Features that build wire requests on the transport themselves (a new offender, type-only included).
  'src/video/wire.ts': "import { Channel } from '../upstreams/channel';\nexport const poll = (c: Channel) => c.call({ path: '/x' });\n",
  'src/tasks/poll.ts': "import type { WireRequest } from '../upstreams/wire';\nexport type R = WireRequest;\n",
};

describe('the dependency rules (.dependency-cruiser.cjs, run by npm test)', function () {
  // Each tree is cruised by dependency-cruiser in a child process (both at once), which takes seconds on a busy machine.
  this.timeout(60_000);
  let layered: { code: number; output: string };
  let breached: { code: number; output: string };
  before(async () => {
    [layered, breached] = await Promise.all([cruise(LAYERED), cruise(BREACHES)]);
  });

  it('pass a layered tree', () => {
    expect(layered.output).to.match(/no dependency violations found/);
    expect(layered.code).to.equal(0);
  });

  it('fail the check when a rule is broken', () => {
    expect(breached.code).to.not.equal(0);
    expect(breached.output).to.match(/x \d+ dependency violations \(\d+ errors/);
  });

  it('report a cycle made only of type imports', () => {
    expect(breached.output).to.match(/error no-cycles: src\/chat\/(a|b)\.ts/);
  });

  it('report an import of the composition root from below it, type-only included', () => {
    expect(breached.output).to.include('error no-import-of-composition-root: src/billing/metered.ts → src/gateway.ts');
  });

  it('report a feature imported by the feature types', () => {
    expect(breached.output).to.include('error feature-types-know-no-feature: src/feature-types.ts → src/chat/feature.ts');
  });

  it('report a feature imported by the HTTP layer', () => {
    expect(breached.output).to.include('error http-knows-no-feature: src/http/app.ts → src/chat/feature.ts');
  });

  it('report a feature (or the task engine) importing the transport or the wire types instead of going through a protocol adapter', () => {
    expect(breached.output).to.include('error features-use-protocol-adapters: src/video/wire.ts → src/upstreams/channel.ts');
    expect(breached.output).to.include('error features-use-protocol-adapters: src/tasks/poll.ts → src/upstreams/wire.ts');
    expect(breached.output).not.to.include('src/video/kind.ts →');
    expect(breached.output).not.to.include('src/tasks/upstream-task.ts →');
  });

  it('report an import of the simulator anywhere in src/ but the entry point', () => {
    expect(breached.output).to.include('error no-simulator-in-src: src/chat/sim.ts → simulator/index.ts');
  });
});
